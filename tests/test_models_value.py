"""Value-matrix noise (BEYOND section 2): covariance, one-step moments against the two-token SDE, the
scale-function P(antipodal) and the threshold beta_c(d)."""

import math

import pytest
import torch

from sdeformer.core.errors import ConfigError
from sdeformer.core.sphere import uniform_sphere
from sdeformer.dynamics.discrete import StochasticTransformer
from sdeformer.noise.sources import BulkSource
from sdeformer.noise.value import ValueNoise
from sdeformer.theory import checks_value as cv
from sdeformer.theory import quadrature as q
from sdeformer.theory.moments import measured_pair_moments, predicted_pair_moments
from sdeformer.theory.montecarlo import two_tokens

BEYOND_P = {(5, 1.0): 0.021, (5, 2.0): 0.189, (5, 4.0): 0.331, (16, 2.0): 0.015, (16, 4.0): 0.203, (16, 8.0): 0.337}


@pytest.mark.parametrize("dim,beta", sorted(BEYOND_P))
def test_scale_function_reproduces_beyond_numbers(dim, beta):
    assert q.value_noise_antipodal(beta, dim) == pytest.approx(BEYOND_P[dim, beta], abs=1.5e-3)


@pytest.mark.parametrize("dim", [3, 5, 16])
def test_antipodal_probability_vanishes_exactly_below_beta_c(dim):
    bc = q.value_noise_beta_c(dim)
    if bc > 0:
        assert q.value_noise_antipodal(bc * 0.9, dim) == 0.0
    assert q.value_noise_antipodal(bc + 0.2, dim) > 0.0
    assert cv.antipode_exponent_theory(bc, dim) == pytest.approx(0.0, abs=1e-12)


def test_bad_parameters_are_config_errors():
    with pytest.raises(ConfigError, match="sigma"):
        ValueNoise(1.0, sigma=0.0)
    with pytest.raises(ConfigError, match="beta"):
        ValueNoise(-1.0)


def test_covariance_of_increments():
    draws, f = 50000, ValueNoise(1.5)
    x = uniform_sphere(3, 4, seed=0, dtype=torch.float64)
    xi = f.increment(x.expand(draws, 3, 4), 1.0, BulkSource.seeded(0, (draws,)))
    emp = torch.einsum("ria,rjb->ijab", xi, xi) / draws
    assert (emp - f.pair_covariance(x)).abs().max() < 6 * 0.25 * math.sqrt(2 / draws)


@pytest.mark.parametrize("beta", [0.5, 3.0])
def test_one_step_moments_match_two_token_sde(beta, float64):
    d, u, h = 5, -0.2, 1e-3
    x, f = two_tokens(u, d, 1)[0], ValueNoise(beta)
    pred = predicted_pair_moments(x, f.pair_covariance(x))
    a, b2 = q.value_noise_coefficients(beta, d)
    assert pred.drift == pytest.approx(float(a(u))) and pred.variation == pytest.approx(float(b2(u)))
    meas = measured_pair_moments(StochasticTransformer(1, h, noise=f).step, x, h, 20000)
    assert abs(meas.drift.mean - pred.drift) <= 3 * meas.drift.se + 20 * h
    assert abs(meas.variation.mean - pred.variation) <= 3 * meas.variation.se + 20 * h


def test_antipode_exponent_sign_fast(one_thread):
    c = cv.antipode_exponent(1.6, 5, h=0.01, horizon=2.0, paths=600)
    assert c.holds and c.measured < 0, c


@pytest.mark.slow
@pytest.mark.parametrize("dim", [3, 5, 16])
def test_antipode_exponent_changes_sign_at_beta_c(dim, one_thread):
    bc = q.value_noise_beta_c(dim)
    for beta in (bc - 0.4, bc + 0.4) if bc > 0.4 else (bc + 0.4,):  # d = 3: beta_c = 0, no point below
        c = cv.antipode_exponent(beta, dim, paths=1000)
        assert c.holds and (c.measured < 0) == (beta > bc), c


@pytest.mark.slow
@pytest.mark.parametrize("dim,beta", [(3, 0.5), (3, 2.0), (5, 1.2), (5, 2.0), (5, 4.0), (16, 4.0)])
def test_antipodal_probability_against_scale_function(dim, beta, one_thread):
    assert (c := cv.antipodal(beta, dim, h=0.02, horizon=80.0 if dim < 16 else 160.0, paths=1000)).holds, c
