"""The synchronization theorem of THEORY section 5: lambda_bar_prime and the energy bound."""

import math

import pytest
import torch

from sdeformer.errors import ConfigError
from sdeformer.experiments.sync import run_and_write, sync_check
from sdeformer.kernel import kernel_theory

FINE_GRID = 16_001  # points of [-1, 1) for the brute-force infimum (quadrature kappa: 16k x 96^2 evaluations)
LBP_TOL = 1e-6  # lambda_bar_prime may exceed -min_grid F only by this (relative; grid min >= true min)


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize(
    "act,d,sigma,beta", [("relu", 64, 0.1, 1.0), ("tanh", 5, 0.1, 1.0), ("silu", 16, 0.0, 2.0), ("relu", 5, 0.0, 1.0)]
)
def test_lambda_bar_prime_is_minus_min_of_F_on_a_fine_grid(act, d, sigma, beta):
    th = kernel_theory(act, d, bias_std=sigma, beta=beta)
    u = torch.linspace(-1.0, 1.0, FINE_GRID, dtype=torch.float64)[:-1]  # [-1, 1)
    brute = -float(th.F(u).min())
    brute = max(brute, th.lambda_bar)  # the limit u -> 1 belongs to the infimum
    assert brute - 1e-12 <= th.lambda_bar_prime <= brute + LBP_TOL * max(1.0, abs(brute))


def test_energy_decays_within_the_bound_where_the_theorem_applies(tmp_path):
    r = run_and_write(
        tmp_path, activation="relu", dim=16, bias_std=0.3, runs=16, tokens=8, steps=200, horizon=4.0, seed=1
    )
    assert r.theorem_applies and r.lambda_bar_prime < 0 and r.eps == 0.0
    assert r.bound_holds
    for key in ("sde", "discrete"):
        assert r.energy_mean[key][-1] < 0.1 * r.energy_mean[key][0]  # synchronizes
        assert r.measured_rate[key] <= r.predicted_rate + 0.1
    for name in ("energies.npz", "sync.json", "sync.png"):
        assert (tmp_path / name).exists(), name


def test_repulsive_attention_gets_a_positive_eps():
    r = sync_check("relu", 16, 0.3, attention_scale=-1.0, runs=4, tokens=8, steps=50, horizon=1.0)
    assert r.eps > 0 and math.isfinite(r.eps)


def test_sync_check_bad_input():
    with pytest.raises(ConfigError):
        sync_check(runs=1)
    with pytest.raises(ConfigError):
        sync_check(horizon=-1.0)
    with pytest.raises(ConfigError):
        sync_check(activation="swish")
