"""The writer's lock of a sweep folder: one ``sweep run`` at a time writes into ``OUT`` (THEORY section 1 runs,
recorded once each). ``writer(out)`` is ``io._lock.folder_lock`` for a sweep: held while a sweep plans, runs
its tasks and compacts its table; a second writer is refused in one line naming the folder and the holder's
pid (or waits with ``wait=True``); readers (``sweep status``, ``sweep plot``) take no lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..io._lock import LOCK_FILE, folder_lock

__all__ = ["LOCK_FILE", "writer"]


@contextmanager
def writer(out: str | Path, wait: bool = False) -> Iterator[Path]:
    """Hold the writer's lock of the sweep folder ``out`` for the block (``io._lock.folder_lock``)."""
    with folder_lock(out, "sweep", wait) as folder:
        yield folder
