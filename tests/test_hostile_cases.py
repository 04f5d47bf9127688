"""The hostile tester's groups of issue 41 that are not the peers' (docs/bad-inputs.md, "Run-time refusals"): each
case one line and exit 2 (or, for a sweep that computed nothing, exit 1 and a line saying so), never a traceback
or a silent wrong answer. Each test names the wrong behaviour it fails: the traceback or the exit 0 of before."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import sdeformer as sdf
import sdeformer.cli._sweep  # registers `sdeformer sweep`
from sdeformer.cli import app
from sdeformer.config import load_config_file
from sdeformer.core._errors import ConfigError
from sdeformer.sweeps import _task as task_module

ROOT = Path(__file__).resolve().parents[1]
SMOKE = load_config_file(ROOT / "examples" / "sweeps" / "smoke.yaml")
SMALL = {
    **SMOKE,
    "axes": {"activation": ["relu"], "beta": [0.5, 1.0], "attention_scale": [1.0]},
    "base": {**SMOKE["base"], "layers": 4, "horizon": 1.0},
    "seeds": 2,
    "times": [0.0, 1.0],
    "batch": 4,
}


def one_line(res) -> str:
    assert "Traceback" not in res.output, res.output
    return res.output


@pytest.mark.parametrize("norm", ["pre", "peri", "mix:0.5"])
@pytest.mark.parametrize("solver", ["projected", "euler"])
def test_the_limit_sde_of_a_scheme_with_a_radius_is_refused_at_build_time(norm, solver):
    """Before: ``TypeError: isfinite() got a tuple`` after the run (simulate) or a tuple where tokens are read."""
    with pytest.raises(ConfigError, match=rf"invalid norm='{norm}': with solver='{solver}'.*\(theta, r\)"):
        sdf.ModelConfig(solver=solver, norm=norm)
    res = CliRunner().invoke(app, ["simulate", "--solver", solver, "--norm", norm])
    assert res.exit_code == 2 and "norm" in one_line(res)


def test_the_schemes_on_the_sphere_still_take_the_limit_sde():
    cfg = sdf.ModelConfig(solver="projected", norm="sqrt", tokens=4, dim=3, width=8, layers=4)
    final = cfg.build().run(cfg.initial_tokens(), seed=1).final  # sqrt-scaling (and nGPT) stay on the sphere
    assert final.shape == (4, 3) and bool(final.isfinite().all())


def test_a_sweep_whose_runs_all_fail_exits_non_zero_and_says_so(tmp_path, monkeypatch, one_thread):
    """Before: every run recorded as an error and exit 0."""

    def broken(configs, device="cpu"):
        raise RuntimeError("boom")

    monkeypatch.setattr(task_module.engine, "run_group", broken)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SMALL))
    res = CliRunner().invoke(app, ["sweep", "run", str(spec), "--out", str(tmp_path / "out")])
    assert res.exit_code == 1 and "every one of the 4 runs that ran failed" in one_line(res)
