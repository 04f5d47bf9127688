"""Run directories, atomic writes and content checksums (DESIGN: outputs).

Every write goes to a temporary file in the target folder, then ``os.replace`` renames it: a reader
never sees half a file, and an interrupted run leaves the previous version intact.

Parts (cached arrays, a sweep's Parquet parts) are written with a content checksum: the sha256 of the file,
in ``_checksums/<name>.sha256`` beside it (``sha256sum -c`` format), written before the part itself.
``verified_bytes`` checks it on every read; a part that fails (a flipped bit, a truncated or rewritten file)
raises ``Damaged``, and ``move_aside`` keeps it under ``ROOT/damaged/`` (never deleted) with one line on stderr,
so that its result is recomputed by the next run instead of read back wrong. A part without a checksum
(written before checksums existed) is read as it is.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

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


def write_json(path: str | Path, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n")


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


def config_hash(config: Any) -> str:
    """Short stable hash of a config: the key of a cached result."""
    blob = json.dumps(to_jsonable(config), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def write_run_metadata(folder: str | Path, config: Mapping[str, Any], seed: Any) -> Path:
    """``config.json`` with the resolved config, seed and package version."""
    from .. import __version__

    return write_json(Path(folder) / "config.json", {"config": config, "seed": seed, "version": __version__})


RUN_MARKER = "run.json"  # {"config_hash", "config"}: ties a run folder to one config


def ensure_writable(folder: str | Path, name: str = "out") -> Path:
    """Create ``folder`` if needed and check a file can be written there, before any work starts.

    Raises ConfigError naming ``name`` and the user's path when it cannot."""
    from ..core.errors import ConfigError

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError(name, str(folder), f"cannot write there ({exc.strerror or exc})") from None
    return folder


def claim_run_folder(
    folder: str | Path, config: Any, *, force: bool = False, name: str = "out", marker_name: str = RUN_MARKER
) -> bool:
    """Tie ``folder`` to ``config`` (by ``config_hash``) before a run writes into it; True when the folder already
    belongs to this config (resume), False when it is new (or ``force`` takes it over).

    A folder holding another config's run raises ConfigError unless ``force``; so does one holding files but no
    marker, when the marker is the default ``run.json`` (a command with its own ``marker_name`` shares its folder
    with other commands' outputs, e.g. ``results/`` of ``reproduce`` and ``results/practice``)."""
    from ..core.errors import ConfigError

    folder = ensure_writable(folder, name)
    key, marker = config_hash(config), folder / marker_name
    if marker.exists():
        try:
            saved = json.loads(marker.read_text(encoding="utf-8"))
            held, held_config = saved.get("config_hash"), saved.get("config")
        except (ValueError, AttributeError, OSError):
            held = held_config = None
        if held == key:
            return True
        if not force:
            raise ConfigError(
                name,
                str(folder),
                f"holds a run of another config ({differences(held_config, to_jsonable(config))}); "
                "pass --force to overwrite it, or choose another folder",
            )
    elif marker_name == RUN_MARKER and any(p.name != RUN_MARKER for p in folder.iterdir()) and not force:
        raise ConfigError(name, str(folder), "is not empty and holds no sdeformer run; pass --force to write there")
    write_json(marker, {"config_hash": key, "config": config})
    return False


def _short(value: Any, most: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= most else text[: most - 3] + "..."


def differences(held: Any, config: Any) -> str:
    """What differs between a folder's recorded config and this one, for a refusal: ``seed 0 there, 1 here``
    per differing key (both mappings), else the two values."""
    if not isinstance(held, dict) or not isinstance(config, dict):
        return f"{_short(held)} there, {_short(config)} here"
    keys = [k for k in {**held, **config} if held.get(k) != config.get(k)]
    shown = [f"{k} {_short(held.get(k, '(unset)'))} there, {_short(config.get(k, '(unset)'))} here" for k in keys[:4]]
    return "; ".join(shown + ([f"and {len(keys) - 4} more"] if len(keys) > 4 else [])) or "same values"


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
