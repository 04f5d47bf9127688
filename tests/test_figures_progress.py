"""Report plumbing: plain progress lines off a terminal, the per-layer cosine density, Table 1's headers."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
import torch

from sdeformer.io import _progress
from sdeformer.io._progress import progress_bar, stage
from sdeformer.observables import cosine_histogram


def test_progress_prints_plain_lines_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bar(20, "demo part") as advance:
        for _ in range(20):
            advance(1)
        stage("a stage")
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith("demo part: started (20 steps)")
    assert any("demo part: 50 % (10/20)" in line for line in err)
    assert re.search(r"demo part: done \(20/20\) in [0-9.]+ s$", err[-1])
    assert all(re.match(r"\[ *[0-9.]+ s\] ", line) for line in err)  # each line carries the elapsed time
    assert sum("%" in line for line in err) == 9  # 10 %, ..., 90 %: one line per tenth, not per step


def test_disabled_progress_is_silent_including_stages(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bar(5, "quiet", enabled=False) as advance:
        advance(5)
        stage("not shown")
    assert capsys.readouterr().err == ""


def test_disabled_progress_on_a_terminal_is_a_transient_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--json`` on a terminal: the bar moves (its description and count are drawn) and is erased when done;
    stage lines stay silent. Wrong model it fails: the former no-op, which left a long ``--json`` run silent."""
    from rich.console import Console

    screen = io.StringIO()
    monkeypatch.setattr(_progress, "_console", Console(file=screen, force_terminal=True, width=100))
    with progress_bar(5, "quiet run", enabled=False) as advance:
        advance(5)
        stage("not shown")
    drawn = screen.getvalue()
    assert "quiet run" in drawn and "5/5" in drawn and "not shown" not in drawn
    assert drawn.endswith("\x1b[1A\x1b[2K")  # the cursor back up and the line erased: the bar is transient


def test_cosine_histogram_matches_numpy_histogram() -> None:
    rng = np.random.default_rng(0)
    cos = np.concatenate([rng.uniform(-1, 1, (7, 500)), np.full((7, 3), 1.0), np.full((7, 2), -1.0)], axis=1)
    counts = cosine_histogram(torch.from_numpy(cos), bins=40).numpy().T  # (bins, S)
    expected = np.stack([np.histogram(row, bins=np.linspace(-1, 1, 41))[0] for row in cos], axis=1)
    assert counts.shape == (40, 7)
    assert np.array_equal(counts, expected)  # every pair counted once, cos = +-1 in the end bins
    assert np.all(counts.sum(0) == cos.shape[1])


def test_table1_headers_are_the_papers() -> None:
    from sdeformer.experiments._table1 import Table1Result, section

    row = {
        "activation": "relu",
        "dim": 5,
        "sigma": 0.0,
        "kappa1": 0.1,
        "dkappa1": 0.1,
        "lambda1": -0.1,
        "lambda_bar": 0.1,
        "lambda_bar_prime": 0.1,
        "odd_field": False,
        "synchronizes": False,
    }
    columns = list(section(Table1Result((row,))).tables[0].columns)
    for header in ("κ(1)", "κ'(1)", "λ₁", "λ̄"):
        assert header in columns
    assert any(c.startswith("λ̄'") for c in columns)
    assert not any("kappa" in c or "lambda" in c for c in columns)
