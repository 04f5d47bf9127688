"""Cross-references in docstrings and docs: every ``package.module[.name]`` of sdeformer named in backticks resolves
(a module, or an attribute or field of one), so that moving or renaming a module breaks this test, not the reader.
File names (``spde.json``), config keys (``noise.su``, ``noise.fraction``) and a part's ``params.NAME`` are not
references and are skipped."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from sdeformer.params import ALIASES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    p.stem for p in (ROOT / "src" / "sdeformer").iterdir() if (p.is_dir() or p.suffix == ".py") and p.stem[0] != "_"
}
REFERENCE = re.compile(r"`{1,2}((?:sdeformer\.)?[a-z_]+(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?`{1,2}")
FILE_SUFFIXES = {"json", "py", "npz", "png", "ipynb", "csv", "parquet", "html", "yaml", "toml", "md", "txt", "npy"}
CONFIG_KEYS = {"fraction", "shift", "gain", "NAME"} | {key.partition(".")[2] for key in ALIASES}  # KIND.NAME keys
NOT_OURS = ("attention.output", "attention.attn")  # Hugging Face module paths (docs/real.md)


def _resolves(name: str) -> bool:
    parts = name.split(".")
    parts = parts if parts[0] == "sdeformer" else ["sdeformer", *parts]
    for i in range(len(parts), 1, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if attr in getattr(obj, "__dataclass_fields__", {}) or attr in getattr(obj, "__annotations__", {}):
                return True  # a field: not an attribute of the class itself
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _references() -> list[tuple[str, str]]:
    found = []
    for path in [*(ROOT / "src" / "sdeformer").rglob("*.py"), *(ROOT / "docs").rglob("*.md")]:
        for match in REFERENCE.finditer(path.read_text(encoding="utf-8")):
            name = match.group(1)
            parts = name.removeprefix("sdeformer.").split(".")
            if parts[0] not in PACKAGES or parts[-1] in FILE_SUFFIXES or parts[0] == "params" and len(parts) == 2:
                continue
            if parts[-1] in CONFIG_KEYS or name.startswith(NOT_OURS):
                continue
            found.append((str(path.relative_to(ROOT)), name))
    return found


def test_every_module_reference_resolves():
    refs = _references()
    assert len(refs) > 200  # the scan sees the references (a broken pattern would find none)
    broken = [f"{where}: {name}" for where, name in refs if not _resolves(name)]
    assert not broken, "references to modules or names that do not exist:\n" + "\n".join(broken)
