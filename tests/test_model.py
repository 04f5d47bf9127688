"""The discrete model of THEORY section 1: invariants, reproducibility, batching."""

from __future__ import annotations

import math

import pytest
import torch

import sdeformer as sdf
from problems import antipodal_pair
from sdeformer.config import ModelConfig
from sdeformer.config._batches import run_sweep
from sdeformer.observables import mean_abs_cosine, mean_cosine

SPHERE_TOL = 1e-6


def _model(act="relu", su=0.1, sw=0.1, layers=100, horizon=2.0, width=64, scale=1.0, attention=True):
    attn = sdf.SoftmaxAttention(1.0, scale) if attention else None
    return sdf.StochasticTransformer(layers, horizon, noise=sdf.MLPNoise(act, width, su, sw), attention=attn)


def test_tokens_stay_on_sphere_over_thousands_of_layers():
    x0 = sdf.uniform_sphere(8, 4, seed=1, dtype=torch.float64)
    traj = _model(layers=2000, horizon=20.0, width=32).run(x0, seed=2, saveat=100)
    norms = torch.linalg.vector_norm(traj.x, dim=-1)
    assert (norms - 1).abs().max() < SPHERE_TOL
    assert traj.x.dtype == torch.float64 and traj.steps[-1] == 2000


def test_same_seed_same_output_and_different_seed_differs():
    x0 = sdf.uniform_sphere(6, 5, seed=0)
    m = _model()
    a, b, c = m.run(x0, seed=7), m.run(x0, seed=7), m.run(x0, seed=8)
    assert torch.equal(a.x, b.x)
    assert not torch.allclose(a.final, c.final)


@pytest.mark.kernels
def test_batched_equals_unbatched():
    x0 = sdf.uniform_sphere(6, 5, batch=(3,), seed=0, dtype=torch.float64)
    m = _model()
    batched = m.run(x0, seed=[11, 12, 13])
    for k, s in enumerate([11, 12, 13]):
        single = m.run(x0[k], seed=s)
        assert torch.allclose(batched.x[:, k], single.x, atol=1e-12, rtol=0)


def test_sweep_with_per_setting_parameters_equals_single_runs():
    settings = [(0.0, 1.0, 1.0, 0), (0.2, -1.0, 2.0, 1), (0.1, 0.0, 0.5, 2)]
    cfgs = [
        ModelConfig(
            tokens=5, dim=6, width=32, layers=15, su=s, sw=s / 2, attention_scale=a, beta=b, seed=k, dtype="float64"
        )
        for s, a, b, k in settings
    ]
    for cfg, traj in zip(cfgs, run_sweep(cfgs)):
        single = cfg.build().run(cfg.initial_tokens(), seed=cfg.seed)
        assert torch.allclose(traj.x, single.x, atol=1e-12, rtol=0)


@pytest.mark.parametrize("attention", [False, True])
def test_odd_field_keeps_antipodal_pair_antipodal(attention):
    x0 = antipodal_pair(6)
    traj = _model("tanh", 0.0, 0.0, layers=500, horizon=5.0, attention=attention).run(x0, seed=3)
    assert (traj.x[:, 0] + traj.x[:, 1]).abs().max() < 1e-12
    moved = (traj.final[0] - x0[0]).norm()
    assert moved > 0.1  # the pair did move: the check is not vacuous


def test_even_part_breaks_antipodal_symmetry():
    x0 = antipodal_pair(6)
    traj = _model("tanh", 0.3, 0.3, layers=500, horizon=5.0, attention=False).run(x0, seed=3)
    assert (traj.final[0] + traj.final[1]).abs().max() > 1e-3  # biases make the field not odd


def test_identical_tokens_stay_identical():
    x0 = sdf.uniform_sphere(1, 8, seed=4, dtype=torch.float64).expand(5, 8).clone()
    traj = _model(layers=300, horizon=3.0).run(x0, seed=5)
    assert (traj.final - traj.final[0]).abs().max() < 1e-12
    assert sdf.interaction_energy(traj.final) == pytest.approx(0.0, abs=1e-12)


def test_attention_only_with_identity_value_does_not_raise_energy_beyond_dt_squared():
    """Q^T K = beta I, V = I: eps = 0 (THEORY section 5); a layer may raise E_beta by O(dt^2) at most."""
    x0 = sdf.uniform_sphere(32, 3, seed=6, dtype=torch.float64)
    worst = []
    for layers in (40, 80, 160):
        dt = 8.0 / layers
        m = sdf.StochasticTransformer(layers, 8.0, noise=None, attention=sdf.SoftmaxAttention(2.0, 1.0))
        e = sdf.interaction_energy(m.run(x0).x, beta=2.0)
        assert e[-1] < 0.7 * e[0]  # attraction does gather the tokens
        worst.append(float((e[1:] - e[:-1]).max()) / dt**2)
    assert max(worst) <= 1.0  # named bound: increase per layer <= 1.0 * dt^2 (measured: no increase)


def test_diagnostics_against_exact_answers():
    from problems import energy_bruteforce, three_clusters

    x = sdf.uniform_sphere(7, 5, seed=9, dtype=torch.float64)
    assert float(sdf.interaction_energy(x, 1.5)) == pytest.approx(energy_bruteforce(x, 1.5), rel=1e-12)
    c = three_clusters()
    assert int(sdf.cluster_count(c, 0.99)) == 3
    assert int(sdf.cluster_count(c, -1.0)) == 1  # every pair has cos > -1: one component
    pair = antipodal_pair(3)
    assert float(mean_cosine(pair)) == pytest.approx(-1.0)
    assert float(mean_abs_cosine(pair)) == pytest.approx(1.0)
    assert float(sdf.interaction_energy(pair, 1.0)) == pytest.approx((math.e - math.exp(-1)) / 4)
    batch = torch.stack([x, x.flip(0)])
    assert torch.allclose(sdf.interaction_energy(batch), sdf.interaction_energy(x).expand(2))


@pytest.mark.parametrize(
    "bad,param",
    [
        (torch.full((4, 3), float("nan")), "x0"),
        (torch.ones(3), "x0"),
        (torch.ones(4, 1), "x0"),
        (torch.zeros(2, 3), "x0"),
        (torch.ones(4, 3, dtype=torch.int64), "x0"),
    ],
)
def test_bad_tokens(bad, param):
    with pytest.raises(sdf.ConfigError) as info:
        _model().run(bad)
    assert info.value.parameter == param


@pytest.mark.parametrize(
    "field,value",
    [
        ("tokens", 0),
        ("dim", 1),
        ("width", -3),
        ("layers", 0),
        ("horizon", 0.0),
        ("horizon", float("nan")),
        ("su", -0.1),
        ("activation", "swish"),
        ("attention", "linear"),
        ("dtype", "int8"),
    ],
)
def test_bad_config(field, value):
    with pytest.raises(sdf.ConfigError) as info:
        ModelConfig.from_mapping({field: value})
    assert field in str(info.value)
