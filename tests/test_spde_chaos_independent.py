"""The independent density scheme (finite volumes in angle, Wong-Zakai in time) and the propagation-of-chaos check
against it (THEORY sections 4-5; docs/spde.md section 9)."""

import math

import numpy as np
import pytest
import torch

from sdeformer.checks._power import SIGNED
from sdeformer.checks._spde.chaos import DEGREE, SCALE, _angles, _solver
from sdeformer.checks._spde.chaos_independent import drive, independent_record, scheme
from sdeformer.checks._spde.chaos_scheme import FiniteVolume
from sdeformer.spde._fields import mlp_noise
from sdeformer.spde._initial import von_mises_fisher
from sdeformer.spde._solver import DensitySolver


def test_the_scheme_builds_the_noise_from_the_kernel_as_the_field_does(one_thread):
    """lambda_n from kappa by the trapezoid rule equals the field's Funk-Hecke spectrum, and the scheme's noise at
    its faces equals the field's scalar noise there for the same z (two codes, one covariance); the clouds of
    ``drive`` are ``DensitySolver.run``'s to the bit."""
    field = _solver().field
    fv = scheme()
    assert np.allclose(fv.eigen, field.eigen.numpy(), rtol=1e-9, atol=1e-14)
    faces = torch.from_numpy(np.arange(fv.cells) * fv.h + fv.h)
    pts = torch.stack([faces.cos(), faces.sin()], -1)
    z = torch.randn(7, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert np.allclose((z[:, 0].numpy() @ fv.features), field.scalar(pts, z)[:, 0].numpy(), atol=1e-12)
    theta = np.random.default_rng(1).random((3, 50)) * 2 * math.pi
    angles, zs = drive(_solver(), theta, 5, 5)
    t = torch.from_numpy(theta)
    c0 = von_mises_fisher(_solver().basis, 1.0).expand(3, -1).clone()
    run = _solver().run(c0, seed=5, saveat=5, particles=(torch.stack([t.cos(), t.sin()], -1),))
    assert np.array_equal(_angles(run.x[1]), angles) and zs.shape == (20, 3, 7)


def _gap(steps: int, scale: float, covariance: float = 1.0, runs: int = 4, seed: int = 7) -> float:
    """Largest Fourier-coefficient difference over the saved times between the spectral solver and the
    independent scheme (covariance x ``covariance``) on the same Brownian coefficients."""
    solver = DensitySolver(mlp_noise(2, "relu", 0.5, 0.5, modes=3, scale=scale), DEGREE, steps, 0.5, beta=2.0)
    c0 = von_mises_fisher(solver.basis, 1.0)
    theta = np.zeros((runs, 1))
    _, z = drive(solver, theta, seed, steps // 4)
    spectral = solver.run(c0.expand(runs, -1).clone(), seed=seed, saveat=steps // 4).x.numpy()
    fv = scheme(covariance, steps) if scale else FiniteVolume(np.zeros(4), 2.0, steps, 0.5)
    rho = fv.run(np.broadcast_to(fv.initial(1.0), (runs, fv.cells)).copy(), z, steps // 4)
    return float(np.abs(fv.coefficients(rho, DEGREE) - spectral).max())


@pytest.mark.kernels
def test_the_independent_scheme_agrees_with_the_spectral_solver_and_not_with_a_wrong_covariance(one_thread):
    """A smooth case (von Mises-Fisher start, softmax beta = 2, T = 0.5, 4 paths). Without noise both are the
    same PDE: the gap is the solver's first-order step error (x 4 steps: / ~4). With the noise (the check's
    field) the gap falls with the step (strong order 1/2: x 4 steps, / ~2), and the scheme with the
    covariance x 0.8 or x 1.2 stands > 2.5 x farther from the solver than the right one at 80 steps."""
    still = _gap(20, 0.0)
    assert still < 3e-4 and _gap(80, 0.0) < still / 3, still
    right20, right80 = _gap(20, SCALE), _gap(80, SCALE)
    assert right80 < 0.6 * right20, (right20, right80)
    for cov in (0.8, 1.2):
        assert _gap(80, SCALE, cov) > 2.5 * right80, (cov, right80)


def _planted(shift: dict[float, float], seeds: int = 12, runs: int = 32) -> dict:
    """Per seed: the right density's sup_t W_2^2 per path and each wrong one's = it + shift[s] + paired noise."""
    rng = np.random.default_rng(0)
    found = {}
    for k in range(seeds):
        right = 1e-3 + 2e-4 * rng.standard_normal(runs)
        wrong = {s: right + shift[s] + 1e-5 * rng.standard_normal(runs) for s in SIGNED}
        found[k] = {"right": right, "wrong": wrong, "spectral": right + 1e-5 * rng.standard_normal(runs)}
    return found


def test_the_paired_record_counts_catches_and_the_right_models_false_alarms():
    """Planted paired results over K = 12 seeds: a wrong density farther by 5 s.e. of the pairs is caught on
    every seed, one at the right distance on none (size_80 = 20 %); the right model never rejected. When the
    x 0.9 density fits the clouds better than the right one (the right model's error), every seed is a false
    alarm and the record does not hold."""
    far = {0.1: 0.0, 0.2: 1e-5, -0.1: 0.0, -0.2: 1e-5}
    record = independent_record(_planted(far), 10000, 32, 20)
    assert record["catch_rate"] == {"0.1": 0.0, "0.2": 1.0, "-0.1": 0.0, "-0.2": 1.0}
    assert record["catch_seeds"] == 12 and record["size_80"] == 0.2 and record["false_alarm_rate"] == 0.0
    assert record["holds"] and record["within_proposition"] and not record["compared_with_r_d"]
    better = independent_record(_planted(far | {-0.1: -1e-5}), 10000, 32, 20)
    assert better["false_alarm_rate"] == 1.0 and not better["holds"]
