"""Atomic writes (``io.store``): every write goes to a temporary file in the target folder, then ``os.replace``
renames it, so a reader never sees half a file and an interrupted run leaves the previous version intact."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from ._checksums import checksum_path


def atomic_write_bytes(path: str | Path, data: bytes, checksum: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + rename). Creates parent folders. ``checksum``: write
    its sha256 file first (``checksum_path``), so that a part on disk always has the checksum it was written
    with."""
    path = Path(path)
    if checksum:
        atomic_write_text(checksum_path(path), f"{hashlib.sha256(data).hexdigest()}  ../{path.name}\n")
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
