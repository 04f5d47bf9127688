"""The shared base of the typed experiment results (DESIGN: outputs).

Every experiment returns a frozen dataclass derived from ``Result``; ``to_json()`` is the JSON object its
``run_and_write`` writes and its command prints with ``--json``. Large arrays stay out of it (they go to .npz).
``cached_stage`` keeps one stage of a longer check as a JSON part, so that a rerun of a finished folder (or one
interrupted between stages) recomputes only what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from ..io._damage import intact, recover
from ..io._formats import read_json, to_jsonable, write_json
from ..io._hashing import config_hash


@dataclass(frozen=True)
class Result:
    """Base of the results. ``JSON_KEYS`` names the fields and properties of ``to_json()`` (empty: all fields)."""

    JSON_KEYS: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (tensors and arrays as lists, nested results as their ``to_json()``)."""
        keys = self.JSON_KEYS or tuple(f.name for f in fields(self))
        return {k: to_jsonable(getattr(self, k)) for k in keys}


def read_cached_json(path: Path, key: Any) -> dict[str, Any] | None:
    """The JSON object at ``path`` if ``write_cached_json`` wrote it for this ``key`` (same config hash), else None:
    a rerun with the same settings reuses a finished check, other settings never do; a file that fails its
    checksum or is not JSON is moved into ``damaged/`` beside it."""
    try:
        data = recover(path, read_json)  # a damaged file is moved aside (one line) and recomputed
    except OSError:
        return None
    return data if isinstance(data, dict) and data.get("config_hash") == config_hash(key) else None


def write_cached_json(path: Path, key: Any, result: Result) -> None:
    """``result.to_json()`` with the hash of ``key`` (the check's full settings) beside it, written atomically."""
    write_json(path, {**result.to_json(), "config_hash": config_hash(key)}, checksum=True)


def cached_stage(folder: Path, key: Any, name: str, compute: Callable[[], Any], needs: Sequence[Path] = ()) -> Any:
    """The JSON form (``io._formats.to_jsonable``) of ``compute()``, kept in ``folder/NAME.json`` with the hash of
    ``key`` and ``name``: read back when that part was written for the same key and every file of ``needs`` (the
    stage's own outputs) exists and passes its checksum, else computed and written (atomically, with its sha256)
    before it is returned."""
    path, full = Path(folder) / f"{name}.json", {"stage": name, "key": key}
    held = read_cached_json(path, full)
    if held is not None and "value" in held and all(intact(p) for p in needs):
        return held["value"]
    value = to_jsonable(compute())
    write_json(path, {"value": value, "config_hash": config_hash(full)}, checksum=True)
    return value
