"""The writer's lock of a result folder: one command at a time writes into ``OUT`` (a sweep, an ``spde --out``
run folder).

``folder_lock(out, what)`` holds an advisory lock (``fcntl.flock``) on ``OUT/.lock`` while a command claims the
folder, computes and writes its results; a second writer on the same folder (another process, or ``kill -9``'s
survivor still running) is refused at once with one line naming the folder and the holder's pid, or waits for
it with ``wait=True``. The kernel drops the lock when its holder exits, even after ``kill -9``: no stale lock is
ever left to remove by hand. Readers take no lock. Within one process the lock is re-entrant (a ``run`` inside
a held lock), since a second ``flock`` of the same file by the same process would wait for itself. When the
block refuses its input (ConfigError), the lock file and the folder it created (if still empty) are removed
again: a refused command leaves the folder as it found it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core._errors import ConfigError
from ._atomic import ensure_writable

LOCK_FILE = ".lock"
_held: dict[Path, int] = {}  # folder -> how many nested ``folder_lock`` blocks of this process hold it


def _holder(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip() or "unknown"
    except (OSError, UnicodeDecodeError):
        return "unknown"


@contextmanager
def folder_lock(out: str | Path, what: str = "command", wait: bool = False, name: str = "out") -> Iterator[Path]:
    """Hold the writer's lock of ``out`` (created if needed) for the block. ConfigError naming ``name`` and
    ``out`` when another writer (``what``: "sweep", "spde run") holds it and not ``wait``."""
    created = not Path(out).exists()
    folder = ensure_writable(out, name).resolve()
    if folder in _held:
        _held[folder] += 1
        try:
            yield folder
        finally:
            _held[folder] -= 1
        return
    path = folder / LOCK_FILE
    made = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            holder = _holder(path)
            raise ConfigError(
                name, str(out), f"another {what} is writing there (pid {holder}); wait for it or choose another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        _held[folder] = 1
        try:
            yield folder
        except ConfigError:  # refused (a foreign folder, a bad spec): leave the folder as it was
            if made:
                path.unlink(missing_ok=True)
            if created and not any(folder.iterdir()):
                folder.rmdir()
            raise
        finally:
            del _held[folder]
    finally:
        os.close(fd)  # releases the lock
