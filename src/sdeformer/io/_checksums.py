"""Content checksums and damaged parts (``io.store``): a part's sha256 in ``_checksums/<name>.sha256`` beside
it (``sha256sum -c`` format), checked on every read (``verified_bytes``); a part that fails raises ``Damaged`` and
``move_aside`` keeps it under ``ROOT/damaged/`` (never deleted), so that its result is recomputed."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

CHECKSUMS = "_checksums"  # folder of the parts' sha256 files ('_': pyarrow's dataset reader skips it)
DAMAGED = "damaged"  # folder under a root where damaged parts are kept for inspection


class Damaged(OSError):
    """A part whose content fails its checksum or cannot be parsed: ``path`` and the ``reason``, one line (an
    OSError: where nobody moves it aside, the commands print it as a file they cannot read)."""

    def __init__(self, path: str | Path, reason: str):
        self.path, self.reason = Path(path), reason.splitlines()[0] if reason else "unreadable"
        super().__init__(f"damaged part {self.path} ({self.reason})")
        self.filename = str(self.path)

    def __str__(self) -> str:
        return str(self.args[0])


def checksum_path(path: str | Path) -> Path:
    """Where the sha256 of the part ``path`` is kept: ``<folder>/_checksums/<name>.sha256``."""
    path = Path(path)
    return path.parent / CHECKSUMS / f"{path.name}.sha256"


def verified_bytes(path: str | Path) -> bytes:
    """The bytes of ``path``, checked against its sha256 file when it has one; ``Damaged`` when they differ."""
    path = Path(path)
    data = path.read_bytes()
    try:
        expected = checksum_path(path).read_text(encoding="ascii").split()[0]
    except (OSError, UnicodeDecodeError, IndexError):
        return data  # no checksum (a part written before checksums existed): read as it is
    if hashlib.sha256(data).hexdigest() != expected:
        raise Damaged(path, f"sha256 differs from {checksum_path(path).name}: {len(data)} bytes")
    return data


def move_aside(damage: Damaged, root: str | Path) -> Path:
    """Keep the damaged part (and its checksum file) under ``root/damaged/``, never overwriting an earlier one,
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


def damaged_files(root: str | Path) -> list[Path]:
    """The damaged parts kept under ``root`` (any ``damaged/`` folder below it), by path."""
    return sorted(p for p in Path(root).rglob(f"{DAMAGED}/*") if p.is_file() and p.suffix != ".sha256")
