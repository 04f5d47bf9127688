"""Kernel theory (THEORY section 2) against closed forms, Monte Carlo and its own limits."""

from __future__ import annotations

import math

import pytest
import torch

import sdeformer as sdf
from problems import relu_dkappa1, relu_kappa1, relu_lambda1, relu_lambda_bar
from sdeformer.core import get_activation

SETTINGS = [(5, 0.0, 0.0), (5, 0.1, 0.3), (16, 0.2, 0.0), (64, 0.1, 0.1), (128, 0.0, 0.5)]
# ReLU has a kink: tensor Gauss-Hermite converges only algebraically, so the quadrature is checked
# against the closed form to this tolerance relative to kappa(1) (measured worst case ~3e-3 at d = 5).
KINK_QUADRATURE_TOL = 5e-3
MC_SAMPLES = 400_000
MC_SIGMAS = 5.0  # Monte Carlo tolerance in standard errors
# -lambda_bar' may exceed a finer grid's minimum of F by this (absolute, or relative above 1): the library refines
# only around its best point of a coarser grid (measured: 5e-8 for silu, d = 16, beta = 2)
LBP_TOL = 1e-6


@pytest.mark.parametrize("d,su,sw", SETTINGS)
def test_relu_closed_forms_match_quadrature(d, su, sw):
    closed = sdf.kernel_theory("relu", d, su=su, sw=sw)
    quad = sdf.kernel_theory(lambda z: torch.relu(z), d, su=su, sw=sw)  # a user callable: quadrature path
    t = torch.linspace(-1, 1, 21, dtype=torch.float64)
    k_closed, k_quad = closed.kappa(t), quad.kappa(t)
    assert torch.allclose(k_quad, k_closed, rtol=0, atol=KINK_QUADRATURE_TOL * closed.kappa1)
    assert closed.kappa1 == pytest.approx(relu_kappa1(d, su, sw), rel=1e-12)
    assert float(closed.kappa(1.0)) == pytest.approx(closed.kappa1, rel=1e-12)
    assert quad.kappa1 == pytest.approx(relu_kappa1(d, su, sw), rel=1e-6)
    assert quad.dkappa1 == pytest.approx(relu_dkappa1(d), rel=1e-2)  # act' is a step: quadrature ~1e-3
    assert closed.lambda_bar == pytest.approx(relu_lambda_bar(d, su, sw), rel=1e-12, abs=1e-14)
    assert closed.lambda1 == pytest.approx(relu_lambda1(d, su, sw), rel=1e-12)


@pytest.mark.parametrize("slope", [0.01, 0.2, -0.5])
def test_leaky_relu_closed_form_matches_quadrature(slope):
    closed = sdf.kernel_theory(f"leaky_relu:{slope}", 8, su=0.1, sw=0.2)
    quad = sdf.kernel_theory(lambda z: torch.where(z > 0, z, slope * z), 8, su=0.1, sw=0.2)
    t = torch.linspace(-1, 1, 21, dtype=torch.float64)
    assert torch.allclose(quad.kappa(t), closed.kappa(t), rtol=0, atol=KINK_QUADRATURE_TOL * closed.kappa1)
    assert quad.kappa1 == pytest.approx(closed.kappa1, rel=1e-6)
    assert quad.dkappa1 == pytest.approx(closed.dkappa1, rel=1e-2)


def test_relu_without_bias_never_synchronizes():
    for d in (4, 5, 64, 128, 1024):
        k = sdf.kernel_theory("relu", d)
        assert k.lambda_bar == pytest.approx(1.0 / d) and k.lambda_bar > 0
        assert not k.synchronizes


def _mc_kappa(act, d, su, sw, t, gen):
    u, v = math.sqrt((1 + t) / (2 * d)), math.sqrt((1 - t) / (2 * d))
    x, y, z = torch.randn(3, MC_SAMPLES, generator=gen, dtype=torch.float64)
    prod = act(u * x + v * y + su * z) * act(u * x - v * y + su * z)
    return float(prod.mean()) + sw**2, float(prod.std()) / math.sqrt(MC_SAMPLES)


