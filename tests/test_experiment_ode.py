"""The experiment added as one registered module (experiments/_ode.py): the discrete model without noise
converges to the limit ODE at order 1 in dt (THEORY section 3, k = 0), and the check rejects a 10 % error."""

from __future__ import annotations

import json

import pytest

from sdeformer.experiments import _ode as ode
from sdeformer.experiments._registry import EXPERIMENTS, Context

TINY = ode.OdeSettings(tokens=4, dim=3, first=32, depths=3, starts=2)


def test_the_discrete_model_is_a_first_order_scheme_for_the_ode_and_a_10_percent_error_fails():
    result = ode.run(TINY)
    assert abs(result.slope - 1) <= ode.SLOPE_TOL and result.holds
    assert all(e1 > e2 for e1, e2 in zip(result.error, result.error[1:]))  # the error falls with dt
    assert result.smallest_error_caught == pytest.approx(0.1)  # attention x1.1 does not converge: rejected
    assert all(abs(s - 1) > ode.SLOPE_TOL for s in result.wrong_slopes.values())


def test_the_registered_experiment_writes_its_section_and_figure_and_reuses_its_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(ode.OdeSettings, "quick", classmethod(lambda cls: TINY))
    experiment = EXPERIMENTS["ode"]
    assert experiment.progress_units(0, True, {}) == TINY.depths and "ode" in EXPERIMENTS.names()
    assert experiment.progress_units(0, True, {"depths": 9}) == 9  # the progress units follow a declared setting
    sections = experiment.run(Context(tmp_path, quick=True))
    assert (tmp_path / "ode" / ode.FIGURE).stat().st_size > 0
    assert "Fitted order" in sections[0].paragraphs[0]
    cached = json.loads((tmp_path / "ode" / "ode.json").read_text())
    monkeypatch.setattr(ode, "run", lambda *a, **k: pytest.fail("recomputed a cached result"))
    again = experiment.run(Context(tmp_path, quick=True))
    assert again[0].paragraphs == sections[0].paragraphs and cached["slope"] == pytest.approx(
        json.loads((tmp_path / "ode" / "ode.json").read_text())["slope"]
    )


def test_every_registered_experiment_is_a_command_of_its_own():
    """``sdeformer NAME`` exists for every experiment of the registry (generated where there is no hand-written
    command: ``cli._generate.experiment_commands``), and ``sdeformer ode --help`` shows the registry's doc."""
    import typer
    from typer.testing import CliRunner

    from sdeformer.cli import app

    assert {n for n in EXPERIMENTS.names() if " " not in n} <= set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    result = CliRunner().invoke(app, ["ode", "--help"])
    assert result.exit_code == 0 and "noise-free limit ODE" in result.output and "--quick" in result.output


def test_the_experiments_declared_settings_are_options_of_its_command(tmp_path):
    """``sdeformer ode --set NAME=VALUE``: a declared setting reaches the run (3 depths, 6 tokens), an undeclared
    or out-of-range one is refused in one line, and the folder belongs to the settings it was made with."""
    from typer.testing import CliRunner

    from sdeformer.cli import app

    out = tmp_path / "ode"
    result = CliRunner().invoke(app, ["ode", "--out", str(out), "--quick", "--set", "depths=3", "--set", "tokens=6"])
    assert result.exit_code == 0, result.output
    record = json.loads((out / "ode" / "ode.json").read_text())
    assert len(record["layers"]) == 3
    for bad, named in (("depths=2", "depths"), ("width=8", "width"), ("depths", "set")):
        refused = CliRunner().invoke(app, ["ode", "--out", str(tmp_path / "other"), "--set", bad])
        assert refused.exit_code == 2 and named in refused.output and "Traceback" not in refused.output
    again = CliRunner().invoke(app, ["ode", "--out", str(out), "--quick"])  # other settings, same folder
    assert again.exit_code == 2 and "another config" in again.output
