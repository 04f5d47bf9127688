"""Jobs: the pieces of an experiment that loops over settings, run on the sweep executors (local or Dask).

An experiment that is not a plain model sweep (a sync-check ensemble in chunks of runs, the rate
measurements, the Figures 2-6 grid in groups of panels) lists its work as ``Job``s: a module-level function,
its keyword arguments and the cache key they are computed from (THEORY sections 4-6). ``run_jobs`` runs the
jobs whose part is missing, on ``LocalExecutor`` or ``DaskExecutor`` (one job per executor task), and each job
writes its arrays as one part ``<folder>/<id>.npz`` atomically (temporary name, then rename), tagged with its
key. So the numbers do not depend on the executor or on the number of workers (each job seeds itself from its
arguments), an interrupted run (even ``kill -9``) redoes only the missing parts, and a part written for other
arguments is never read.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..dynamics._labels import Runs
from ..io._cache import read_cached_npz, write_cached_npz
from ..io._formats import to_jsonable

JobFn = Callable[..., dict[str, Any]]  # keyword arguments -> arrays


@dataclass(frozen=True)
class Job:
    """One piece of work: ``fn(**kwargs)`` returns named arrays. ``key`` (JSON-able) names what the arrays are
    computed from; ``units`` is its share of a progress bar."""

    fn: JobFn
    kwargs: dict[str, Any]
    key: Any
    units: int = 1
    id: str = field(init=False)

    def __post_init__(self) -> None:
        blob = json.dumps(to_jsonable(self.key), sort_keys=True).encode()
        object.__setattr__(self, "id", hashlib.sha256(blob).hexdigest()[:16])


def part_path(folder: str | Path, job: Job) -> Path:
    return Path(folder) / f"{job.id}.npz"


def execute_job(job: Job, folder: str) -> dict[str, Any]:
    """Run one job and write its part (on the driver or on a worker). Returns its id and wall time."""
    start = time.perf_counter()
    arrays = job.fn(**job.kwargs)
    write_cached_npz(part_path(folder, job), job.key, **arrays)
    return {"id": job.id, "units": job.units, "wall_s": time.perf_counter() - start}


def run_jobs(
    jobs: Sequence[Job],
    folder: str | Path,
    executor: Any = None,
    progress: Callable[[int], None] | None = None,
) -> Runs:
    """The arrays of every job, in the order given, labelled by the job's key (``Runs``, the batch APIs' one
    result type; ``to_xarray()`` where the jobs' arrays have the same shapes): read from its part, or computed
    (missing parts only) on ``executor`` (default: a ``LocalExecutor`` leaving torch's threads as they are).
    ``progress(units)`` is called as each job finishes or is found done."""
    from ._executors import LocalExecutor

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, np.ndarray]] = {}
    todo = []
    for job in jobs:
        cached = read_cached_npz(part_path(folder, job), job.key)
        if cached is None:
            todo.append(job)
            continue
        results[job.id] = cached
        if progress is not None:
            progress(job.units)
    executor = executor or LocalExecutor(threads=None)
    by_id = {job.id: job for job in todo}
    for summary in executor.map_calls(execute_job, [(job, str(folder.resolve())) for job in by_id.values()]):
        job = by_id[summary["id"]]
        arrays = read_cached_npz(part_path(folder, job), job.key)
        if arrays is None:
            raise RuntimeError(f"job {job.id} finished but its part {part_path(folder, job)} cannot be read")
        results[job.id] = arrays
        if progress is not None:
            progress(job.units)
    labels = [job.key if isinstance(job.key, dict) else {"job": job.id} for job in jobs]
    return Runs([results[job.id] for job in jobs], labels)
