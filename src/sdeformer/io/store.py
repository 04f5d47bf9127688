"""The result store, one module per concern (DESIGN: outputs): ``atomic`` (atomic writes, writable folders),
``checksums`` (sha256 files, ``Damaged``), ``damage`` (damaged files moved aside and recovered), ``formats``
(JSON, CSV, npz: written atomically, read verified), ``hashing`` (config hashes), ``claims`` (run folders tied to
a config), ``cache`` (arrays cached by config) and ``lock`` (one writer per folder). This module re-exports
their names for callers that import them from ``io.store``."""

from __future__ import annotations

from .atomic import atomic_write_bytes, atomic_write_text, ensure_writable
from .cache import read_cached_npz, write_cached_npz
from .checksums import CHECKSUMS, Damaged, checksum_path, verified_bytes
from .claims import RUN_MARKER, claim_run_folder, write_run_metadata
from .damage import DAMAGED, damaged_files, move_aside, recover
from .formats import read_json, read_npz, to_jsonable, write_csv, write_json, write_npz
from .hashing import config_hash, differences

__all__ = [
    "CHECKSUMS",
    "DAMAGED",
    "RUN_MARKER",
    "Damaged",
    "atomic_write_bytes",
    "atomic_write_text",
    "checksum_path",
    "claim_run_folder",
    "config_hash",
    "damaged_files",
    "differences",
    "ensure_writable",
    "move_aside",
    "read_cached_npz",
    "read_json",
    "read_npz",
    "recover",
    "to_jsonable",
    "verified_bytes",
    "write_cached_npz",
    "write_csv",
    "write_json",
    "write_npz",
    "write_run_metadata",
]
