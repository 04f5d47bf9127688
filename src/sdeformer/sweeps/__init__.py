"""Sweeps: one spec, one tidy Parquet table, resumable, local or on Dask (THEORY sections 1 and 5).

``load_spec`` reads a YAML/TOML spec (``spec``); ``expand`` turns it into runs with seeds derived from
(replicate seed, config hash) (``points``); ``run`` executes the runs not yet recorded, batched into tasks
(``task``), on a ``LocalExecutor`` or ``DaskExecutor`` (``executors``), each task writing one Parquet part
(``table``, each part with its sha256 and Parquet page checksums: a damaged part is never read back, it is
moved into ``OUT/damaged/`` and rerun); ``status`` counts done / failed / pending and lists damaged parts;
``plot`` draws a heat map or curves from the table. A spec's size and memory are checked before anything is
expanded (``limits``); one writer at a time holds a folder (``lock``), claimed for one spec (``runner``).
``run_jobs`` (``jobs``) runs the other experiments' pieces (``Job``: a function and its arguments) on the same
executors, one atomic part per job.
"""

from __future__ import annotations

from .executors import DaskExecutor, LocalExecutor, make_executor
from .jobs import Job, run_jobs
from .points import Run, expand, point_hash, run_seed
from .runner import run, status
from .spec import Spec, load_spec, parse_spec
from .table import read

__all__ = [
    "DaskExecutor",
    "Job",
    "LocalExecutor",
    "Run",
    "Spec",
    "expand",
    "load_spec",
    "make_executor",
    "parse_spec",
    "point_hash",
    "read",
    "run",
    "run_jobs",
    "run_seed",
    "status",
]
