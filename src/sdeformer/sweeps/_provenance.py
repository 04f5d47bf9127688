"""Which sweep a part belongs to (docs/specs.md, "Parts and their provenance").

Every part a sweep writes is stamped, in its Parquet schema's metadata, with the hash of the spec it ran for
(``claim_hash``: what ties a folder to a spec, as ``runner._claim``) and the keys of its runs, whose digest is the
part's name (``part-<id>.parquet``, ``id`` = ``task_id(keys)``). ``OUT/sweep.json`` lists the spec hashes the
folder was claimed for (``claims``: one, or more after ``--force``). A part is read only when

- it is a regular file (not a symlink, a FIFO or a device: ``/dev/zero`` would be read until memory runs out),
  with its sha256 file (``_checksums/``; else it is unverifiable);
- its stamp names a spec of the folder's ``claims`` (else it is foreign: copied from another sweep);
- its stamped keys give its name and hold every run it records (else it was swapped for another part or edited).

Any other part is ``Damaged``: left out with a warning by ``open_sweep`` and ``sweep status``, moved into
``OUT/damaged/`` by ``sweep run``, whose runs are then run again in the same command. A folder written before
parts were stamped (``sweep.json`` without ``claims``, or ``unstamped: true``) keeps its unstamped parts that have
their sha256 file.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from ..io._checksums import Damaged, checksum_path
from ..io._formats import read_json

SPEC_FILE = "sweep.json"
SPEC_KEY, KEYS_KEY = b"sdeformer.spec", b"sdeformer.keys"


def claim_hash(claim: dict[str, Any]) -> str:
    """The hash of a spec's claim (``runner._claim``): 16 hex digits."""
    return hashlib.sha256(json.dumps(claim, sort_keys=True, default=str).encode()).hexdigest()[:16]


def task_id(keys: Sequence[tuple[str, int]]) -> str:
    """A task's id, its part's name: the digest of its runs' keys ``(config_hash, replicate)`` in order."""
    return _digest([(str(h), int(r)) for h, r in keys])


def _digest(keys: list[tuple[str, int]]) -> str:
    """``task_id`` of keys already ``(str, int)``."""
    return hashlib.sha256(repr(keys).encode()).hexdigest()[:16]


def stamp(spec: str, keys: Sequence[tuple[str, int]]) -> dict[bytes, bytes]:
    """The schema metadata of a part of the spec ``spec`` holding the runs ``keys``."""
    return {SPEC_KEY: spec.encode(), KEYS_KEY: json.dumps([[str(h), int(r)] for h, r in keys]).encode()}


def folder_claims(out: str | Path) -> tuple[set[str], bool] | None:
    """(the spec hashes ``OUT/sweep.json`` lists, whether unstamped parts are kept), or None for a folder that
    lists none (written before stamps: every verified part is read)."""
    try:
        saved = read_json(Path(out) / SPEC_FILE)
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or not isinstance(saved.get("claims"), list):
        return None
    return {str(c) for c in saved["claims"]}, bool(saved.get("unstamped", False))


def check_file(path: Path, claims) -> None:
    """``Damaged`` unless ``path`` is a regular file (not followed through a link) with its sha256 file (which a
    folder written before stamps, ``claims`` None, may lack)."""
    mode = path.lstat().st_mode
    if not stat.S_ISREG(mode):
        raise Damaged(path, "not a regular file (a link, a FIFO or a device): not read")
    if claims is not None and not checksum_path(path).is_file():
        raise Damaged(path, f"no {checksum_path(path).name}: its content cannot be verified")


def check_part(
    path: Path, schema_metadata: dict[bytes, bytes] | None, keys: Collection[tuple[str, int]], claims
) -> None:
    """``Damaged`` unless the part at ``path`` (its schema metadata, the run keys of its rows, distinct) belongs to
    the folder whose ``folder_claims`` are ``claims`` (see the module docstring)."""
    meta = schema_metadata or {}
    if SPEC_KEY not in meta or KEYS_KEY not in meta:
        if claims is None or claims[1]:
            return
        raise Damaged(path, "records no sweep (no spec hash and run keys): it cannot be shown to belong here")
    spec = meta[SPEC_KEY].decode(errors="replace")
    if claims is not None and spec not in claims[0]:
        raise Damaged(path, f"belongs to another sweep (spec {spec}, not one of {sorted(claims[0])})")
    try:
        stamped = [(str(h), int(r)) for h, r in json.loads(meta[KEYS_KEY])]
    except (ValueError, TypeError):
        raise Damaged(path, "its run keys cannot be read") from None
    if _digest(stamped) != path.stem.removeprefix("part-"):
        raise Damaged(path, "holds the runs of another part (its name is not its runs' digest)")
    if list(keys) != stamped and not set(keys) <= set(stamped):  # a task writes its runs in its stamp's order
        raise Damaged(path, "holds rows of runs its stamp does not list")
