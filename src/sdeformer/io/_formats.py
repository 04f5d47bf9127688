"""File formats of results (DESIGN: outputs): JSON, CSV and ``.npz`` (never pickle), written atomically
(``atomic``), with their sha256 file where ``checksum`` (``checksums``), and read back verified: a file that
fails its checksum or cannot be parsed raises ``checksums.Damaged`` (one line), never a parser's traceback.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ._atomic import atomic_write_bytes, atomic_write_text
from ._checksums import Damaged, verified_bytes


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


def write_json(path: str | Path, obj: Any, checksum: bool = False) -> Path:
    """``obj`` (``to_jsonable``) as indented JSON, atomically; ``checksum``: with its sha256 file."""
    return atomic_write_text(path, json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n", checksum)


def read_json(path: str | Path) -> Any:
    """The JSON value of ``path``, checked against its checksum if it has one; ``Damaged`` (one line) for a
    checksum, encoding or syntax failure."""
    data = verified_bytes(path)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Damaged(path, f"not JSON: {type(exc).__name__}: {exc}") from None


def write_csv(path: str | Path, rows: Iterable[Mapping[str, Any]], columns: list[str]) -> Path:
    """Tidy CSV with the given column order."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: to_jsonable(row[c]) for c in columns})
    return atomic_write_text(path, buf.getvalue())


def write_npz(path: str | Path, *, checksum: bool = False, **arrays: Any) -> Path:
    """Arrays as ``.npz`` (never pickle); ``checksum``: with its sha256 file (see ``atomic_write_bytes``)."""
    buf = io.BytesIO()
    plain: dict[str, Any] = {
        k: v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v) for k, v in arrays.items()
    }
    np.savez_compressed(buf, allow_pickle=False, **plain)
    return atomic_write_bytes(path, buf.getvalue(), checksum=checksum)


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz``, checked against its checksum if it has one (``Damaged`` for a checksum, zip,
    CRC or compression failure)."""
    data = verified_bytes(path)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, KeyError) as exc:
        raise Damaged(path, f"{type(exc).__name__}: {exc}") from None
