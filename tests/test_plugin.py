"""A part added from outside the package (tests/plugin_parts.py: a noise field, an attention, an observable,
registered with one call each) runs through every part of sdeformer without touching it: the discrete model,
the SDE with every solver, batched runs, a sweep spec (local and Dask), partial sharing, the BEYOND section 0
one-step moment test, ``sdeformer simulate --plugin`` and the report's list of the family."""

import json
import math
import os
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

import sdeformer as sdf
from sdeformer.cli import app
from sdeformer.config._batches import run_sweep
from sdeformer.contracts import PairCovariance
from sdeformer.core import Streams
from sdeformer.core._errors import ConfigError
from sdeformer.dynamics._sde import LimitSDE, NoiseFreeSolver, make_solver
from sdeformer.experiments._parts import parts_section
from sdeformer.noise._fields import GaussianField
from sdeformer.noise._partial import PartialNoise
from sdeformer.registry import ATTENTIONS, NOISES, SOLVERS
from sdeformer.sweeps import DaskExecutor, LocalExecutor, parse_spec, read, run
from sdeformer.theory._moments import measured_pair_moments, predicted_pair_moments
from sdeformer.theory._montecarlo import Estimate

PLUGIN = str(Path(__file__).with_name("plugin_parts.py"))
CFG = dict(tokens=6, dim=4, layers=20, horizon=1.0, su=0.1, sw=0.1, dtype="float64")

SDE_SCHEMES = [n for n in SOLVERS.names() if not issubclass(SOLVERS[n].part(), NoiseFreeSolver)]  # with noise


@pytest.fixture(scope="module", autouse=True)
def plugin(plugin_parts):
    """The plugin loaded for this module (conftest.plugin_parts); loading it leaves the environment alone."""
    yield plugin_parts
    assert "SDEFORMER_PLUGINS" not in os.environ


def _config(**changes):
    return sdf.ModelConfig(**{**CFG, "noise": "half_gaussian", "attention": "shifted_softmax", **changes})


def test_config_builds_and_runs_the_plugin_parts():
    cfg = _config()
    model = cfg.build()
    assert type(model.noise).__name__ == "HalfGaussian" and type(model.attention).__name__ == "ShiftedSoftmax"
    traj = model.run(cfg.initial_tokens(), seed=cfg.seed, saveat=5)
    assert traj.x.shape == (5, 6, 4) and torch.allclose(traj.x.norm(dim=-1), torch.ones(5, 6, dtype=torch.float64))


def test_half_gaussian_is_half_the_gaussian_field_in_law(float64):
    """Same normals: the plugin's increment is the Gaussian field's times sqrt(1/2) (a full-strength field fails)."""
    y = sdf.uniform_sphere(6, 4, batch=(3,), seed=1, dtype=torch.float64)
    half = NOISES.build("half_gaussian", _params())
    full = GaussianField("relu", 0.1, 0.1)
    a = half.increment(y, 0.1, Streams([1, 2, 3], (3,)))
    b = full.increment(y, 0.1, Streams([1, 2, 3], (3,)))
    torch.testing.assert_close(a, b * math.sqrt(0.5))
    assert not torch.allclose(a, b, rtol=0.1)


def _params():
    from sdeformer.registry import Params

    return Params(_config())


@pytest.mark.parametrize("scheme", SDE_SCHEMES)
def test_every_solver_runs_the_plugin_with_its_declared_variance(scheme, float64):
    """Plain Euler-Maruyama keeps E|X|^2 = 1 + O(dt) only if the Ito correction uses the right variance: the
    plugin's kappa(1)/2 passes; the same runs corrected with the full kappa(1) drift measurably inwards."""
    field, attention = NOISES.build("half_gaussian", _params()), ATTENTIONS.build("shifted_softmax", _params())
    x0 = sdf.uniform_sphere(4, 4, batch=(256,), seed=2, dtype=torch.float64)
    traj = make_solver(LimitSDE(field, attention), 40, 1.0, scheme).run(x0, seed=list(range(256)), saveat=40)
    norm2 = traj.final.pow(2).sum(-1)  # (256, 4)
    if scheme == "projected":
        torch.testing.assert_close(norm2, torch.ones_like(norm2))
        return
    assert abs(float(norm2.mean()) - 1.0) < 0.02
    wrong = make_solver(LimitSDE(_WrongVariance(field), attention), 40, 1.0, scheme)  # half noise, full correction
    off = wrong.run(x0, seed=list(range(256)), saveat=40).final.pow(2).sum(-1)
    assert float(off.mean()) < 1.0 - 0.1


class _WrongVariance:
    """The plugin field with its variance doubled (the named wrong model of the Ito-correction check)."""

    def __init__(self, field):
        self.field = field

    def increment(self, y, dt, source):
        return self.field.increment(y, dt, source)

    def variance(self, y):
        return 2 * self.field.variance(y)

    def increment_and_variance(self, y, dt, source):
        return self.increment(y, dt, source), self.variance(y)


