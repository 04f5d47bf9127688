"""``sdeformer peer``'s up-front time estimate and progress lines (docs/peers.md, "Sizes and refusals"; issue
41 item 8). Before: a phase diagram ran silent, with no estimate, for as long as it took."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.peers import _progress, run

SMALL = {  # a phase diagram of a second or so: its step counts and costs, not its science
    "simuformer": {"batch": 8, "tokens": 8, "dim": 4, "heads": 2, "betas": 3, "maxtime": 3.0},
    "glpr": {"batch": 8, "tokens": 8, "dim": 2, "betas": 3, "betamax": 3.0, "maxtime": 0.2},  # steps grow with beta
}


@pytest.mark.parametrize("name", list(SMALL))
def test_the_estimates_step_count_is_the_runs_and_progress_counts_to_it(name, monkeypatch):
    """The total the estimate announces is the number of steps the run takes, beta by beta at the peer's own step
    (glpr's shrinks by sqrt(beta) e^{beta - 1/2}); progress reaches 100 % exactly at the last step. Wrong models it
    fails: a total of betas x the largest beta's steps (glpr), a step counted twice or not at all, a line past 100 %."""
    monkeypatch.setattr(_progress, "EVERY_S", 0.0)  # a line per step
    s = __import__(f"sdeformer.peers._{name}", fromlist=["settings"]).settings(**SMALL[name])
    per_beta = _progress.phase_steps(name, s, _progress.betas_of(name, s, None))
    lines: list[str] = []
    with _progress.reporting(name, sum(per_beta), lines.append):
        run(name, **SMALL[name])
    assert len(lines) == sum(per_beta) and lines[-1].startswith(f"peer {name}: 100 % ({sum(per_beta):,} /")
    assert name == "simuformer" or len(set(per_beta)) == 3  # glpr's three betas take three different step counts


@pytest.mark.slow  # wall times: outside the default suite (a loaded CI machine moves them)
def test_the_time_estimate_is_within_a_factor_of_the_run(monkeypatch):
    """The estimate from the two calibrated runs against the run's own time (interleaved: estimate, run, twice;
    the better ratio of the two, a loaded machine moves single timings). Wrong models it fails: the calibrated
    runs' fixed start counted per step (10x and more for small steps), statistics at every step of the run."""
    options = {"batch": 16, "tokens": 16, "dim": 4, "heads": 2, "betas": 2, "maxtime": 20.0}
    ratios, total = [], 0
    for _ in range(2):
        total, seconds = _progress.estimate("simuformer", None, options)
        began = time.perf_counter()
        run("simuformer", **options)
        ratios.append(seconds / (time.perf_counter() - began))
    assert total == 400 and any(1 / 3 < r < 3 for r in ratios), ratios


def test_peer_prints_the_estimate_then_progress_and_refuses_past_its_bounds(monkeypatch):
    monkeypatch.setattr(_progress, "EVERY_S", 0.0)
    args = ["peer", "simuformer", *sum(([f"--{k}", str(v)] for k, v in SMALL["simuformer"].items()), []), "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    err = res.stderr
    assert "peer simuformer: about " in err and "for 90 steps (from two short calibrated runs" in err
    assert "peer simuformer: 100 % (90 / 90 steps)" in err
    res = CliRunner().invoke(app, ["--max-memory", "1K", *args])
    assert (
        res.exit_code == 2 and "(SDEFORMER_MAX_MEMORY / --max-memory)" in res.stderr and "calibrated" not in res.stderr
    )
    res = CliRunner().invoke(app, ["peer", "glpr", "--maxtime", "1e9"])
    assert res.exit_code == 2 and "invalid --maxtime=1000000000.0: at most 1e+07 steps a run" in res.stderr


PRESETS = {  # the presets of a fixed size: their total announced as they start (``_progress.expect``)
    "litm": ({"part": "particles"}, 4000),
    "dotm": ({"part": "kinetic"}, 4000),  # kinetic.py: T = 400 at dt = 0.1
    "bruno": ({"part": "pde", "as_published": True, "points": 101, "maxtime": 0.05}, 2 * 38),  # two betas' rows
}


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_fixed_presets_total_is_announced_as_it_starts(name, monkeypatch):
    """Wrong models it fails: no total (lines without a share), bruno's first row counted (it is u0, not a step)."""
    monkeypatch.setattr(_progress, "EVERY_S", 0.0)
    options, steps = PRESETS[name]
    lines: list[str] = []
    with _progress.reporting(name, None, lines.append):
        run(name, **options)
    assert len(lines) == steps and lines[-1].startswith(f"peer {name}: 100 % ({steps:,} / {steps:,} steps)")
