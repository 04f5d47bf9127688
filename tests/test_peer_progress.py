"""``sdeformer peer``'s up-front time estimate and progress lines (docs/peers.md, "Sizes and refusals"; issue
41 item 8). Before: a phase diagram ran silent, with no estimate, for as long as it took."""

from __future__ import annotations

import re
import time

import pytest
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.peers import _estimate, _progress, run

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
    per_beta = _estimate.plan(name, None, SMALL[name]).runs
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
        p = _estimate.plan("simuformer", None, options)
        total, seconds = sum(p.runs), _estimate.estimate(p)
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


PRESETS = {  # every preset, each part, at a size of a second or less: (options, progress lines expected)
    "litm particles": ("litm", ["--part", "particles"], "exact"),
    "litm threshold": ("litm", [], "none"),  # t_crit in closed form: no time loop, no progress line
    "dotm kinetic": ("dotm", ["--part", "kinetic"], "exact"),
    "dotm staircase": ("dotm", ["--beta", "500"], "bound"),  # ends when its tokens merge: at most its bound
    "bruno particles": ("bruno", ["--beta", "20"], "exact"),
    "bruno pde": ("bruno", ["--part", "pde", "--beta", "5"], "exact"),
    "bruno published pde": ("bruno", ["--part", "pde", "--as-published", "--points", "101", "--maxtime", "0.05"],
                            "exact"),
    "simuformer": ("simuformer", ["--batch", "8", "--tokens", "8", "--dim", "4", "--betas", "2", "--maxtime", "2"],
                   "exact"),
    "glpr": ("glpr", ["--batch", "8", "--tokens", "8", "--betas", "2", "--betamax", "3", "--maxtime", "0.1"], "exact"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(PRESETS))
def test_every_preset_prints_its_estimate_before_its_first_progress_line(case, monkeypatch):
    """Issue 41 item 8: every preset (the fixed ones too: litm's particles, dotm's kinetic run and staircase,
    bruno's particles and PDEs) prints its size and memory, then its time estimate, before any progress line;
    the total it announces is the steps the run counts (progress ends at exactly 100 %), or bounds them (dotm's
    staircase). Wrong models it fails: a fixed preset without an estimate (before: litm, dotm, bruno), a total
    that is not the run's (bruno's first PDE row counted: it is u0, not a step), the estimate after the run."""
    monkeypatch.setattr(_progress, "EVERY_S", 0.0)  # a progress line per step
    name, args, kind = PRESETS[case]
    res = CliRunner().invoke(app, ["peer", name, *args, "--json"])
    assert res.exit_code == 0, res.output
    lines = [line for line in res.stderr.splitlines() if line.startswith(f"peer {name}: ")]
    at = next(i for i, line in enumerate(lines) if " (from two short calibrated runs; progress every" in line)
    assert "MiB" in lines[at - 1]  # the size and memory line, then the estimate
    found = re.search(r" for (?:at most )?([\d,]+) ", lines[at])
    assert found, lines[at]
    total = int(found.group(1).replace(",", ""))
    progress = lines[at + 1 :]
    if kind == "none":
        assert not progress
    elif kind == "bound":
        counted = int(progress[-1].split(": ")[1].split()[0].replace(",", ""))
        assert 0 < counted <= total and len(progress) == counted
    else:
        assert len(progress) == total and progress[-1].startswith(f"peer {name}: 100 % ({total:,} / {total:,} steps)")


def test_a_fixed_preset_is_refused_past_its_bounds_before_any_calibration():
    """--max-memory and the published PDE's row bound refuse in one line naming the option, before the
    calibrated runs (no estimate line). Wrong model it fails: a bound checked only when the run allocates."""
    res = CliRunner().invoke(app, ["--max-memory", "1K", "peer", "litm", "--part", "particles"])
    assert res.exit_code == 2 and "(SDEFORMER_MAX_MEMORY / --max-memory)" in res.stderr
    assert "invalid part='particles'" in res.stderr and "calibrated" not in res.stderr
    res = CliRunner().invoke(app, ["peer", "bruno", "--part", "pde", "--as-published", "--maxtime", "1e9"])
    assert res.exit_code == 2 and "invalid --maxtime=1000000000.0: at most 1e+07 rows" in res.stderr
    assert "calibrated" not in res.stderr
