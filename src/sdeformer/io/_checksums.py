"""Content checksums of result files (DESIGN: outputs).

A result file is written with the sha256 of its bytes in ``_checksums/<name>.sha256`` beside it (``sha256sum -c``
format), written before the file itself (``atomic.atomic_write_bytes(checksum=True)``). ``verified_bytes``
checks it on every read: a file that fails (a flipped bit, a truncated, edited or rewritten file) raises
``Damaged``. A file without a checksum (written before checksums existed) is read as it is.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

CHECKSUMS = "_checksums"  # folder of the sha256 files ('_': pyarrow's dataset reader skips it)


class Damaged(OSError):
    """A file whose content fails its checksum or cannot be parsed: ``path`` and the ``reason``, one line (an
    OSError: where nobody moves it aside, the commands print it as a file they cannot read)."""

    def __init__(self, path: str | Path, reason: str):
        self.path, self.reason = Path(path), reason.splitlines()[0] if reason else "unreadable"
        super().__init__(f"damaged file {self.path} ({self.reason})")
        self.filename = str(self.path)

    def __str__(self) -> str:
        return str(self.args[0])


def checksum_path(path: str | Path) -> Path:
    """Where the sha256 of the file ``path`` is kept: ``<folder>/_checksums/<name>.sha256``."""
    path = Path(path)
    return path.parent / CHECKSUMS / f"{path.name}.sha256"


def checksum_line(path: str | Path, data: bytes) -> str:
    """The content of ``checksum_path(path)`` for ``data``."""
    return f"{hashlib.sha256(data).hexdigest()}  ../{Path(path).name}\n"


def verified_bytes(path: str | Path) -> bytes:
    """The bytes of ``path``, checked against its sha256 file when it has one; ``Damaged`` when they differ."""
    path = Path(path)
    data = path.read_bytes()
    try:
        expected = checksum_path(path).read_text(encoding="ascii").split()[0]
    except (OSError, UnicodeDecodeError, IndexError):
        return data  # no checksum (a file written before checksums existed): read as it is
    if hashlib.sha256(data).hexdigest() != expected:
        raise Damaged(path, f"sha256 differs from {checksum_path(path).name}: {len(data)} bytes")
    return data
