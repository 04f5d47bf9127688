"""Atomic writes (DESIGN: outputs).

Every write goes to a temporary file in the target folder, then ``os.replace`` renames it: a reader never sees
half a file, and an interrupted run leaves the previous version intact. With ``checksum`` the file's sha256
(``checksums.checksum_path``) is written first, so that a file on disk always has the checksum it was written
with. ``ensure_writable`` checks a folder before any work starts.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ._checksums import checksum_line, checksum_path


def atomic_write_bytes(path: str | Path, data: bytes, checksum: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + rename). Creates parent folders. ``checksum``: write
    its sha256 file first."""
    path = Path(path)
    if checksum:
        atomic_write_text(checksum_path(path), checksum_line(path, data))
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


def atomic_write_text(path: str | Path, text: str, checksum: bool = False) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"), checksum)


def ensure_writable(folder: str | Path, name: str = "out") -> Path:
    """Create ``folder`` if needed and check a file can be written there, before any work starts.

    Raises ConfigError naming ``name`` and the user's path when it cannot."""
    from ..core._errors import ConfigError

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError(name, str(folder), f"cannot write there ({exc.strerror or exc})") from None
    return folder
