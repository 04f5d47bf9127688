"""Progress and wall time (io.progress, experiments.reproduce): a plain-line progress is never silent for more
than ``HEARTBEAT_S`` (a ``still running`` line, with the bar's count), and a reproduction prints one wall
time: its closing line's time stamp, the closing line's duration and the report header's are the same number."""

from __future__ import annotations

import re
import threading

import pytest
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.io import progress


@pytest.fixture
def lines(monkeypatch):
    """The stage lines printed, collected (and a short heartbeat, so a test need not wait 10 s for one)."""
    seen: list[str] = []
    monkeypatch.setattr(progress, "_line", seen.append)
    monkeypatch.setattr(progress, "HEARTBEAT_S", 0.05)
    return seen


def _wait_for(seen: list[str], text: str) -> None:
    """Block until a line containing ``text`` was printed (the test's own bound: 60 s, far above 0.05 s)."""
    arrived = threading.Event()
    for _ in range(600):
        if any(text in line for line in seen):
            return
        arrived.wait(0.1)
    raise AssertionError(f"no line with {text!r} in {seen}")


def test_a_silent_stage_gets_still_running_lines(lines):
    with progress.keep_alive("spde"):
        _wait_for(lines, "spde: still running")
    count = len(lines)
    assert all(re.match(r"\[ *[0-9.]+ s\] spde: still running, [0-9.]+ s$", line) for line in lines), lines
    threading.Event().wait(0.3)
    assert len(lines) == count  # the heartbeat stops with its block


def test_a_progress_bar_stuck_in_one_step_says_where_it_is(lines):
    with progress.progress_bar(4, "grid") as advance:
        advance(1)
        _wait_for(lines, "grid: still running (1/4)")
        advance(3)
    assert lines[0].endswith("grid: started (4 steps)") and re.search(r"grid: done \(4/4\) in [0-9.]+ s$", lines[-1])


def test_quiet_progress_has_no_heartbeat(lines):
    with progress.progress_bar(2, "quiet", enabled=False), progress.keep_alive("quiet"):
        threading.Event().wait(0.3)
    assert lines == []


def test_a_reproduction_prints_one_wall_time(tmp_path):
    result = CliRunner().invoke(app, ["reproduce", "table1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    closing = result.stderr.strip().splitlines()[-1]
    match = re.fullmatch(r"\[ *([0-9.]+) s\] report written to (.+) in ([0-9.]+) s", closing)
    assert match, result.stderr
    stamp, path, wall = match.groups()
    assert stamp == wall and path == str(tmp_path / "index.html")
    assert f"wall time {wall} s" in (tmp_path / "index.html").read_text()
    stamps = [float(s) for s in re.findall(r"^\[ *([0-9.]+) s\]", result.stderr, re.M)]
    assert stamps == sorted(stamps) and stamps[-1] == float(wall)  # the last line is the latest
