"""Cached arrays keyed by their config (DESIGN: outputs): ``write_cached_npz`` stores the config's hash beside the
arrays, with the file's sha256; ``read_cached_npz`` returns them only for the same config, and moves a damaged
file aside (``damage.recover``) so that it is recomputed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ._damage import recover
from ._formats import read_npz, write_npz
from ._hashing import config_hash


def read_cached_npz(path: str | Path, config: Any) -> dict[str, np.ndarray] | None:
    """The arrays of ``path`` if it was written by ``write_cached_npz`` for this ``config`` (same
    ``config_hash``), else None: a partial or complete result of another config is never reused, and a damaged
    file (checksum, zip or CRC failure, truncation) is moved into the folder's ``damaged/`` so that it is
    recomputed."""
    try:
        arrays = recover(path, read_npz)
    except OSError:  # unreadable (permissions): recompute; writing the result says why if it cannot
        return None
    return arrays if arrays is not None and str(arrays.get("config_hash")) == config_hash(config) else None


def write_cached_npz(path: str | Path, config: Any, **arrays: Any) -> Path:
    """``write_npz`` with the config's hash stored beside the arrays (read back by ``read_cached_npz``) and the
    file's sha256 in its checksum file."""
    return write_npz(path, checksum=True, **arrays, config_hash=np.array(config_hash(config)))
