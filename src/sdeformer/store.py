"""Run directories and atomic writes (DESIGN: outputs).

Every write goes to a temporary file in the target folder, then ``os.replace`` renames it: a reader
never sees half a file, and an interrupted run leaves the previous version intact.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + rename). Creates parent folders."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; results are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def to_jsonable(obj: Any) -> Any:
    """Plain-JSON form of configs and results: typed results their ``to_json()``, tensors/arrays lists, paths
    strings."""
    if hasattr(obj, "to_json"):
        return obj.to_json()
    if hasattr(obj, "detach"):
        obj = obj.detach().cpu().numpy()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer, np.bool_)):
        return obj.item()
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    return obj


def write_json(path: str | Path, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n")


def write_csv(path: str | Path, rows: Iterable[Mapping[str, Any]], columns: list[str]) -> Path:
    """Tidy CSV with the given column order."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: to_jsonable(row[c]) for c in columns})
    return atomic_write_text(path, buf.getvalue())


def write_npz(path: str | Path, **arrays: Any) -> Path:
    """Arrays as ``.npz`` (never pickle)."""
    buf = io.BytesIO()
    plain: dict[str, Any] = {
        k: v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v) for k, v in arrays.items()
    }
    np.savez_compressed(buf, allow_pickle=False, **plain)
    return atomic_write_bytes(path, buf.getvalue())


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def config_hash(config: Any) -> str:
    """Short stable hash of a config: the key of a cached result."""
    blob = json.dumps(to_jsonable(config), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def write_run_metadata(folder: str | Path, config: Mapping[str, Any], seed: Any) -> Path:
    """``config.json`` with the resolved config, seed and package version."""
    from . import __version__

    return write_json(Path(folder) / "config.json", {"config": config, "seed": seed, "version": __version__})
