"""Sweep faults: kill -9 of the driver then the same command; a Dask worker killed mid-task; local == Dask.

Every finished run is kept, none is run twice, no partial part is read, and the table equals, bit for bit,
the table of an uninterrupted local run (wall times aside).
"""

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import cast

import dask.config
import pandas as pd
import pytest
import yaml
from hang_guard import HANG_S

from sdeformer.config import load_config_file
from sdeformer.core._errors import ConfigError
from sdeformer.sweeps import DaskExecutor, parse_spec, read, run
from sdeformer.sweeps._executors import TASKS_PER_CALL, tasks_per_call
from sdeformer.sweeps._runner import plan
from sdeformer.sweeps._task import execute

ROOT = Path(__file__).resolve().parents[1]
SMOKE = load_config_file(ROOT / "examples" / "sweeps" / "smoke.yaml")
SPEC = {**SMOKE, "seeds": 3, "batch": 4}  # 48 runs in 12 tasks
CLI = "import sdeformer.cli._sweep; from sdeformer.cli import main; main()"
KILL_IN_FOURTH_TASK = (  # kill -9 of the driver inside its fourth task (computed, not written): at a set point,
    "import os, signal\n"  # not after a wait, so the test does not depend on how busy the machine is
    "from sdeformer.sweeps import _task\n"
    "written, write = [], _task.write_part\n"
    "def write_or_die(*args, **kwargs):\n"
    "    if len(written) == 3:\n"
    "        os.kill(os.getpid(), signal.SIGKILL)\n"
    "    written.append(write(*args, **kwargs))\n"
    "    return written[-1]\n"
    "_task.write_part = write_or_die\n"
)
KILL_MARKER = "worker-killed-once"


