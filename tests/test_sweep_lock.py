"""One writer per sweep folder, and the folder claimed like every other command's.

A second ``sweep run`` into a folder whose writer's lock (``OUT/.lock``, ``fcntl.flock``) is held is refused at
once with one line naming the holder (or waits, ``writer(wait=True)``); the lock goes with its holder, even
after ``kill -9``. The same spec resumes; another spec is refused naming what differs unless ``--force``; a
non-empty folder that is no sweep is refused unless ``--force``; another record (observables, times) is refused
even with ``--force``. Today's code (the wrong model): two sweeps both ran all the work (1,536 rows for 384
runs), another spec replaced ``sweep.json``, a foreign folder was written into."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.core._errors import ConfigError
from sdeformer.sweeps import parse_spec, read, run, status
from sdeformer.sweeps._lock import LOCK_FILE, writer

SPEC = {"base": {"tokens": 4, "dim": 3, "width": 8, "layers": 4}, "axes": {"beta": [0.5, 1.0]}, "seeds": 2}
HOLD = (
    "import fcntl, os, sys, time\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "os.write(fd, str(os.getpid()).encode())\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline() if sys.argv[2] == 'told' else time.sleep(float(sys.argv[2]))\n"
)
cli = CliRunner()


def hold(out: Path, seconds: float | str) -> subprocess.Popen:
    """Another process holding the folder's lock for ``seconds`` (``"told"``: until a line on its stdin)."""
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out / LOCK_FILE), str(seconds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def sweep(tmp_path: Path, spec: dict, out: Path, *extra: str):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return cli.invoke(app, ["sweep", str(path), "--out", str(out), "--json", *extra])


def one_error(result) -> str:
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]


def test_second_writer_refused_then_runs_once_the_holder_is_gone(tmp_path):
    out = tmp_path / "out"
    holder = hold(out, 60)
    try:
        line = one_error(sweep(tmp_path, SPEC, out))
        assert "another sweep is writing there" in line and f"pid {holder.pid}" in line and "'out'" not in line
        assert not (out / "table").exists()  # nothing written by the refused writer
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # kill -9: the kernel drops the lock
        holder.wait()
    result = sweep(tmp_path, SPEC, out)
    assert result.exit_code == 0 and json.loads(result.stdout)["ran"] == 4
    assert len(read(out)) == 4  # each run recorded once


def test_a_waiting_writer_waits_for_the_holder(tmp_path):
    """Ordered by events, not timed: the waiter cannot be inside while the holder holds, however long the machine
    takes to schedule either, and gets in once the holder lets go."""
    out = tmp_path / "out"
    holder = hold(out, "told")
    inside = threading.Event()

    def waiter() -> None:
        with writer(out, wait=True):
            inside.set()

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    assert not inside.wait(0.5)  # still held: nobody else is inside (true at any load)
    assert holder.stdin is not None
    holder.stdin.write("go\n")
    holder.stdin.flush()  # the holder exits and the kernel drops its lock
    thread.join(120)
    assert inside.is_set() and holder.wait(120) == 0


def test_lock_is_reentrant_in_one_process(tmp_path):
    with writer(tmp_path):
        assert run(parse_spec(SPEC), tmp_path)["done"] == 4


def test_same_spec_resumes_another_is_refused_unless_force(tmp_path):
    out = tmp_path / "out"
    assert sweep(tmp_path, SPEC, out).exit_code == 0
    again = sweep(tmp_path, {**SPEC, "batch": 3, "name": "renamed"}, out)  # same runs: resumes
    assert again.exit_code == 0 and json.loads(again.stdout)["ran"] == 0
    seeds = one_error(sweep(tmp_path, {**SPEC, "seeds": 3}, out))
    assert "holds a sweep of another spec (seeds [0, 1] there, [0, 1, 2] here)" in seeds and "--force" in seeds
    assert status(out)["runs"] == 4  # sweep.json untouched
    forced = sweep(tmp_path, {**SPEC, "seeds": 3}, out, "--force")
    assert forced.exit_code == 0 and json.loads(forced.stdout)["ran"] == 2
    assert status(out) == {**status(out), "runs": 6, "done": 6}
    record = one_error(sweep(tmp_path, {**SPEC, "observables": ["mean_cos"]}, out, "--force"))
    assert "records other observables" in record


def test_foreign_folder_refused_unless_force(tmp_path):
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "thesis.tex").write_text("mine")
    line = one_error(sweep(tmp_path, SPEC, out))
    assert "is not empty and holds no sweep" in line and "--force" in line
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    assert sweep(tmp_path, SPEC, out, "--force").exit_code == 0
    assert (out / "thesis.tex").read_text() == "mine"


def test_python_api_claims_the_folder_too(tmp_path):
    run(parse_spec(SPEC), tmp_path)
    with pytest.raises(ConfigError, match="another spec"):
        run(parse_spec({**SPEC, "axes": {"beta": [0.5, 2.0]}}), tmp_path)


def test_refused_spec_leaves_no_folder(tmp_path):
    out = tmp_path / "new"
    one_error(sweep(tmp_path, {**SPEC, "axes": {"beta": [0.0]}}, out))  # beta = 0: refused at expansion
    assert not out.exists()
