"""Progress and wall time (io._progress, experiments._reproduce): a plain-line progress is never silent for more
than ``HEARTBEAT_S`` (a ``still running`` line, with the bar's count), and a reproduction prints one wall
time: its closing line's time stamp, the closing line's duration and the report header's are the same number
(asserted on ``tests/test_cli.py``'s reproduction of Table 1)."""

from __future__ import annotations

import re
import threading

import pytest

from sdeformer.io import _progress as progress


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


def test_an_experiment_without_units_shows_its_stages_and_still_running_lines(lines):
    """reproduce's progress of an experiment that counts no units (spde, beyond, ...): not muted like ``--json``."""
    from sdeformer.experiments._reproduce import _progress

    with _progress("spde", 0, True) as advance:
        advance(1)
        progress.stage("spde: showcase run d2")
        _wait_for(lines, "spde: still running")
    assert any(line.endswith("spde: showcase run d2") for line in lines)
    with _progress("spde", 0, False):
        progress.stage("hidden")
    assert not any("hidden" in line for line in lines)
