"""The spherical sliced W_2 of propagation of chaos on the sphere (``checks._spde.sliced_sphere``,
docs/spde.md section 9): each slice of the density exact from its coefficients, each slice's W_2 equal to POT's on
the same great circle, the pole rule's frames orthonormal, and the check judged with its wrong models."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdeformer.checks._spde.chaos_sphere import _solver, density_atoms, vmf_points
from sdeformer.checks._spde.sliced_sphere import (
    chaos_sliced_models,
    frames,
    slice_angles,
    slice_coefficients,
    sliced_check,
    sliced_w2,
)
from sdeformer.spde._initial import von_mises_fisher

AXIS = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])  # the great circle with pole e_1


@pytest.fixture(scope="module")
def solver():
    return _solver()


@pytest.fixture(scope="module")
def start(solver):
    return von_mises_fisher(solver.basis, 1.0)  # about e_1, concentration 1: positive everywhere


def test_frames_are_right_handed_orthonormal_with_poles_on_the_lattice():
    f = frames(16)
    assert np.allclose(f @ f.transpose(0, 2, 1), np.eye(3), atol=1e-14)
    assert np.allclose(np.linalg.det(f), 1.0)
    assert abs(f[:, 2].mean(0)).max() < 0.05  # the poles spread over the sphere


def test_slice_coefficients_are_exact_and_match_the_density_s_atoms(solver, start):
    """The slice is a trigonometric polynomial of degree <= L: 64 and 128 angles agree to round-off; its mass is
    the density's; the slice of the von Mises-Fisher law about the pole is uniform; against 10^5 Fibonacci atoms
    of the density (their angles' Fourier sums) the coefficients agree to the atoms' own quadrature error
    (measured 3.4e-4 at 10^5, 6.3e-5 at 4 x 10^5 atoms: it falls with the atoms, so it is theirs)."""
    frame = frames(4)[1]
    c = slice_coefficients(solver, start, frame)
    assert c.shape == (solver.basis.degree + 1,)
    assert abs(c - slice_coefficients(solver, start, frame, 128)).max() < 1e-14
    assert abs(c[0] - float(solver.basis.mass(start))) < 1e-12
    uniform = slice_coefficients(solver, start, AXIS)
    assert abs(uniform[1:]).max() < 1e-12
    points, masses = density_atoms(solver, start, 100_000)
    theta = slice_angles(points, frame)
    atoms = np.exp(-1j * np.arange(c.shape[0])[:, None] * theta) @ masses
    assert abs(c / c[0] - atoms).max() < 1e-3


def test_each_slice_equals_pots_sliced_wasserstein_on_the_same_great_circle(solver, start):
    """POT's ``sliced_wasserstein_sphere`` with the same great circle against 8 x 10^4 atoms of the density (its
    circle has length 1: times (2 pi)^2) equals ``sliced_w2`` to the atoms' error (measured 3e-4 and 5e-5
    relative at 8 x 10^4 atoms, 1.5e-5 and 1.1e-5 at 3.2 x 10^5)."""
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(0)
    x = vmf_points(rng.random(300), 2 * math.pi * rng.random(300), 1.0)
    points, masses = density_atoms(solver, start, 80_000)
    for frame in frames(4)[:2]:
        mine = sliced_w2([x], slice_coefficients(solver, start, frame), frame)[0]
        pot = ot.sliced_wasserstein_sphere(x, points, None, masses, projections=frame[:2].T[None], n_projections=1)
        assert float(pot) ** 2 * (2 * math.pi) ** 2 == pytest.approx(mine, rel=2e-3)


def test_a_wrong_density_moves_only_what_the_dynamics_adds(one_thread):
    """The right density given again as a wrong model reproduces its SSW_2^2 exactly; another noise covariance
    leaves t = 0 unchanged (the common start) and moves the later times; the distance falls with N."""
    right = _solver()
    (same, again, wrong), per_pole = chaos_sliced_models(right, [right, _solver(1.5)], (50, 400), 2, poles=4)
    assert per_pole.shape == (3, 2, 2, 3, 2, 4)
    assert np.array_equal(same.w2, again.w2)
    assert np.array_equal(wrong.w2[:, :, 0], same.w2[:, :, 0]) and not np.allclose(wrong.w2[:, :, 1], same.w2[:, :, 1])
    assert (same.sup()[:, 1].mean(-1) < same.sup()[:, 0].mean(-1)).all()


def test_the_sliced_check_of_reproduce_spde_judges_its_wrong_models(one_thread):
    """Every record names the distance, W_2 and its slope, its resolution, the pole rule's s.e. and its wrong
    models' slopes and paired tests, and gives ``smallest_error_caught`` or a reason; 'holds' only with a wrong
    model caught."""
    out = sliced_check(quick=True, runs=2, poles=4)
    assert set(out["slope"]) == {"iid", "qmc"}
    for r in out["w2"]:
        assert r["check"] == "propagation_of_chaos_sphere_sliced" and r["sup_w2"][1] < r["sup_w2"][0]
        assert set(r["wrong_dynamics_slopes"]) == {"0.1", "0.2", "-0.1", "-0.2"} and r["resolved_paths"] == 2
        assert set(r["paired_test"]) == set(r["catch_rate"]) == {"0.1", "0.2", "-0.1", "-0.2"}
        assert r["distance"] == "spherical sliced W_2^2" and 0 < r["pole_rule_relative_se"] < 0.5
        assert r["smallest_error_caught"] in (0.1, 0.2) or r["reason"]
        assert r["holds"] == (r["smallest_error_caught"] is not None) == (r["verdict"] == "holds")
        assert r["size_80_basis"] == "computed"  # a claimed size is confirmed on seed + 1; a refuted one withdrawn
        assert r["smallest_error_caught"] is None or (r["confirmed"] is True and r["confirm_seed"] == 1)
        assert r["confirmed"] is not False or (r["size_80"] is None and not r["holds"])


def test_the_sliced_distance_refuses_the_circle():
    from sdeformer.spde._fields import mlp_noise
    from sdeformer.spde._solver import DensitySolver

    circle = DensitySolver(mlp_noise(2, "relu", 0.5, 0.5, modes=2, scale=0.3), 8, 2, 0.1)
    with pytest.raises(ValueError, match="2-sphere"):
        chaos_sliced_models(circle, (), (10,), 1)
