"""`sdeformer spde`: a resumable run folder tied to its settings, JSON output, the figure, one-line errors."""

import json

import pytest
from typer.testing import CliRunner

from sdeformer.cli import app

ARGS = ["spde", "--modes", "24", "--steps", "10", "--horizon", "0.3", "--particles", "300", "--save-every", "5"]


def test_spde_command_writes_a_resumable_run(tmp_path):
    out = tmp_path / "run"
    first = CliRunner().invoke(app, [*ARGS, "--out", str(out), "--json"])
    assert first.exit_code == 0, first.output
    result = json.loads(first.output.strip().splitlines()[-1])
    assert abs(result["mass_drift"]) < 1e-12 and result["resolution"]["first_unresolved_time"] is None
    assert 0 < result["distance_low"] < 0.5
    assert {p.name for p in out.iterdir()} >= {"run.json", "spde.json", "spde.npz", "spde.png"}
    again = CliRunner().invoke(app, [*ARGS, "--out", str(out), "--json"])
    assert json.loads(again.output.strip().splitlines()[-1]) == result  # read back, not recomputed
    other = CliRunner().invoke(app, [*ARGS[:-2], "--save-every", "2", "--out", str(out)])
    assert other.exit_code == 2 and "another config" in other.output


@pytest.mark.parametrize(
    "bad", [["--dim", "4"], ["--attention", "l2"], ["--modes", "0"], ["--noise-scale", "-1"], ["--activation", "x"]]
)
def test_spde_command_bad_input_is_one_line(bad):
    res = CliRunner().invoke(app, ["spde", *bad])
    assert res.exit_code == 2 and "invalid" in res.output


def test_spde_command_on_the_sphere_prints_a_summary():
    res = CliRunner().invoke(app, ["spde", "--dim", "3", "--modes", "6", "--steps", "4", "--horizon", "0.2"])
    assert res.exit_code == 0 and "d = 3, 6 modes" in res.output and "mass drift" in res.output


@pytest.mark.slow
def test_report_part_quick(tmp_path):
    """`reproduce spde` (quick): every check passes, the three figures and the section are written."""
    from sdeformer.experiments._spde.run import run_and_write, sections
    from sdeformer.plots._spde import report_figures

    report = run_and_write(tmp_path, quick=True)
    assert all(r["rel_error"] < 0.01 for r in report.rates)
    assert all(r["theory"] == r["measured"] for r in report.dominant)
    assert all(r["passes"] for r in report.moments)
    assert all(-0.7 < r["slope"] < -0.35 for r in report.convergence)  # resolution reported (32 paths), per path
    paths = report_figures(report, tmp_path)
    assert all(p.stat().st_size > 10_000 for p in paths)
    (section,) = sections(report)
    assert len(section.tables) == 10 and len(section.figures) == 4
