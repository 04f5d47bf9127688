"""Input and output: the result store, one module per concern (``atomic`` writes, ``checksums``, ``damage``
(damaged files moved aside and recovered), ``formats`` (JSON, CSV, npz read verified), ``hashing``, ``claims`` (run
folders tied to a config), ``cache``, ``lock`` (one writer per folder)), progress lines and bars (``progress``) and
the self-contained HTML report (``report``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._atomic import atomic_write_bytes, atomic_write_text, ensure_writable
    from ._cache import read_cached_npz, write_cached_npz
    from ._checksums import Damaged, checksum_path, verified_bytes
    from ._claims import BOOKKEEPING, RUN_MARKER, claim_run_folder, write_run_metadata
    from ._damage import damaged_files, intact, move_aside, recover
    from ._formats import read_json, read_npz, to_jsonable, write_csv, write_json, write_npz
    from ._hashing import config_hash, differences
    from ._lock import LOCK_FILE, folder_lock
    from ._progress import clock_start, keep_alive, progress_bar, stage
    from ._report import Figure, Section, Table, render, unqualified, write_report

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
