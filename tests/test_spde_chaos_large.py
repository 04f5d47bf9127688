"""Propagation of chaos on the circle to large N and the energy's fluctuation along the dynamics (THEORY sections
4-5, docs/spde.md section 9, "To a million particles"): the O(N log N) W_2 at the large-N check's levels against an
exact assignment, the i.i.d. reference of the energy law at t = 0 against ``theory.energy_law``'s closed form, and
the slope machinery against wrong models (a mismatched density, a cloud with a covariance error, stratified
clouds whose energy fluctuates faster than N^-1/2)."""

import math

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from sdeformer.checks._spde import chaos_large as large
from sdeformer.checks._spde.chaos import _solver, w2_circle
from sdeformer.spde._initial import von_mises_fisher
from sdeformer.theory._energy_law import predicted

SIZES = (100, 1000, 10000)
WRONG = 2.0  # noise covariance x 2 (x 1.5 is near the edge with 3 paths: interval tops -0.46 .. -0.45)


def _c0() -> np.ndarray:
    return von_mises_fisher(_solver().basis, 1.0).numpy()


@pytest.mark.parametrize("n", [12, 30])
def test_w2_at_four_levels_equals_an_optimal_assignment(n):
    """Each point repeated LEVELS times against LEVELS N equal atoms of the density at the midpoint quantiles:
    scipy's assignment with the squared geodesic cost is the discrete W_2^2 of the same atoms; the quantile form
    evaluates every cyclic shift of them and refines the best between shifts, so it is at most the assignment
    and within 2 % of it."""
    c = _c0()
    rng = np.random.default_rng(n)
    points = large.iid_angles(c, (n,), rng)
    size = large.LEVELS * n
    atoms = large.density_quantile(c, (np.arange(size) + 0.5) / size)
    gap = np.abs(np.repeat(points, large.LEVELS)[:, None] - atoms[None])
    cost = np.minimum(gap, 2 * math.pi - gap) ** 2
    rows, cols = linear_sum_assignment(cost)
    exact = cost[rows, cols].mean()
    fast = w2_circle(points, c, size)
    assert fast <= exact + 1e-12
    assert fast == pytest.approx(exact, rel=0.02)


def test_four_levels_bias_an_iid_cloud_by_a_relative_one_over_n():
    """The midpoint error at LEVELS = 4 is a sixteenth of a quantile cloud's W_2^2 (~N^-2): against 64 levels it
    moves an i.i.d. cloud's W_2^2 (~N^-1) by < 2e-3 at N = 100 and < 3e-4 at N = 1000 (relative: like 1/N)."""
    c = _c0()
    for n, tol in ((100, 2e-3), (1000, 3e-4)):
        points = large.iid_angles(c, (n,), np.random.default_rng(3))
        fine = w2_circle(points, c, 64 * n)
        assert abs(w2_circle(points, c, large.LEVELS * n) - fine) < tol * fine


def test_iid_reference_at_the_start_is_the_energy_law():
    """limit_h_sd of the initial density (von Mises, kappa = 1) with beta = 2 gives theory.energy_law's sd."""
    solver = _solver()
    for n in (100, 10**6):
        assert 2 * large.limit_h_sd(solver, _c0(), 2.0) / math.sqrt(n) == pytest.approx(
            predicted(n, 2.0, 1.0)["sd"], rel=1e-9
        )


@pytest.mark.kernels
def test_w2_slope_below_r_d_and_wrong_models_fail():
    """Right model: the slope's bootstrap interval (3 paths, N = 10^2 .. 10^4) lies below r_d's -1/2. The
    mismatched density (covariance x 2 on the same Brownian coefficients) and the cloud driven with that
    covariance against the right density both stop falling: their intervals reach above -1/2."""
    right = large.w2_paths(_solver(), SIZES, 3).rows()[0]
    assert right["resolved_paths"] == 3
    assert right["slope_ci"][1] < -0.5 < right["bound_slope"] + 1e-12
    assert right["slope_ci"][0] < -1.0 < right["slope_ci"][1] or right["slope_ci"][1] < -0.8
    for wrong in (
        large.w2_paths(_solver(), SIZES, 3, against=_solver(WRONG)),
        large.w2_paths(_solver(WRONG), SIZES, 3, against=_solver()),
    ):
        row = wrong.rows()[0]
        assert row["slope_ci"][1] > -0.5, row["slope_ci"]
        assert row["sup_w2"][-1] > 10 * right["sup_w2"][-1]


def _stratified(c0, shape, rng):
    """One particle per quantile stratum (u_i = (i + U_i) / N): not i.i.d.; the energy fluctuates like N^-3/2."""
    k, n = shape
    u = (np.arange(n)[None] + rng.random((k, n))) / n
    return large.density_quantile(c0, u.ravel()).reshape(shape)


@pytest.mark.kernels
def test_energy_law_along_the_dynamics_and_a_wrong_cloud():
    """12 i.i.d. clouds on one noise path: at every saved time the sd's slope interval contains -1/2 and not -1,
    and the sd is within a factor 1.6 of the i.i.d. law at mu_t (exact at t = 0); stratified clouds' interval
    excludes -1/2 at every time."""
    right = large.energy_rows(large.energy_paths(_solver(), SIZES, 12, 1), SIZES)
    assert all(r["holds"] for r in right), [r["slope_ci"] for r in right]
    ratio = np.array([np.array(r["sd"]) / np.array(r["iid_sd"]) for r in right])
    assert np.all((ratio > 1 / 1.6) & (ratio < 1.6)), ratio
    wrong = large.energy_rows(large.energy_paths(_solver(), SIZES, 12, 1, sampler=_stratified), SIZES)
    assert not any(r["holds"] for r in wrong)
    assert all(r["slope_ci"][1] < -0.75 for r in wrong), [r["slope_ci"] for r in wrong]
