"""Sweeps: one spec, one tidy Parquet table, resumable, local or on Dask (THEORY sections 1 and 5).

``load_spec`` reads a YAML/TOML spec (``spec``); ``expand`` turns it into runs with seeds derived from (replicate
seed, config hash) (``points``); ``run`` executes the runs not yet recorded, batched into tasks (``task``), on a
``LocalExecutor`` or ``DaskExecutor`` (``executors``), each task writing one Parquet part (``table``, each part with
its sha256 and Parquet page checksums: a damaged part is never read back, it is moved into ``OUT/damaged/`` and
rerun); ``status`` counts done / failed / pending and lists damaged parts; a sweep draws nothing (``sdeformer sweep
plot`` is the plots package's). A spec's size and memory are checked before anything is expanded (``limits``); one
writer at a time holds a folder (``lock``), claimed for one spec (``runner``). ``run_jobs`` (``jobs``) runs the
other experiments' pieces (``Job``: a function and its arguments) on the same executors, one atomic part per job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._executors import TASKS_PER_CALL, DaskExecutor, LocalExecutor, make_executor, tasks_per_call
    from ._jobs import Job, run_jobs
    from ._labelled import open_sweep
    from ._limits import MAX_RUNS
    from ._lock import LOCK_FILE, writer
    from ._observables import evaluate, parse_observables
    from ._points import Run, expand, point_hash, record_layers, run_seed, save_every
    from ._runner import load_saved_spec, plan, run, status
    from ._spec import DEFAULT_BATCH, SPEC_KEYS, Spec, load_spec, parse_spec
    from ._table import CONFIG_TYPES, read
    from ._task import execute
    from ._values import Grid

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
