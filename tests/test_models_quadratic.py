"""The random quadratic form (BEYOND section 4): covariance, one-step moments, P(antipodal) = theta_0 / pi,
E<X_t, X_0> = exp(-(n - 1) t / 2), the limit SDE, and synchronization under forcing vs the rate bound."""

import dataclasses
import math

import pytest
import torch

from sdeformer.checks import _quadratic as cq
from sdeformer.checks._power import QUICK
from sdeformer.core._errors import ConfigError
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.dynamics._sde import LimitSDE, make_solver
from sdeformer.noise._quadratic import QuadraticForm
from sdeformer.noise._sources import BulkSource
from sdeformer.theory import _quadrature as q
from sdeformer.theory._moments import measured_pair_moments, predicted_pair_moments
from sdeformer.theory._montecarlo import Estimate, two_tokens

DRAWS = 100000


def test_bad_forcing_is_config_error():
    with pytest.raises(ConfigError, match="forcing"):
        QuadraticForm(-1.0)


@pytest.mark.parametrize("gamma", [0.0, 0.7])
def test_covariance_and_one_point_law(gamma):
    f, x = QuadraticForm(gamma), two_tokens(0.3, 3, 1)[0]
    exact = f.pair_covariance(x)  # (2, 2, d, d)
    xi = f.increment(x.expand(DRAWS, 2, 3), 1.0, BulkSource.seeded(0, (DRAWS,)))
    assert (torch.einsum("ria,rjb->ijab", xi, xi) / DRAWS - exact).abs().max() < 6 * 2 * math.sqrt(2 / DRAWS)
    own = f.one_point(x.expand(DRAWS, 2, 3), 1.0, BulkSource.seeded(1, (DRAWS,)))
    emp = torch.einsum("ria,rjb->ijab", own, own) / DRAWS
    assert (emp[0, 0] - exact[0, 0]).abs().max() < 0.05 and emp[0, 1].abs().max() < 0.05


@pytest.mark.parametrize("dim", [3, 6])
def test_one_step_moments_dimension_free(dim, float64):
    """E du / h = -2u(1 - u^2), E du^2 / h = 4(1 - u^2)^2 in any dimension (BEYOND 0 and 4)."""
    h, u = 1e-3, 0.4
    x = two_tokens(u, dim, 1)[0]
    f = QuadraticForm()
    pred = predicted_pair_moments(x, f.pair_covariance(x))
    a, b2 = q.quadratic_form_coefficients()
    assert pred.drift == pytest.approx(a(u)) and pred.variation == pytest.approx(b2(u))
    meas = measured_pair_moments(StochasticTransformer(1, h, noise=f).step, x, h, 20000)
    assert isinstance(pred.drift, float) and isinstance(pred.variation, float)  # predicted
    assert isinstance(meas.drift, Estimate) and isinstance(meas.variation, Estimate)  # measured
    assert abs(meas.drift.mean - pred.drift) <= 3 * meas.drift.se + 20 * h
    assert abs(meas.variation.mean - pred.variation) <= 3 * meas.variation.se + 20 * h


def test_exit_prediction_is_the_arcsin_scale_function():
    a, b2 = q.quadratic_form_coefficients()
    for theta in (0.25, 0.5, 0.75):
        u0, end = math.cos(theta * math.pi), math.asin(1 - cq.DELTA)
        expected = (end - math.asin(u0)) / (2 * end)
        assert q.exit_probability(a, b2, u0, -1 + cq.DELTA, 1 - cq.DELTA) == pytest.approx(expected, abs=1e-9)


def test_half_angle_is_a_symmetry_test_and_a_shared_bias_breaks_it(one_thread):
    """Point 6: at theta_0 = pi/2 the prediction 1/2 is the sign symmetry; the power records are a shared bias
    of 10 % and 20 % of the noise, which breaks it (at d = 10 the 20 % bias is caught)."""
    sym = cq.antipodal(0.5, 10, paths=600, power=QUICK)
    assert sym.extra["role"] == "symmetry test" and sym.holds and sym.smallest_error_caught == 0.2
    assert "shared bias" in sym.powers[-1].perturbation
    law = cq.antipodal(0.25, 3, paths=600, power=QUICK)
    assert law.extra["role"] == "law" and law.verdict != "fails"


def test_forcing_check_is_about_the_distance_to_the_attractor(one_thread):
    """Point 7: the fitted decay rate of E dist(X_t, attractor) (a reference token started a horizon earlier)
    against the bound rate lambda, with its jackknife s.e. and step bias; the bound is not tight, so a forcing
    cut by 10-20 % is not caught and the record says so."""
    c = cq.forcing_rate(1.0, 3, paths=150, power=QUICK)
    assert c.quantity == "rate_bound_minus_fitted_rate" and c.bound == "at_most" and c.verdict != "fails", c
    assert c.extra["rate_bound"] == pytest.approx(0.8) and c.extra["measured_rate_se"] > 0
    assert c.measured == pytest.approx(c.extra["rate_bound"] - c.extra["measured_rate"])
    record = c.record()
    assert record["size_80"] is not None or record["reason"]
    assert record["catch_sides"] == [1] and record["catch_rate"]["-0.2"] == 0.0  # a stronger forcing: never
    slow = dataclasses.replace(c, measured=c.tolerance + 0.1)  # a rate below the bound by more than the tolerance
    assert slow.verdict == "fails"


def test_sde_keeps_one_token_brownian(one_thread, float64):
    """The limit SDE (Ito form): E<X_t, X_0> = exp(-(n - 1) t / 2)."""
    paths, t, dim = 4000, 1.0, 4
    x0 = torch.zeros(paths, 1, dim)
    x0[..., 0] = 1.0
    solver = make_solver(LimitSDE(QuadraticForm()), 50, t)
    final = solver.run(x0, streams=BulkSource.seeded(0, (paths,)), saveat=50).x[-1]
    mean, se = float(final[:, 0, 0].mean()), float(final[:, 0, 0].std()) / math.sqrt(paths)
    assert abs(mean - math.exp(-(dim - 1) * t / 2)) <= 3 * se + 0.01


@pytest.mark.slow
@pytest.mark.parametrize("dim", [3, 10])
@pytest.mark.parametrize("theta", [0.25, 0.5, 0.75])
def test_antipodal_probability_is_angle_over_pi(theta, dim, one_thread):
    assert (c := cq.antipodal(theta, dim, power=QUICK)).verdict != "fails", c


@pytest.mark.slow
@pytest.mark.parametrize("dim", [3, 10])
def test_one_token_autocorrelation(dim, one_thread):
    assert (c := cq.autocorrelation(dim, 0.5, paths=1000, power=QUICK)).holds, c


@pytest.mark.slow
@pytest.mark.parametrize("gamma,dim", [(1.0, 3), (2.0, 3), (1.0, 6)])
def test_forcing_synchronizes_within_the_bound(gamma, dim, one_thread):
    assert (c := cq.forcing_rate(gamma, dim, paths=500, power=QUICK)).verdict != "fails", c
