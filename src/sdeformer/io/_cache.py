"""Cached results keyed by their config (``io.store``): arrays written with the config's hash and their
checksum, read back only for the same config; a damaged one is moved aside and recomputed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ._checksums import Damaged, move_aside
from ._claims import config_hash
from ._formats import read_npz, write_npz


def read_cached_npz(path: str | Path, config: Any) -> dict[str, np.ndarray] | None:
    """The arrays of ``path`` if it was written by ``write_cached_npz`` for this ``config`` (same
    ``config_hash``), else None: a partial or complete result of another config is never reused, and a damaged
    part (checksum, zip or CRC failure, truncation) is moved aside (``move_aside`` into the folder's
    ``damaged/``) so that it is recomputed."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        arrays = read_npz(path)
    except Damaged as damage:
        move_aside(damage, path.parent)
        return None
    except OSError:  # unreadable (permissions): recompute; writing the result says why if it cannot
        return None
    return arrays if str(arrays.get("config_hash")) == config_hash(config) else None


def write_cached_npz(path: str | Path, config: Any, **arrays: Any) -> Path:
    """``write_npz`` with the config's hash stored beside the arrays (read back by ``read_cached_npz``) and the
    file's sha256 in its checksum file."""
    return write_npz(path, checksum=True, **arrays, config_hash=np.array(config_hash(config)))
