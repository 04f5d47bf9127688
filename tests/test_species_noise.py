"""Two species with their own noise through configs (BEYOND section 9): ``cross_noise`` = "own" draws the field
independently for the encoder Y and the decoder X (``species.SpeciesNoise``), "shared" (the default, the numbers
and hashes of before) evaluates one common field at both; configs, batched runs, sweeps and ``simulate``."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.config import ModelConfig, _batches as engine
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._species import SpeciesNoise, TwoSpecies
from sdeformer.io._hashing import config_hash
from sdeformer.noise._mlp import MLPNoise
from sdeformer.sweeps import parse_spec, run

NX, NY, D = 5, 4, 3
RUNS = 4000  # the correlation's standard error is 1 / sqrt(RUNS) = 0.016
CORR_TOL = 5 / RUNS**0.5  # |corr| of independent increments (5 standard errors)
SMALL: dict[str, Any] = dict(
    tokens=NX + NY, dim=D, width=32, layers=12, attention="graph", cross=NY, beta=2.0, dtype="float64"
)


def two_species(cfg: ModelConfig, mode: str, seed: int):
    """The config's run as ``TwoSpecies`` (X, Y) -> the joint tokens [Y; X]."""
    z0 = cfg.initial_tokens()
    model = TwoSpecies(cfg.layers, cfg.horizon, noise=MLPNoise("relu", cfg.width), mode=mode, beta=cfg.beta)
    x, y = model.run(z0[NY:], z0[:NY], seed=seed).x
    return torch.cat([y, x], dim=-2)


def test_the_default_is_shared_with_the_hash_and_the_field_of_before():
    cfg = ModelConfig(**SMALL)
    assert cfg.cross_noise == "shared" and "cross_noise" not in cfg.to_dict()
    assert config_hash(cfg.to_dict()) == config_hash(ModelConfig(**SMALL, cross_noise="shared").to_dict())
    assert isinstance(cfg.build().noise, MLPNoise)  # the field itself, as before the field existed
    own = cfg.replace(cross_noise="own")
    assert own.to_dict()["cross_noise"] == "own" and ModelConfig.from_mapping(own.to_dict()) == own
    assert config_hash(own.to_dict()) != config_hash(cfg.to_dict())
    assert isinstance(own.build().noise, SpeciesNoise)


@pytest.mark.parametrize("mode", ["shared", "own"])
def test_a_config_is_the_two_species_model_bit_for_bit(mode):
    cfg = ModelConfig(**SMALL, cross_noise=mode, seed=3)
    traj = cfg.build().run(cfg.initial_tokens(), seed=cfg.seed)
    assert torch.equal(traj.x, two_species(cfg, mode, cfg.seed))
    other = "own" if mode == "shared" else "shared"
    assert not torch.equal(traj.x[-1], two_species(cfg, other, cfg.seed)[-1])  # the check can fail


def increments(mode: str) -> torch.Tensor:
    """One layer's noise increments of a config's field at [Y; X] with decoder token 0 on encoder token 0,
    over RUNS runs, ``(RUNS, N, d)``."""
    model = ModelConfig(**SMALL, cross_noise=mode).build()
    z = uniform_sphere(NX + NY, D, seed=7, dtype=torch.float64).expand(RUNS, -1, -1).clone()
    z[:, NY] = z[:, 0]  # the first decoder token coincides with the first encoder token
    assert model.noise is not None
    return model.noise.increment(z, model.dt, Streams(list(range(RUNS)), (RUNS,)))


def correlation(a: torch.Tensor, b: torch.Tensor) -> float:
    """The correlation over runs of two increments ``(RUNS, d)``, pooled over the coordinates."""
    a, b = a - a.mean(0), b - b.mean(0)
    return float((a * b).sum() / (a.pow(2).sum() * b.pow(2).sum()).sqrt())


def test_own_noise_is_independent_across_species_and_shared_noise_common():
    shared, own = increments("shared"), increments("own")
    assert correlation(shared[:, 0], shared[:, NY]) > 0.999  # coinciding tokens, one field: the same increment
    assert abs(correlation(own[:, 0], own[:, NY])) < CORR_TOL  # two independent fields
    # within a species own noise is still the common field: two encoder tokens correlate as under shared noise
    assert abs(correlation(own[:, 0], own[:, 1]) - correlation(shared[:, 0], shared[:, 1])) < CORR_TOL


def test_batched_runs_and_sweeps_split_the_noise_per_species(tmp_path):
    configs = [ModelConfig(**SMALL, cross_noise="own", seed=s) for s in (3, 4)]
    for c, traj in zip(configs, engine.run_sweep(configs)):
        torch.testing.assert_close(traj.x, two_species(c, "own", c.seed), rtol=0, atol=1e-12)
    base = {k: v for k, v in SMALL.items() if k != "cross"}
    spec = parse_spec({"name": "own", "base": {**base, "cross": NY}, "axes": {"cross_noise": ["shared", "own"]},
                       "seeds": 3, "observables": ["energy"], "times": "final"})  # fmt: skip
    out = run(spec, tmp_path)
    assert out["done"] == 6 and out["error"] == 0
    df = pd.read_parquet(tmp_path / "table")
    assert sorted(set(df["cross_noise"])) == ["own", "shared"]


@pytest.mark.parametrize(
    "change, match",
    [({"cross_noise": "both"}, "cross_noise"), ({"cross_noise": 1}, "cross_noise"),
     ({"cross_noise": "own", "cross": 0}, "cross = K > 0")],
)  # fmt: skip
def test_bad_species_noise_is_one_config_error(change, match):
    with pytest.raises(ConfigError, match=match) as info:
        ModelConfig(**{**SMALL, **change})
    assert "\n" not in str(info.value)


def test_simulate_takes_the_flag(tmp_path):
    runner = CliRunner()
    args = ["simulate", "--tokens", "9", "--dim", "3", "--width", "16", "--layers", "4", "--attention", "graph"]
    own = runner.invoke(app, [*args, "--cross", "4", "--cross-noise", "own", "--json"])
    shared = runner.invoke(app, [*args, "--cross", "4", "--json"])
    assert own.exit_code == 0 and shared.exit_code == 0, own.output
    assert json.loads(own.stdout)["final_energy"] != json.loads(shared.stdout)["final_energy"]
    off = runner.invoke(app, [*args, "--cross", "4", "--cross-noise", "own", "--no-mlp"])
    assert off.exit_code == 2 and "cross_noise" in off.stderr
