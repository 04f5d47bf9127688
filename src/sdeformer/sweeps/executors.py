"""Where a sweep's tasks run: in this process (local) or on a Dask cluster.

Both run the same ``task.execute`` on the same tasks, so the table does not depend on the executor. Each
task writes its own part; the executor only reports per-task summaries, as tasks finish.

- ``LocalExecutor``: one process, tasks one after another (each a batched tensor program).
- ``DaskExecutor``: with no scheduler address, a ``distributed.LocalCluster`` bound to 127.0.0.1 with
  ``workers`` single-threaded worker processes and no dashboard (nothing listens beyond loopback); with an
  address (``tcp://host:8786``), a ``Client`` to an existing cluster whose workers see the output folder.
  A worker that dies mid-task is replaced and its task rerun elsewhere (the scheduler's allowed failures);
  the part is written once, atomically, by the attempt that finishes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .observables import Observable
from .task import Task, execute

TaskFn = Callable[[Task, str, Sequence[Observable], "int | None"], dict]
EXECUTORS = ("local", "dask")
# Dask's default worker environment minus MALLOC_TRIM_THRESHOLD_: setting it turns off glibc's adaptive mmap
# threshold, so every large tensor is mmap'ed and unmapped again; the runs took ~30% longer (benchmarks/sweeps.py).
WORKER_ENVIRON = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}


class LocalExecutor:
    """Tasks in this process, in order. ``threads``: torch intra-op threads (None: leave torch's setting).

    The default, 1, is fastest for small batched runs: with more, torch's threads spin-wait on small matmuls
    (on a shared 2-core machine, 2 threads ran the benchmark sweep 14x slower)."""

    def __init__(self, threads: int | None = 1, task_fn: TaskFn = execute):
        self.threads, self.task_fn = threads, task_fn

    def map(self, tasks: Sequence[Task], out: str | Path, observables: Sequence[Observable]) -> Iterator[dict]:
        for task in tasks:
            yield self.task_fn(task, str(out), tuple(observables), self.threads)

    def map_calls(self, fn: Callable[..., Any], calls: Sequence[tuple]) -> Iterator[Any]:
        """``fn(*args)`` for each ``args`` of ``calls``, in order, with ``threads`` torch threads."""
        from .task import torch_threads

        with torch_threads(self.threads):
            for args in calls:
                yield fn(*args)

    def close(self) -> None:
        pass

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def warm_up() -> None:
    """Import the task code on a worker (first-task latency belongs to start-up, not to the sweep)."""
    from . import task  # noqa: F401


class DaskExecutor:
    """Tasks on Dask workers (one thread each); a loopback LocalCluster unless ``scheduler`` is given."""

    def __init__(self, workers: int = 2, scheduler: str | None = None, task_fn: TaskFn = execute):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError("workers", workers, "a positive integer")
        import dask.config
        from distributed import Client, LocalCluster

        self.task_fn = task_fn
        self.cluster = None
        if scheduler is None:
            with dask.config.set({"distributed.nanny.pre-spawn-environ": WORKER_ENVIRON}):
                self.cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address="127.0.0.1:0",
                    silence_logs=logging.ERROR,
                )
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise ConfigError("scheduler", scheduler, f"cannot connect ({str(exc).splitlines()[0]})") from None
        self.client.run(warm_up)  # imports torch and the engine on every worker before the first task

    def map(self, tasks: Sequence[Task], out: str | Path, observables: Sequence[Observable]) -> Iterator[dict]:
        observables = tuple(observables)
        calls = [(t, str(Path(out).resolve()), observables, 1) for t in tasks]
        return self.map_calls(self.task_fn, calls, keys=[f"sweep-{t.id}" for t in tasks])

    def map_calls(self, fn: Callable[..., Any], calls: Sequence[tuple], keys: Sequence[str] | None = None) -> Iterator:
        """``fn(*args)`` for each ``args`` of ``calls`` on the workers; results as they finish."""
        from distributed import as_completed

        names = keys if keys is not None else [None] * len(calls)  # None: Dask picks a unique key
        futures = [self.client.submit(fn, *args, key=name, pure=False) for name, args in zip(names, calls)]
        for future in as_completed(futures):
            result = future.result()
            future.release()
            yield result

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def make_executor(
    kind: str = "local", workers: int = 2, scheduler: str | None = None, threads: int | None = None
) -> LocalExecutor | DaskExecutor:
    """``local`` or ``dask`` (a scheduler address implies dask). Raises ConfigError for a bad choice."""
    if scheduler is not None and kind != "dask":
        raise ConfigError("scheduler", scheduler, "needs --executor dask")
    if threads is not None and (kind != "local" or isinstance(threads, bool) or threads < 1):
        raise ConfigError("threads", threads, "a positive integer, for --executor local (Dask workers use 1)")
    if kind == "local":
        return LocalExecutor(threads or 1)
    if kind == "dask":
        return DaskExecutor(workers, scheduler)
    raise ConfigError("executor", kind, f"one of {list(EXECUTORS)}")