@pytest.mark.parametrize("name", ["relu", "leaky_relu:0.2", "gelu", "silu", "sigmoid", "tanh"])
def test_kappa_quadrature_matches_monte_carlo(name):
    gen = torch.Generator().manual_seed(1234)
    for d, su, sw in [(5, 0.0, 0.0), (64, 0.1, 0.1)]:
        k = sdf.kernel_theory(name, d, su=su, sw=sw)
        for t in (-0.9, 0.0, 0.5, 1.0):
            mc, se = _mc_kappa(k.activation, d, su, sw, t, gen)
            assert abs(float(k.kappa(t)) - mc) <= MC_SIGMAS * se + 1e-12, (name, d, t)


def test_smooth_kappa1_equals_kappa_at_one_and_dkappa1_matches_finite_difference():
    for name in ("gelu", "silu", "sigmoid", "tanh"):
        k = sdf.kernel_theory(name, 16, su=0.2, sw=0.1)
        assert float(k.kappa_quadrature(1.0)) == pytest.approx(k.kappa1, rel=1e-10)
        h = 1e-4
        fd = float((k.kappa(1.0) - k.kappa(1.0 - h)) / h)  # one-sided: kappa'(1) = (1/d) E[act'(Z)^2]
        assert fd == pytest.approx(k.dkappa1, rel=2e-3), name


def test_F_tends_to_minus_lambda_bar_and_lambda_bar_prime_is_its_infimum():
    """lambda_bar' = -inf F on [-1, 1) against a fine grid, the limit u -> 1 included (THEORY section 5)."""
    for name, d, s, beta in [
        ("relu", 64, 0.1, 1.0),
        ("tanh", 64, 0.1, 1.0),
        ("silu", 5, 0.0, 1.0),
        ("sigmoid", 128, 0.1, 1.0),
        ("silu", 16, 0.0, 2.0),
        ("relu", 5, 0.0, 1.0),
    ]:
        k = sdf.kernel_theory(name, d, bias_std=s, beta=beta)
        near_one = float(k.F(torch.tensor(1 - 1e-6, dtype=torch.float64)))
        assert near_one == pytest.approx(-k.lambda_bar, rel=1e-3, abs=1e-6)
        fine = torch.linspace(-1, 1 - 1e-9, 5_001, dtype=torch.float64)
        grid_min = float(k.F(fine).min())
        assert -k.lambda_bar_prime <= grid_min + LBP_TOL * max(1.0, abs(grid_min))  # not above the grid minimum
        assert -k.lambda_bar_prime == pytest.approx(min(grid_min, -k.lambda_bar), abs=1e-6)
        assert k.lambda_bar_prime >= k.lambda_bar - 1e-12  # inf F <= F(1) = -lambda_bar


def test_verdicts():
    assert sdf.kernel_theory("relu", 64, bias_std=0.1).synchronizes
    tanh = sdf.kernel_theory("tanh", 64)
    assert tanh.odd_field and not tanh.synchronizes
    assert not sdf.kernel_theory("tanh", 64, bias_std=0.1).odd_field
    assert sdf.kernel_theory("relu", 64, bias_std=0.1).lambda_bar_prime < 0
    assert not sdf.kernel_theory("relu", 3, bias_std=0.5).synchronizes  # d >= 4 is always needed


@pytest.mark.parametrize(
    "kwargs,param",
    [
        (dict(activation="swish"), "activation"),
        (dict(dim=1), "dim"),
        (dict(su=-0.1), "su"),
        (dict(sw=float("nan")), "sw"),
        (dict(beta=0.0), "beta"),
        (dict(bias_std=0.1, su=0.1), "bias_std"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, param):
    args = {"activation": "relu", "dim": 8, **kwargs}
    with pytest.raises(sdf.ConfigError) as info:
        sdf.kernel_theory(args.pop("activation"), args.pop("dim"), **args)
    assert info.value.parameter == param
    assert "\n" not in str(info.value)


def test_activation_registry_derivatives_match_autograd():
    z = torch.linspace(-4, 4, 401, dtype=torch.float64)
    for name in ("gelu", "silu", "sigmoid", "tanh", "leaky_relu:0.3"):
        act = get_activation(name)
        auto = get_activation(act.fn)  # user-callable path: derivative by autograd
        mask = z.abs() > 1e-6  # avoid the kink of leaky_relu
        assert torch.allclose(act.deriv(z)[mask], auto.deriv(z)[mask], atol=1e-12)
        assert auto.odd == act.odd