def test_batched_run_equals_the_unbatched_runs():
    configs = [_config(seed=s, beta=b) for s, b in ((0, 1.0), (1, 2.0), (2, 0.5))]
    batched = run_sweep(configs)
    for cfg, traj in zip(configs, batched):
        alone = cfg.build().run(cfg.initial_tokens(), seed=cfg.seed, saveat=cfg.save_every)
        torch.testing.assert_close(traj.x, alone.x, rtol=0, atol=1e-12)


def test_partial_sharing_uses_the_plugin_one_point_law_and_covariance(float64):
    model = _config(share=0.5).build()
    assert isinstance(model.noise, PartialNoise)
    x = sdf.uniform_sphere(3, 4, seed=3, dtype=torch.float64)
    c = model.noise.pair_covariance(x)  # (3, 3, 4, 4)
    assert isinstance(model.noise.field, PairCovariance)
    own = model.noise.field.pair_covariance(x)
    torch.testing.assert_close(c[0, 1], 0.5 * own[0, 1])
    torch.testing.assert_close(c[1, 1], own[1, 1])
    traj = model.run(sdf.uniform_sphere(6, 4, seed=0, dtype=torch.float64), seed=1)
    assert torch.isfinite(traj.x).all()


def test_one_step_moments_of_the_plugin_match_beyond_0(float64):
    """E du / h and E du^2 / h of one discrete step against the plugin's declared covariance; the Gaussian
    field's (twice as large) is rejected by the same tolerance."""
    field, h = NOISES.build("half_gaussian", _params()), 1e-3
    x = sdf.uniform_sphere(2, 4, seed=4, dtype=torch.float64)
    pred = predicted_pair_moments(x, field.pair_covariance(x))
    meas = measured_pair_moments(sdf.StochasticTransformer(1, h, noise=field).step, x, h, 20000)
    assert isinstance(pred.drift, float) and isinstance(pred.variation, float)  # predicted
    assert isinstance(meas.drift, Estimate) and isinstance(meas.variation, Estimate)  # measured
    tol = 3 * meas.variation.se + 10 * h * (abs(pred.drift) + pred.variation)
    assert abs(meas.variation.mean - pred.variation) <= tol
    assert abs(meas.drift.mean - pred.drift) <= 3 * meas.drift.se + 10 * h * (abs(pred.drift) + pred.variation)
    assert abs(meas.variation.mean - 2 * pred.variation) > tol  # the full-strength covariance fails


SPEC = {
    "name": "plugin",
    "base": {**CFG, "noise": "half_gaussian", "attention": "shifted_softmax", "layers": 10},
    "axes": {"beta": [0.5, 2.0]},
    "seeds": 2,
    "observables": ["energy", "order"],
    "times": [0.0, 1.0],
}


def test_sweep_spec_runs_the_plugin_locally_and_on_dask(tmp_path):
    with LocalExecutor() as ex:
        run(parse_spec(SPEC), tmp_path / "local", ex)
    with DaskExecutor(workers=1) as ex:  # a worker process: the executor's worker plugin loads it
        run(parse_spec(SPEC), tmp_path / "dask", ex)
    local, dask = (read(tmp_path / k).sort_values(["beta", "replicate", "t"]) for k in ("local", "dask"))
    assert len(local) == 8 and local["order"].between(0, 1).all()
    assert local["order"].tolist() == dask["order"].tolist() and local["energy"].tolist() == dask["energy"].tolist()


