"""``independent-noise`` (docs/field.md, "Independent noise"): the paper's beta*_d (a Bessel ratio) against the
stationary equation's own zonal branch, solved independently; K_# against its small-beta limit; the particles'
physics on both sides of the threshold."""

from __future__ import annotations

import pytest

from sdeformer.experiments._field import _usa as usa


@pytest.mark.parametrize("dim", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_branch_turns_at_the_bessel_beta_star(dim):
    """The branch's K(m) at m = 0.01 crosses K_# at the Bessel beta*_d (relative 1e-3; its bias is O(m^2));
    the characterisation with the wrong ratio 1/(d+1) misses it by more than 10 %."""
    branch = usa.branch_beta_star(dim)
    assert branch == pytest.approx(usa.beta_star(dim), rel=1e-3)
    assert abs(usa.beta_star(dim, 1.0 / (dim + 1)) / branch - 1) > 0.1
    assert usa.continuity_sign(dim, 0.8 * branch) > 0 > usa.continuity_sign(dim, 1.2 * branch)


@pytest.mark.parametrize("dim", [2, 3, 5])
def test_threshold_tends_to_the_linear_models_d(dim):
    """W(t) = e^{beta t} / beta = 1/beta + t + O(beta): as beta -> 0 the degree-1 coefficient is 1/d, so
    K_# -> d (the linear interaction's threshold, a closed form independent of the Bessel expression)."""
    assert usa.threshold(dim, 1e-6) == pytest.approx(dim, rel=1e-5)


@pytest.mark.slow
def test_particles_dissolve_well_below_threshold_and_stay_clustered_above_the_spinodal():
    dim, star = 2, usa.beta_star(2)
    low = usa.threshold(dim, star) * 0.5
    dissolved = usa.particles(dim, star, low, 60, 6 * low, 0.004 * low, 1)
    high_beta = 2.5 * star  # the branch's spinodal ratio there is 0.85: clusters live at 0.95 K_#
    high = 0.95 * usa.threshold(dim, high_beta)
    clustered = usa.particles(dim, high_beta, high, 60, 6 * high, 0.004 * high, 2)
    assert dissolved < 0.4 < 0.7 < clustered
    assert usa.spinodal_ratio(dim, high_beta)[0] < 0.95
    assert clustered == pytest.approx(usa.branch_order(dim, high_beta, 0.95), abs=0.03)  # the branch's state


def test_crossing_on_the_grid_boundary_is_not_identified():
    """The particles' crossing: linear between grid points; None (reported "not identified") when the order
    parameter is already above the level at the smallest beta or never reaches it."""
    from sdeformer.experiments._field._independent_noise import bracket, crossing

    grid = [1.0, 2.0, 3.0, 4.0]
    assert crossing(grid, [0.1, 0.3, 0.7, 0.8], 0.45) == pytest.approx(2.375)
    assert crossing(grid, [0.5, 0.6, 0.7, 0.8], 0.45) is None
    assert crossing(grid, [0.1, 0.2, 0.3, 0.3], 0.45) is None
    # the 95 % bracket: the upper bound reaches 0.45 at 2 (so the crossing is above 1), the lower bound at 4
    assert bracket(grid, [0.0, 0.2, 0.4, 0.7], [0.2, 0.5, 0.8, 0.9], 0.45) == (1.0, 4.0)
    assert bracket(grid, [0.5, 0.6, 0.7, 0.8], [0.6, 0.7, 0.8, 0.9], 0.45) == (None, None)  # on the boundary
    assert bracket(grid, [0.0, 0.1, 0.2, 0.3], [0.2, 0.5, 0.8, 0.9], 0.45) == (1.0, None)  # never clearly above


def test_runs_side_by_side_keep_their_own_beta_and_coupling():
    """Two runs in one batch: one far below the threshold (K = K_# / 2 at beta*_d) dissolves towards the uniform
    state's |mean X| ~ N^-1/2, one above the spinodal (2.5 beta*_d, K = 0.95 K_#) stays clustered."""
    from sdeformer.experiments._field._independent_noise_particles import order_parameters

    star = usa.beta_star(2)
    low, high = 0.5 * usa.threshold(2, star), 0.95 * usa.threshold(2, 2.5 * star)
    m = order_parameters(2, [star, 2.5 * star], [low, high], 60, 1000, [0.004 * low, 0.004 * high], 3)
    assert m[0] < 0.4 < 0.7 < m[1]


@pytest.mark.slow
def test_particles_bracket_the_branchs_crossing_at_quick_size():
    """d = 3 at the quick size (100 tokens, 3 seeds, 8 relaxation times, delta = 0.1): the crossing is identified
    (not on the grid's boundary) and its 95 % bracket contains the branch's beta_c(0.1) = 3.03; the clustered
    state at the largest beta rejects a continuous transition. (About a minute on one thread.)"""
    from sdeformer.experiments._field import _independent_noise as inoise

    r = inoise.run(inoise.settings_for(True, {"dims": "3"}))
    assert r.beta_crit_sim["3"] is not None and r.sim_agrees["3"], (r.beta_crit_sim_lo, r.beta_crit_sim_hi)
    assert r.beta_crit_predicted["3"] == pytest.approx(3.03, abs=0.01)
    assert r.wrong_rejected["3"]


def test_holds_needs_the_particles_bracket_to_contain_the_predicted_crossing(monkeypatch):
    """``holds`` includes the particles' agreement: with order parameters that jump between 1.9 and 2.1 beta*_2
    (bracket [4.65, 5.14], the branch's beta_c(0.1) = 4.936 inside) the check holds; the wrong prediction "a crossing
    at beta*_d itself" (2.447, outside the bracket) fails it, and so does a jump at the grid's first point (the
    crossing not identified)."""
    import functools

    import numpy as np

    from sdeformer.experiments._field import _independent_noise as inoise

    for module, name in ((usa, "branch_beta_star"), (usa, "branch_order"), (inoise, "predicted_crossing")):
        monkeypatch.setattr(module, name, functools.cache(getattr(module, name)))  # solved once for the three runs
    predicted = inoise.predicted_crossing
    settings = inoise.settings_for(True, {"dims": "2"})
    grid = settings.floats("grid")  # 1, 1.5, 1.7, 1.9, 2.1, 2.3

    def jump_at(first_clustered: float):
        def orders(s, dim):
            spread = np.linspace(-0.02, 0.02, s.seeds)  # (seeds,)
            m = [(0.85 if g >= first_clustered else 0.1) + spread for g in grid]
            return [g * usa.beta_star(dim) for g in grid], np.array(m)

        return orders

    monkeypatch.setattr(inoise, "orders", jump_at(2.1))
    right = inoise.run(settings)
    assert right.sim_agrees["2"] and right.holds, (right.beta_crit_sim_lo, right.beta_crit_sim_hi)
    assert right.beta_crit_sim_lo["2"] == pytest.approx(1.9 * usa.beta_star(2))
    monkeypatch.setattr(inoise, "predicted_crossing", lambda dim, delta, top: usa.beta_star(dim))
    wrong = inoise.run(settings)
    assert not wrong.sim_agrees["2"] and not wrong.holds and wrong.agrees["2"] and wrong.wrong_rejected["2"]
    monkeypatch.setattr(inoise, "predicted_crossing", predicted)
    monkeypatch.setattr(inoise, "orders", jump_at(1.0))
    edge = inoise.run(settings)
    assert edge.beta_crit_sim["2"] is None and not edge.sim_agrees["2"] and not edge.holds
