"""Damaged result files kept aside (DESIGN: outputs).

``move_aside`` keeps a file that failed its checksum or could not be parsed (``checksums.Damaged``) under
``ROOT/damaged/`` (never deleted, never overwriting an earlier one) with one line on stderr, so that its result
is recomputed by the next run instead of read back wrong; ``recover`` reads a file through a reader and moves
it aside when it is damaged (``intact``: only checks it); ``damaged_files`` lists what was kept.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ._checksums import Damaged, checksum_path, verified_bytes

DAMAGED = "damaged"  # folder under a root where damaged files are kept for inspection
T = TypeVar("T")


def move_aside(damage: Damaged, root: str | Path) -> Path:
    """Keep the damaged file (and its checksum file) under ``root/damaged/``, never overwriting an earlier one,
    and say so in one line on stderr. Returns where it went (its old path if it is gone already)."""
    path = damage.path
    folder = Path(root) / DAMAGED
    folder.mkdir(parents=True, exist_ok=True)
    dest, n = folder / path.name, 0
    while dest.exists():
        n += 1
        dest = folder / f"{path.name}.{n}"
    try:
        os.replace(path, dest)
    except FileNotFoundError:  # another reader moved it first
        return path
    if checksum_path(path).exists():
        os.replace(checksum_path(path), dest.with_name(dest.name + ".sha256"))
    sys.stderr.write(f"warning: {damage}: moved to {dest}; its result will be recomputed\n")
    sys.stderr.flush()
    return dest


def recover(path: str | Path, read: Callable[[Path], T], root: str | Path | None = None) -> T | None:
    """``read(path)``, or None when ``path`` is missing or damaged (``Damaged``: moved aside under ``root``,
    default its folder, so that the caller recomputes it)."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        return read(path)
    except Damaged as damage:
        move_aside(damage, path.parent if root is None else root)
        return None


def intact(path: str | Path, root: str | Path | None = None) -> bool:
    """True when ``path`` exists and passes its checksum (if it has one); a damaged file is moved aside
    (``recover``) and counts as missing."""
    return recover(path, verified_bytes, root) is not None


def damaged_files(root: str | Path) -> list[Path]:
    """The damaged files kept under ``root`` (any ``damaged/`` folder below it), by path."""
    return sorted(p for p in Path(root).rglob(f"{DAMAGED}/*") if p.is_file() and p.suffix != ".sha256")