def same_table(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = [c for c in a.columns if c not in ("wall_s", "task")]  # task: how runs were batched
    assert len(a) == len(b) and not a.duplicated(["config_hash", "replicate", "layer"]).any()
    left, right = cast(pd.DataFrame, a[cols]), cast(pd.DataFrame, b[cols])
    pd.testing.assert_frame_equal(left.reset_index(drop=True), right.reset_index(drop=True), check_exact=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted local run."""
    out = tmp_path_factory.mktemp("reference")
    run(parse_spec(SPEC), out)
    return read(out)


def test_kill_9_then_resume(tmp_path, reference):
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump({**SPEC, "batch": 2}, sort_keys=False))  # 24 tasks, other batches
    out = tmp_path / "out"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    killed = subprocess.run(
        [sys.executable, "-c", KILL_IN_FOURTH_TASK + CLI, "sweep", str(spec_file), "--out", str(out), "--json"],
        env=env,
        capture_output=True,
        timeout=HANG_S,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    done_before = len(list((out / "table").glob("part-*.parquet")))
    assert done_before == 3
    again = subprocess.run(
        [sys.executable, "-c", CLI, "sweep", str(spec_file), "--out", str(out), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert again.returncode == 0, again.stderr
    assert f'"skipped": {2 * done_before}' in again.stdout
    same_table(read(out), reference)
    same_table(pd.read_parquet(out / "table").sort_values(["config_hash", "replicate", "layer"]), reference)


def kill_worker_once(task, out, observables, threads):
    """Task function that kills its own worker process the first time it runs (any task)."""
    try:
        fd = os.open(Path(out).parent / KILL_MARKER, os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return execute(task, out, observables, threads)
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.fixture(scope="module")
def dask_executor():
    with DaskExecutor(workers=2) as ex:
        yield ex


def test_dask_two_workers_equal_local_bit_for_bit(tmp_path, reference, dask_executor):
    assert dask_executor.cluster.scheduler_address.startswith("tcp://127.0.0.1:")
    assert all(w.startswith("tcp://127.0.0.1:") for w in dask_executor.client.scheduler_info()["workers"])
    environ = dask_executor.client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert set(environ.values()) == {None}  # glibc keeps its adaptive mmap threshold
    result = run(parse_spec(SPEC), tmp_path, dask_executor)
    assert result["done"] == 48 and result["tasks"] == 12
    same_table(read(tmp_path), reference)


def test_dask_worker_killed_mid_task_is_retried(tmp_path, reference, dask_executor):
    dask_executor.task_fn = kill_worker_once
    try:
        result = run(parse_spec(SPEC), tmp_path / "out", dask_executor)
    finally:
        dask_executor.task_fn = execute
    assert (tmp_path / KILL_MARKER).exists() and result["done"] == 48
    same_table(read(tmp_path / "out"), reference)


def test_dask_tasks_grouped_into_calls_equal_local_bit_for_bit(tmp_path, reference, dask_executor):
    """Several tasks per Dask call (large sweeps): the same parts and table, one summary per task."""
    dask_executor.per_call = 5  # 12 tasks in calls of 5, 5, 2
    try:
        spec = parse_spec(SPEC)
        summaries = list(dask_executor.map(plan(spec, tmp_path).tasks, tmp_path, spec.observables))
    finally:
        dask_executor.per_call = None
    assert len(summaries) == 12 and sum(s["done"] for s in summaries) == 48
    assert len(list((tmp_path / "table").glob("part-*.parquet"))) == 12
    same_table(read(tmp_path), reference)
    profiling = dask_executor.client.run(lambda: dask.config.get("distributed.worker.profile.enabled"))
    assert set(profiling.values()) == {False}  # the loopback cluster's workers do not sample their tasks


def test_tasks_per_call_grows_with_the_sweep_only():
    assert tasks_per_call(12, 2) == 1  # small sweeps: one task per call, as before
    assert tasks_per_call(32, 1) == 8 and tasks_per_call(32, 2) == 4  # >= 4 calls per worker
    assert tasks_per_call(10_000, 2) == TASKS_PER_CALL
    assert tasks_per_call(0, 1) == 1
    with pytest.raises(ConfigError, match="per_call"):
        DaskExecutor(1, per_call=0)


def _sigint_handler() -> object:
    return signal.getsignal(signal.SIGINT)


def test_loopback_workers_leave_ctrl_c_to_the_driver():
    """Ctrl-C reaches the terminal's whole process group: the loopback cluster's workers ignore it (no worker
    tracebacks), the driver prints one line and closes them. A fresh cluster: a worker the nanny
    restarts after a kill (another test here) keeps distributed's own handler."""
    with DaskExecutor(workers=2) as ex:
        handlers: dict = ex.client.run(_sigint_handler)  # pyright: ignore[reportAssignmentType]  (sync client)
    assert handlers and set(handlers.values()) == {signal.SIG_IGN}


def test_closing_the_loopback_cluster_quiets_its_workers_first(monkeypatch):
    """``DaskExecutor.close``: the workers' Dask logs go to CRITICAL before the scheduler closes (a heartbeat
    meeting a closed scheduler would print an ERROR traceback after a finished run), and only then the client."""
    import logging

    from sdeformer.sweeps._executors import quiet_shutdown

    def level() -> int:
        return logging.getLogger("distributed").getEffectiveLevel()

    ex = DaskExecutor(workers=1)
    assert logging.CRITICAL not in cast(dict, ex.client.run(level)).values()  # not quiet while running
    calls, run, close = [], ex.client.run, ex.client.close

    def spy_run(fn, *args, **kwargs):
        out = run(fn, *args, **kwargs)
        calls.append((fn, set(cast(dict, run(level)).values())))
        return out

    monkeypatch.setattr(ex.client, "run", spy_run)
    monkeypatch.setattr(ex.client, "close", lambda *a, **k: (calls.append(("close", None)), close(*a, **k))[1])
    ex.close()
    assert calls == [(quiet_shutdown, {logging.CRITICAL}), ("close", None)]
