"""The shared base of the typed experiment results (DESIGN: outputs).

Every experiment returns a frozen dataclass derived from ``Result``; ``to_json()`` is the JSON object its
``run_and_write`` writes and its command prints with ``--json``. Large arrays stay out of it (they go to .npz).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from ..io.store import config_hash, to_jsonable, write_json


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
    a rerun with the same settings reuses a finished check, other settings never do."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("config_hash") == config_hash(key) else None


def write_cached_json(path: Path, key: Any, result: Result) -> None:
    """``result.to_json()`` with the hash of ``key`` (the check's full settings) beside it, written atomically."""
    write_json(path, {**result.to_json(), "config_hash": config_hash(key)})