def test_simulate_command_takes_a_plugin(tmp_path):
    args = ["simulate", "--plugin", PLUGIN, "--noise", "half_gaussian", "--attention", "shifted_softmax"]
    args += ["--tokens", "6", "--dim", "4", "--layers", "10", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["config"]["noise"] == "half_gaussian"
    bad = CliRunner().invoke(app, ["simulate", "--plugin", "no_such_module_xyz", "--json"])
    assert bad.exit_code == 2 and "plugin" in bad.output and "Traceback" not in bad.output


def test_simulate_sets_a_plugins_own_parameter_with_param(tmp_path):
    """``--param noise.fraction=...`` reaches the part: half the fraction is half the noise, so the runs differ;
    a value outside the declared range and an undeclared name are refused in one line."""
    base = ["simulate", "--plugin", PLUGIN, "--noise", "half_gaussian", "--tokens", "6", "--dim", "4"]
    base += ["--layers", "10", "--json"]
    runs = {}
    for fraction in ("0.5", "0.25"):
        result = CliRunner().invoke(app, [*base, "--param", f"noise.fraction={fraction}"])
        assert result.exit_code == 0, result.output
        runs[fraction] = json.loads(result.output)
    assert [runs[f]["config"]["noise.fraction"] for f in ("0.5", "0.25")] == [0.5, 0.25]
    assert runs["0.25"]["energy"] != runs["0.5"]["energy"]
    for bad, named in (("noise.fraction=2", "noise.fraction"), ("noise.gain=1", "noise.gain"), ("fraction", "param")):
        result = CliRunner().invoke(app, [*base, "--param", bad])
        assert result.exit_code == 2 and named in result.output and "Traceback" not in result.output, result.output


def test_report_lists_the_plugin_parts():
    tables = {t.caption.split()[0]: [row[0] for row in t.rows] for t in parts_section().tables}
    assert "half_gaussian" in tables["noise"] and "shifted_softmax" in tables["attention"]
    assert "order" in tables["sweep"]


class _NoVariance:
    @classmethod
    def from_config(cls, p):
        return cls()

    def increment(self, y, dt, source):
        return torch.zeros_like(y)


def test_a_part_missing_a_required_method_is_refused_in_one_line():
    with pytest.raises(ConfigError) as info:
        NOISES.register("no_variance", _NoVariance, claims=("limit",))
    assert "increment_and_variance" in str(info.value) and "variance" in str(info.value)
    assert "\n" not in str(info.value) and "no_variance" not in NOISES
    with pytest.raises(ConfigError, match="from_config"):
        ATTENTIONS.register("no_factory", type("NoFactory", (), {"drift": lambda self, x, source=None: x}))
    with pytest.raises(ConfigError, match="claims"):
        NOISES.register("bad_claim", _NoVariance, claims=("telepathy",))
    with pytest.raises(ConfigError, match="already registered"):
        NOISES.register("mlp", _NoVariance)
    with pytest.raises(ConfigError, match="one_point"):
        PartialNoise(_NoVariance(), 0.5)  # no one_point: partial sharing refuses it


@pytest.mark.parametrize("executor", ["local", "dask"])
def test_sweep_command_takes_a_plugin_and_reaches_the_sde(tmp_path, executor):
    """``sweep --plugin FILE`` with a spec whose base names the plugin's parts and an SDE scheme (``solver:``):
    every run is done, on Dask workers too (the executor's worker plugin loads the file, no environment)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: plug\nbase: {tokens: 5, dim: 3, layers: 6, noise: half_gaussian, attention: shifted_softmax,"
        " solver: projected, bias_std: 0.1}\naxes: {beta: [0.5, 2.0]}\nseeds: 2\nobservables: [energy, order]\n"
    )
    args = ["sweep", str(spec), "--out", str(tmp_path / "out"), "--plugin", PLUGIN, "--json"]
    result = CliRunner().invoke(app, [*args, "--executor", executor, "--workers", "1"])
    assert result.exit_code == 0, result.output
    table = read(tmp_path / "out")
    assert table["status"].tolist().count("done") == 4 and set(table["solver"]) == {"projected"}
    assert table["order"].between(0, 1).all()


def test_a_plugin_declares_parameters_of_its_own():
    """``noise.fraction`` and ``attention.shift`` (tests/plugin_parts.py): set by KIND.NAME in a config, checked
    against their declared range, batched per run; at fraction 1 and shift 0 the plugin is the built-in pair."""
    base = {**CFG, "noise": "half_gaussian", "attention": "shifted_softmax"}
    cfg = sdf.ModelConfig.from_mapping({**base, "noise.fraction": 1.0, "attention.shift": 0.0})
    plain = sdf.ModelConfig.from_mapping({**base, "noise": "gaussian", "attention": "softmax"})
    x0 = cfg.initial_tokens()
    assert torch.equal(cfg.build().run(x0, seed=2).x, plain.build().run(x0, seed=2).x)
    assert sdf.ModelConfig.from_mapping(base).value("noise.fraction") == 0.5  # the declared default
    with pytest.raises(ConfigError, match=r"noise.fraction.*\[0.0, 1.0\]"):
        sdf.ModelConfig.from_mapping({**base, "noise.fraction": 1.5})
    with pytest.raises(ConfigError, match="not declared"):
        sdf.ModelConfig.from_mapping({**base, "noise.gain": 1.0})
    configs = [sdf.ModelConfig.from_mapping({**base, "attention.shift": s}) for s in (0.0, 3.0)]
    batched = run_sweep(configs)  # one batched run, shift a (2,) tensor
    for c, traj in zip(configs, batched):
        assert torch.allclose(traj.x, c.build().run(c.initial_tokens(), seed=c.seed).x, atol=1e-12)
    assert not torch.allclose(batched[0].x, batched[1].x)


@pytest.mark.parametrize("executor", ["local", "dask"])
def test_a_plugins_own_parameter_is_a_sweep_axis(tmp_path, executor):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: own\nbase: {tokens: 5, dim: 3, layers: 6, noise: half_gaussian, attention: shifted_softmax,"
        " bias_std: 0.1, noise.fraction: 0.3}\naxes: {attention.shift: [0.0, 4.0]}\nseeds: 2\nobservables: [order]\n"
    )
    args = ["sweep", str(spec), "--out", str(tmp_path / "out"), "--plugin", PLUGIN, "--json", "--executor", executor]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    ds = sdf.open_sweep(tmp_path / "out")
    assert sorted(ds["attention.shift"].values.tolist()) == [0.0, 4.0] and ds.attrs["noise.fraction"] == 0.3
    assert ds["order"].shape == (2, 2, 1)
