"""Propagation of chaos in W_2 on the 2-sphere (THEORY section 5, docs/spde.md section 9): POT's exact W_2 with
the geodesic cost, the density as weighted atoms of a Fibonacci lattice (quantisation error ~ 1 / K), and the
coupled particle / density distance, which falls with N (quasi-Monte Carlo points faster than i.i.d. ones)."""

import math

import numpy as np
import pytest

pytest.importorskip("ot")

from sdeformer.checks._spde.chaos_sphere import (
    chaos_w2_sphere,
    chaos_w2_sphere_models,
    density_atoms,
    grid_error,
    qmc_vmf,
    vmf_points,
    w2_sphere,
)
from sdeformer.spde._fields import mlp_noise
from sdeformer.spde._initial import von_mises_fisher
from sdeformer.spde._solver import DensitySolver


def _solver(steps: int = 4, covariance: float = 1.0) -> DensitySolver:
    field = mlp_noise(3, "relu", 0.5, 0.5, modes=2, scale=0.3 * math.sqrt(covariance))
    return DensitySolver(field, 16, steps, 0.3, beta=2.0)


def test_w2_of_point_masses_is_the_squared_geodesic_distance():
    """Two point masses at angle a: a^2 (and 0 between a measure and itself, whatever the atoms' order)."""
    a = 2.0
    x = np.array([[1.0, 0.0, 0.0]])
    y = np.array([[math.cos(a), math.sin(a), 0.0]])
    assert w2_sphere(x, y) == pytest.approx(a * a, rel=1e-12)
    cloud = qmc_vmf(50, 1.0)
    assert w2_sphere(cloud, cloud[::-1]) == pytest.approx(0.0, abs=1e-12)


def test_half_the_mass_moved_costs_half():
    """Half of the mass at the north pole moved to the equator: W_2^2 = (pi / 2)^2 / 2."""
    x = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    y = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    assert w2_sphere(x, y) == pytest.approx((math.pi / 2) ** 2 / 2, rel=1e-12)


def test_vmf_points_have_the_law_s_mean():
    """The inverse CDF of <e_1, x>: E<e_1, x> = coth(k) - 1/k; QMC and i.i.d. points agree with it."""
    k = 2.0
    mean = 1 / math.tanh(k) - 1 / k
    assert qmc_vmf(4000, k)[:, 0].mean() == pytest.approx(mean, abs=1e-4)
    rng = np.random.default_rng(0)
    iid = vmf_points(rng.random(40000), 2 * math.pi * rng.random(40000), k)
    assert iid[:, 0].mean() == pytest.approx(mean, abs=4 * 0.6 / math.sqrt(40000))
    assert np.allclose(np.linalg.norm(iid, axis=-1), 1.0)


def test_density_atoms_integrate_the_density_and_quantise_like_one_over_k():
    """The atoms' masses sum to 1 and their mean direction is the von Mises-Fisher law's; the quantisation
    error (atoms of K against 4 K points) is about 1 / K (2.2 / K measured at K = 200)."""
    solver = _solver()
    c0 = von_mises_fisher(solver.basis, 1.0)
    points, mass = density_atoms(solver, c0, 4000)
    assert mass.sum() == pytest.approx(1.0) and (mass >= 0).all()
    assert (mass @ points)[0] == pytest.approx(1 / math.tanh(1.0) - 1.0, abs=2e-3)
    error = grid_error(solver, c0, 200)
    assert 0.3 / 200 < error < 4.0 / 200


def test_particles_converge_to_the_density_on_the_sphere():
    """Coupled clouds of 50 and 400 particles over 4 noise paths: W_2^2 falls with N, QMC points lie closer to
    the density than i.i.d. ones, and the bound's slope is that of r_3(N) = N^-1/2."""
    chaos = chaos_w2_sphere(_solver(), (50, 400), 4, saves=1, atoms=2)
    rows = {r["particles"]: r for r in chaos.rows()}
    assert chaos.dim == 3 and rows["iid"]["bound_slope"] == pytest.approx(-0.5)
    for r in rows.values():
        assert r["sup_w2"][1] < r["sup_w2"][0] and r["slope"] < -0.3
    assert rows["qmc"]["sup_w2"][1] < rows["iid"]["sup_w2"][1]


def test_sphere_w2_refuses_the_circle():
    solver = DensitySolver(mlp_noise(2, "relu", 0.5, 0.5, modes=2, scale=0.3), 8, 2, 0.1)
    with pytest.raises(ValueError, match="2-sphere"):
        chaos_w2_sphere(solver, (10,), 1)


def test_wrong_densities_are_measured_against_the_same_clouds():
    """``chaos_w2_sphere_models``: the right density given again as a wrong model reproduces its W_2^2 exactly
    (same Brownian coefficients, same clouds); the density with the noise covariance x 1.2 starts from the same
    law (equal W_2^2 at t = 0) and then differs."""
    same, again, wrong = chaos_w2_sphere_models(
        _solver(), (_solver(), _solver(covariance=1.2)), (30, 60), 2, saves=1, atoms=2
    )
    assert np.array_equal(same.w2, again.w2)
    assert np.array_equal(wrong.w2[:, :, 0], same.w2[:, :, 0]) and not np.allclose(wrong.w2[:, :, 1], same.w2[:, :, 1])


def test_the_sphere_check_of_reproduce_spde_judges_its_wrong_models(one_thread):
    """Every sphere record names W_2 and its slope, reports its resolution and its wrong models' slopes (noise
    covariance x 0.8 .. 1.2, run on the sphere) with the paired test, and gives ``smallest_error_caught`` or a
    measured reason; it says 'holds' only with a wrong model caught."""
    from sdeformer.checks._spde.chaos_sphere import sphere_check

    out = sphere_check(quick=True, runs=2)
    assert set(out["slope"]) == {"iid", "qmc"}
    for r in out["w2"]:
        assert r["check"] == "propagation_of_chaos_sphere" and r["sup_w2"][1] < r["sup_w2"][0]
        assert set(r["wrong_dynamics_slopes"]) == {"0.1", "0.2", "-0.1", "-0.2"} and r["resolved_paths"] == 2
        assert set(r["paired_test"]) == set(r["catch_rate"]) == {"0.1", "0.2", "-0.1", "-0.2"}
        assert r["slope"] == out["slope"][r["particles"]]
        assert r["smallest_error_caught"] in (0.1, 0.2) or r["reason"]
        assert r["holds"] == (r["smallest_error_caught"] is not None) == (r["verdict"] == "holds")
        assert r["size_80_basis"] == "computed"  # a claimed size is confirmed on seed + 1; a refuted one withdrawn
        assert r["smallest_error_caught"] is None or (r["confirmed"] is True and r["confirm_seed"] == 1)
        assert r["confirmed"] is not False or (r["size_80"] is None and not r["holds"])
