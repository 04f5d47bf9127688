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
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:  # name the user's path, not the temporary file
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; results are meant to be shared
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
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
    from .. import __version__

    return write_json(Path(folder) / "config.json", {"config": config, "seed": seed, "version": __version__})


RUN_MARKER = "run.json"  # {"config_hash", "config"}: ties a run folder to one config


def ensure_writable(folder: str | Path, name: str = "out") -> Path:
    """Create ``folder`` if needed and check a file can be written there, before any work starts.

    Raises ConfigError naming ``name`` and the user's path when it cannot."""
    from ..core.errors import ConfigError

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError(name, str(folder), f"cannot write there ({exc.strerror or exc})") from None
    return folder


def claim_run_folder(
    folder: str | Path, config: Any, *, force: bool = False, name: str = "out", marker_name: str = RUN_MARKER
) -> bool:
    """Tie ``folder`` to ``config`` (by ``config_hash``) before a run writes into it; True when the folder already
    belongs to this config (resume), False when it is new (or ``force`` takes it over).

    A folder holding another config's run raises ConfigError unless ``force``; so does one holding files but no
    marker, when the marker is the default ``run.json`` (a command with its own ``marker_name`` shares its folder
    with other commands' outputs, e.g. ``results/`` of ``reproduce`` and ``results/practice``)."""
    from ..core.errors import ConfigError

    folder = ensure_writable(folder, name)
    key, marker = config_hash(config), folder / marker_name
    if marker.exists():
        try:
            held = json.loads(marker.read_text(encoding="utf-8")).get("config_hash")
        except (ValueError, AttributeError, OSError):
            held = None
        if held == key:
            return True
        if not force:
            raise ConfigError(
                name,
                str(folder),
                f"holds a run of another config ({held}, this one {key}); "
                "pass --force to overwrite it, or choose another folder",
            )
    elif marker_name == RUN_MARKER and any(p.name != RUN_MARKER for p in folder.iterdir()) and not force:
        raise ConfigError(name, str(folder), "is not empty and holds no sdeformer run; pass --force to write there")
    write_json(marker, {"config_hash": key, "config": config})
    return False


def read_cached_npz(path: str | Path, config: Any) -> dict[str, np.ndarray] | None:
    """The arrays of ``path`` if it was written by ``write_cached_npz`` for this ``config`` (same
    ``config_hash``), else None: a partial or complete result of another config is never reused."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        arrays = read_npz(path)
    except (OSError, ValueError):  # a truncated or foreign file: recompute
        return None
    return arrays if str(arrays.get("config_hash")) == config_hash(config) else None


def write_cached_npz(path: str | Path, config: Any, **arrays: Any) -> Path:
    """``write_npz`` with the config's hash stored beside the arrays (read back by ``read_cached_npz``)."""
    return write_npz(path, **arrays, config_hash=np.array(config_hash(config)))
