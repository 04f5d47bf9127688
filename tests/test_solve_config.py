"""A config reaches every model: ``solver:`` builds the SDE scheme of THEORY section 3 from the same parts that
build the discrete model, through ``ModelConfig.build``, ``run_sweep`` (batched) and sweep specs."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import sdeformer as sdf
from sdeformer.core._errors import ConfigError

BASE: dict[str, Any] = dict(tokens=6, dim=3, layers=12, horizon=1.0, width=32, su=0.1, sw=0.2, dtype="float64")


@pytest.mark.parametrize("scheme", ["euler", "projected"])
def test_a_config_with_a_solver_runs_the_limit_sde_of_its_parts(scheme):
    cfg = sdf.ModelConfig(**BASE, beta=2.0, solver=scheme)
    x0 = cfg.initial_tokens()
    got = cfg.build().run(x0, seed=3).x
    # the MLP's limit is the Gaussian field of its kernel (THEORY section 3)
    sde = sdf.LimitSDE(sdf.GaussianField("relu", su=0.1, sw=0.2), sdf.SoftmaxAttention(beta=2.0, scale=1.0))
    want = sdf.make_solver(sde, steps=12, horizon=1.0, scheme=scheme).run(x0, seed=3).x
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    discrete = cfg.replace(solver="").build().run(x0, seed=3).x
    assert not torch.allclose(got, discrete)  # not the discrete model under another name


def test_batched_sde_runs_equal_their_unbatched_runs():
    configs = [sdf.ModelConfig(**BASE, beta=b, seed=s, solver="projected") for b in (1.0, 3.0) for s in (0, 1)]
    batched = sdf.run_sweep(configs)
    for cfg, traj in zip(configs, batched):
        alone = cfg.build().run(cfg.initial_tokens(), seed=cfg.seed)
        torch.testing.assert_close(traj.x, alone.x, rtol=1e-12, atol=1e-12)


def test_bad_solvers_are_refused_naming_the_parameter():
    with pytest.raises(ConfigError, match="scheme"):
        sdf.ModelConfig(**BASE, solver="leapfrog")
    with pytest.raises(ConfigError, match="solver"):
        sdf.ModelConfig(**BASE, noise="mlp", sampling="direct", solver=3)  # type: ignore[arg-type]


def test_the_discrete_models_config_hash_is_unchanged():
    assert "solver" not in sdf.ModelConfig(**BASE).to_dict()
    assert sdf.ModelConfig(**BASE, solver="euler").to_dict()["solver"] == "euler"


def test_noise_off_is_the_noise_free_model_with_the_hash_of_mlp_false():
    """``noise: off`` names what ``mlp: false`` does (any noise model off); both are one config, one hash, one
    run (the noise-free limit ODE with ``solver``)."""
    from sdeformer.io._hashing import config_hash

    off = sdf.ModelConfig(noise="off", tokens=4, dim=3, layers=5)
    old = sdf.ModelConfig(mlp=False, tokens=4, dim=3, layers=5)
    assert off == old and config_hash(off.to_dict()) == config_hash(old.to_dict()) and not off.mlp
    assert sdf.ModelConfig.from_mapping({"noise": "off", "solver": "euler", "tokens": 4, "dim": 3}).build() is not None
