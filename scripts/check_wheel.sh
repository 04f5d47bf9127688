#!/usr/bin/env bash
# Build check (`make wheel-check`): build the wheel and sdist into a temporary folder, install the wheel into a
# fresh venv (dependencies resolved normally, torch pinned by constraints.txt so the local CPU wheel is taken),
# run the installed command, and check what the archives hold: the wheel only the sdeformer package (with
# py.typed), no benchmarks (they stay in the checkout's benchmarks/), peer harness, tests, docs or examples; the sdist no results, venvs or built site.
# About 70 s on 2 busy cores with a warm pip cache (torch installs from a local wheel); run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
BUILD_PY=${BUILD_PY:-.venv/bin/python}   # a Python with `build` (installed here when missing)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS

"$BUILD_PY" -c "import build" 2>/dev/null || "$BUILD_PY" -m pip install -q 'build>=1.2'
"$BUILD_PY" -m build --outdir "$tmp/dist" . > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
wheel=$(ls "$tmp"/dist/*.whl)
sdist=$(ls "$tmp"/dist/*.tar.gz)
echo "built $(basename "$wheel") and $(basename "$sdist")"

"$BUILD_PY" - "$wheel" "$sdist" <<'PY'
import sys, tarfile, zipfile
wheel, sdist = sys.argv[1], sys.argv[2]
names = zipfile.ZipFile(wheel).namelist()
top = {n.split("/")[0] for n in names}
bad = [t for t in top if t != "sdeformer" and not t.endswith(".dist-info")]
assert not bad, f"wheel holds more than the sdeformer package: {sorted(bad)}"
assert "sdeformer/py.typed" in names, "py.typed missing from the wheel"
assert not any(p in n for n in names for p in ("benchmarks/", "tests/", "docs/", "examples/")), "wheel holds non-package files"
assert not any(n.startswith("sdeformer/bench/") for n in names), "the benchmarks are in the wheel"
assert not any(n.startswith("sdeformer/peers/_") and n.endswith(("_shim.py", "_run_script.py")) for n in names), "the peer-script harness (tools/) in the wheel"
members = tarfile.open(sdist).getnames()
forbidden = (".venv/", "/results/", "/site/", "__pycache__", ".pytest_cache", ".ruff_cache", ".git/", ".npz")
bad = [m for m in members if any(f in m for f in forbidden)]
assert not bad, f"sdist holds build or run artefacts: {bad[:10]}"
print(f"wheel: {len(names)} files, top level {sorted(top)}; sdist: {len(members)} members")
PY

"$PYTHON" -m venv "$tmp/venv"
{ "$tmp/venv/bin/python" -m pip install -q --upgrade pip &&
  "$tmp/venv/bin/python" -m pip install -q -c constraints.txt "$wheel"; } > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; exit 1; }
(cd "$tmp" && "$tmp/venv/bin/sdeformer" kernel --json > kernel.json && "$tmp/venv/bin/python" -c \
  "import json, sdeformer; d = json.load(open('kernel.json')); print('sdeformer', sdeformer.__version__, 'kernel --json:', sorted(d)[:6], '...')")
echo "wheel check passed in $((SECONDS - start)) s"
