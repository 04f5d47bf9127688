"""Where a sweep's tasks run: in this process (local) or on a Dask cluster.

Both run the same ``task.execute`` on the same tasks, so the table does not depend on the executor. Each
task writes its own part; the executor only reports per-task summaries, as tasks finish.

- ``LocalExecutor``: one process, tasks one after another (each a batched tensor program).
- ``DaskExecutor``: with no scheduler address, a ``distributed.LocalCluster`` bound to 127.0.0.1 with
  ``workers`` single-threaded worker processes and no dashboard (nothing listens beyond loopback); with an
  address (``tcp://host:8786``), a ``Client`` to an existing cluster whose workers see the output folder.
  A worker that dies mid-task is replaced and its task rerun elsewhere (the scheduler's allowed failures);
  the part is written once, atomically, by the attempt that finishes.

Dask's cost is per call, not per run (a call's scheduler, client and worker overhead is a sizeable fraction of
a task of small runs: docs/benchmarks.md, "Measurements behind the code's constants"); on a busy machine that CPU
is taken from the runs. So ``DaskExecutor.map`` ships up to
``TASKS_PER_CALL`` tasks per call when the sweep is large enough to keep ``CALLS_PER_WORKER`` calls per
worker (each task still writes its own part as it finishes; the summaries come back per call; a worker
killed mid-call has the whole call rerun, its finished tasks rewriting the same parts), and the loopback
cluster runs without the worker's statistical profiler (a stack sample of the running task every 10 ms) and
with slower health checks (``CLUSTER_CONFIG``). ``benchmarks/_sweeps.py`` measures both. The loopback cluster's
workers ignore Ctrl-C (``warm_up``): the driver alone prints one line and closes them.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..core._errors import ConfigError
from ._observables import SweepObservable
from ._task import Task, execute

TaskFn = Callable[[Task, str, Sequence[SweepObservable], "int | None"], dict]
EXECUTORS = ("local", "dask")
# Dask's default worker environment minus MALLOC_TRIM_THRESHOLD_: setting it turns off glibc's adaptive mmap
# threshold, so every large tensor is mmap'ed and unmapped again; the runs took ~30% longer
# (benchmarks/_sweeps.py).
WORKER_ENVIRON = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}
# Dask settings of the loopback cluster (scheduler, nannies, workers): no statistical profiler in the workers
# (it samples the running task's stack every 10 ms, taking the GIL from it), and the event-loop health check
# (20 ms), the system monitor (500 ms) and the memory polls (100 ms) less often. A sweep uses none of them; the
# memory limit is still enforced, within 0.5 s.
CLUSTER_CONFIG = {
    "distributed.nanny.pre-spawn-environ": WORKER_ENVIRON,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "500ms",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "500ms",
}

TASKS_PER_CALL = 8  # at most this many sweep tasks in one Dask call ...
CALLS_PER_WORKER = 4  # ... and at least this many calls per worker (load balance, progress, work lost to a kill)


def tasks_per_call(tasks: int, workers: int) -> int:
    """How many sweep tasks ``DaskExecutor.map`` ships in one Dask call: 1 for small sweeps, up to
    ``TASKS_PER_CALL`` while every worker still gets ``CALLS_PER_WORKER`` calls."""
    return max(1, min(TASKS_PER_CALL, tasks // (CALLS_PER_WORKER * max(1, workers))))


def execute_tasks(
    task_fn: TaskFn, tasks: Sequence[Task], out: str, observables: Sequence[SweepObservable], threads: int | None
) -> list[dict]:
    """Several tasks in one Dask call, one after another; each writes its part as it finishes."""
    return [task_fn(task, out, observables, threads) for task in tasks]


class LocalExecutor:
    """Tasks in this process, in order. ``threads``: torch intra-op threads (None: leave torch's setting).

    The default, 1, is fastest for small batched runs: with more, torch's threads spin-wait on small matmuls
    (docs/benchmarks.md, "Measurements behind the code's constants")."""

    def __init__(self, threads: int | None = 1, task_fn: TaskFn = execute):
        self.threads, self.task_fn = threads, task_fn

    def map(self, tasks: Sequence[Task], out: str | Path, observables: Sequence[SweepObservable]) -> Iterator[dict]:
        for task in tasks:
            yield self.task_fn(task, str(out), tuple(observables), self.threads)

    def map_calls(self, fn: Callable[..., Any], calls: Sequence[tuple], keys: Sequence[str] | None = None) -> Iterator:
        """``fn(*args)`` for each ``args`` of ``calls``, in order, with ``threads`` torch threads (``keys``: as
        ``DaskExecutor.map_calls``; unused here)."""
        from ..core._threads import torch_threads

        with torch_threads(self.threads):
            for args in calls:
                yield fn(*args)

    def close(self) -> None:
        pass

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def warm_up(loopback: bool = False) -> None:
    """Import the task code on a worker (first-task latency belongs to start-up, not to the sweep). A worker of
    the loopback cluster also ignores Ctrl-C (SIGINT, sent to the terminal's whole process group): the driver
    alone handles it, in one line, and closes the cluster."""
    import signal

    from . import _task as task  # noqa: F401

    if loopback:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def quiet_shutdown() -> None:
    """On a loopback worker about to be closed: Dask's logs at CRITICAL only (``DaskExecutor.close``)."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


class DaskExecutor:
    """Tasks on Dask workers (one thread each); a loopback LocalCluster unless ``scheduler`` is given.

    ``per_call``: sweep tasks per Dask call in ``map`` (None: ``tasks_per_call``, from the sweep's size and the
    number of workers)."""

    def __init__(
        self,
        workers: int = 2,
        scheduler: str | None = None,
        task_fn: TaskFn = execute,
        per_call: int | None = None,
    ):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError("workers", workers, "a positive integer")
        if per_call is not None and (isinstance(per_call, bool) or not isinstance(per_call, int) or per_call < 1):
            raise ConfigError("per_call", per_call, "a positive integer (or None: chosen from the sweep)")
        import dask.config
        from distributed import Client, LocalCluster

        self.task_fn, self.per_call = task_fn, per_call
        self.cluster = None
        if scheduler is None:
            with dask.config.set(CLUSTER_CONFIG):
                self.cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address="127.0.0.1:0",
                    silence_logs=logging.ERROR,
                    # each nanny keeps a copy for the workers it starts: one it restarts gets the settings too
                    config=copy.deepcopy(dask.config.config),
                )
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise ConfigError("scheduler", scheduler, f"cannot connect ({str(exc).splitlines()[0]})") from None
        from ..plugins import loaded_plugins
        from ._worker import LoadPlugins

        self.client.register_plugin(LoadPlugins(loaded_plugins()))
        self.client.run(warm_up, scheduler is None)  # torch and the engine imported before the first task

    def workers(self) -> int:
        """Workers connected now (at least 1)."""
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def map(self, tasks: Sequence[Task], out: str | Path, observables: Sequence[SweepObservable]) -> Iterator[dict]:
        """Per-task summaries as tasks finish; up to ``per_call`` tasks per Dask call (see the module)."""
        observables, folder = tuple(observables), str(Path(out).resolve())
        size = self.per_call or tasks_per_call(len(tasks), self.workers())
        chunks = [tuple(tasks[i : i + size]) for i in range(0, len(tasks), size)]
        calls = [(self.task_fn, chunk, folder, observables, 1) for chunk in chunks]
        keys = [f"sweep-{c[0].id}" + (f"+{len(c) - 1}" if len(c) > 1 else "") for c in chunks]
        for summaries in self.map_calls(execute_tasks, calls, keys=keys):
            yield from summaries

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
        """Close the client and, for the loopback cluster, its workers first quieted: a worker's heartbeat that
        meets the scheduler already closed logs an ERROR with a traceback on the terminal after a finished run
        (seen once at the end of ``make demo``), which is the shutdown's race, not the user's concern."""
        if self.cluster is not None:
            with contextlib.suppress(OSError, TimeoutError):  # a worker already gone has nothing left to say
                self.client.run(quiet_shutdown)
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
