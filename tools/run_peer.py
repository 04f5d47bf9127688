"""Run a peer's own script, unchanged, from a copy of its code, and count the cells equal to sdeformer's preset at
the same options (docs/peers.md, "Running the peer's own script"). A repository tool, not part of the wheel: it
runs third-party code, so it checks DIR's files against the snapshot's hashes recorded in docs/peers.md, announces
each run, and runs it in its own process group under a time limit (``peer_harness/process.py``).

    python tools/run_peer.py NAME DIR [--timeout S] [--max-iter N] [--unverified] [--json] [the preset's options]

The preset's options are those of ``sdeformer peer NAME`` (``--beta`` repeatable; ``--part``, ``--batch``, ...).
Errors: one line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from peer_harness.jobs import check, described, jobs
from peer_harness.process import announce, run_script, verify

from sdeformer import peers
from sdeformer.core._errors import ConfigError
from sdeformer.peers._options import PEER_OPTIONS

FLAGS = ("as_published", "sequential", "use_softmax", "no_softmax", "rawstep", "adjacent", "plotdim", "cluster_sizes")
FLAGS += ("analyze_evecs",)
VALUES = {"part": str, "scheme": str, "norm": str, "seed": int, "points": int, "heads": int, "random_kq": int}
VALUES |= {k: int for k in ("random_v", "noanneal", "batch", "tokens", "dim", "betas", "checkpoints")}
VALUES |= {k: float for k in ("betamin", "betamax", "maxtime", "step", "regen_period")}


def run_peer(name, folder, max_iter=None, timeout=None, verified=True, **options) -> dict:
    """The preset's result at ``options`` (``peers.run(name, ...)``), with ``compare``: its cells equal / total
    against the files the peer's script in ``folder`` writes when run at the same options (summed over the files,
    each also under ``files``), and ``peer_runs``: each run (``described``) and its wall seconds."""
    folder = Path(folder)
    peers.module(name)  # the name checked before the folder
    if not folder.is_dir():
        raise ConfigError("DIR", str(folder), f"a folder with a copy of {name}'s code (not a folder)")
    if timeout is not None and not timeout > 0:
        raise ConfigError("timeout", timeout, "a positive number of seconds")
    options = {k: v for k, v in options.items() if v is not None}
    for key, value in options.items():
        if key != "beta" and key not in PEER_OPTIONS[name]:
            raise ConfigError(key, value, f"not an option of {name}")
    check(name, folder, options, max_iter)
    if verified:
        verify(name, folder)
    result = peers.run(name, **options)  # a part the preset refuses raises here
    files, runs = [], []
    for job in jobs(name, result, options, max_iter):
        announce(folder, job, timeout)
        with tempfile.TemporaryDirectory(prefix=f"sdeformer-{name}-", ignore_cleanup_errors=True) as scratch:
            seconds = run_script(folder, job, Path(scratch), timeout)
            runs.append({"run": described(job), "seconds": seconds})
            for pattern, ours in job.outputs:
                found = [Path(scratch) / "stdout.txt"] if pattern == "stdout" else sorted(Path(scratch).glob(pattern))
                if len(found) != 1:
                    raise ConfigError("DIR", str(folder), f"{job.spec['script']} wrote {len(found)} files {pattern}")
                files.append({"file": found[0].name, **peers.compare(name, ours, found[0])})
    total = {k: sum(f[k] for f in files) for k in ("equal", "total")}
    result["compare"] = {**total, "max_diff": max(f["max_diff"] for f in files), "files": files}
    result["peer_runs"] = runs
    return result


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python tools/run_peer.py", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("name", help="litm, dotm, bruno, simuformer or glpr")
    p.add_argument("folder", metavar="DIR", help="a copy of the peer's code at the snapshot docs/peers.md names")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per run of the script [3600]")
    p.add_argument("--max-iter", type=int, help="dotm staircase: its script's steps per beta [1e6]")
    p.add_argument("--unverified", action="store_true", help="run files that differ from the recorded snapshot")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--beta", type=float, action="append", help="beta (repeat for several)")
    for key in FLAGS:
        p.add_argument(f"--{key.replace('_', '-')}", dest=key, action="store_true")
    for key, kind in VALUES.items():
        p.add_argument(f"--{key.replace('_', '-')}", dest=key, type=kind)
    return p


def main(argv: list[str] | None = None) -> int:
    args = vars(parser().parse_args(argv))
    name, folder, as_json = args.pop("name"), args.pop("folder"), args.pop("json")
    fixed = {k: args.pop(k) for k in ("max_iter", "timeout")}
    verified = not args.pop("unverified")
    options = {k: v for k, v in args.items() if v is not None and v is not False}
    try:
        result = run_peer(name, folder, verified=verified, **fixed, **options)
    except ConfigError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(peers.printable(result)))
        return 0
    for r in result["peer_runs"]:
        print(f"the peer's run ({r['seconds']:.1f} s): {r['run']}")
    for f in result["compare"]["files"]:
        print(f"{f['file']}: {f['equal']} / {f['total']}")
    c = result["compare"]
    print(f"cells equal: {c['equal']} / {c['total']}, largest difference {c['max_diff']:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
