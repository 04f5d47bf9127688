"""Particles and the density on one noise path and the resolution report;
docs/spde.md sections 6 and 9."""

import numpy as np
import pytest
import torch

from sdeformer.checks._spde.coupled import particle_convergence
from sdeformer.spde._diagnostics import TAIL_TOL, low_mode_distance, resolution, tail_share
from sdeformer.spde._fields import mlp_noise
from sdeformer.spde._initial import von_mises_fisher
from sdeformer.spde._solver import DensitySolver


def test_particles_converge_to_the_density_at_rate_n_to_minus_half():
    """Clouds of 10^2, 10^3, 10^4 i.i.d. tokens from mu_0 driven by the density's B^k: the sup over resolved
    times of the low-mode distance falls like N^-1/2 (slope in [-0.7, -0.35]); clouds compared with the density
    of another noise path do not converge (slope > -0.2)."""
    field = mlp_noise(2, "relu", su=0.5, sw=0.5, modes=3, scale=0.5)
    s = DensitySolver(field, 32, 20, 0.5, beta=2.0)
    good = particle_convergence(s, [100, 1000, 10000], runs=4, concentration=1.0, seed=0, saves=2)
    assert good.resolved.all()
    assert -0.7 <= good.slope <= -0.35, good.slope
    bad = particle_convergence(s, [100, 1000, 10000], runs=4, concentration=1.0, seed=0, saves=2, mismatch=True)
    assert bad.slope > -0.2, bad.slope


def test_an_unresolved_start_is_flagged_at_once():
    """A von Mises-Fisher start of concentration 300 needs far more than 16 modes: below resolution at t = 0;
    concentration 2 is resolved."""
    s = DensitySolver(mlp_noise(2, "relu", modes=2), 16, 2, 0.1, attention="off")
    for kappa0, ok in ((300.0, False), (2.0, True)):
        traj = s.run(von_mises_fisher(s.basis, kappa0), seed=0)
        verdict = resolution(traj.t.numpy(), tail_share(s.basis, traj.x).numpy())
        assert bool(verdict.resolved[0]) is ok
        assert (verdict.first_unresolved == 0.0) is (not ok)


def test_resolved_results_are_accurate_and_the_flag_is_monotone():
    """Common noise concentrates the density until it is narrower than the grid. While the degree-24 run is
    called resolved (tail <= TAIL_TOL), its first 8 modes agree with a degree-48 run on the same path to 1e-5;
    once flagged, every later time stays flagged. With no tolerance (tol = 1, the wrong report) the 'resolved'
    times include ones where the first modes are off by more than 1e-5."""
    field = mlp_noise(2, "relu", su=0.5, sw=0.5, modes=3)
    coarse, fine = (DensitySolver(field, m, 40, 1.0, beta=2.0) for m in (24, 48))
    runs = 3
    a = coarse.run(von_mises_fisher(coarse.basis, 1.0).expand(runs, -1).clone(), seed=1, saveat=4)
    b = fine.run(von_mises_fisher(fine.basis, 1.0).expand(runs, -1).clone(), seed=1, saveat=4)
    err = low_mode_distance(coarse.basis, a.x, b.x[..., : coarse.basis.size]).numpy()  # (S, runs)
    tail = tail_share(coarse.basis, a.x).numpy()
    for tol, honest in ((TAIL_TOL, True), (1.0, False)):
        flags = np.stack([resolution(a.t.numpy(), tail[:, r], tol).resolved for r in range(runs)], -1)
        assert bool(err[flags].max() < 1e-5) is honest
        assert np.all(np.diff(flags.astype(int), axis=0) <= 0)
    verdict = resolution(a.t.numpy(), tail, TAIL_TOL)
    assert verdict.first_unresolved is not None and 0 < verdict.first_unresolved < 1.0
    assert torch.isfinite(a.x).all()


def test_the_flag_is_evaluated_at_every_step():
    """record() keeps the tail share of every step; the verdict from it trips at a step (possibly between saved
    times), no later than the saved-times verdict, and while it says resolved the first 8 modes agree with a
    degree-96 run on the same path to 1e-5 (the calibration of TAIL_TOL, docs/spde.md section 6)."""
    from sdeformer.checks._spde.coupled import record

    field = mlp_noise(2, "relu", su=0.5, sw=0.5, modes=3)
    coarse, fine = (DensitySolver(field, m, 40, 1.0, beta=2.0) for m in (24, 96))
    runs, steps = 3, list(range(8, 41, 8))
    a = record(coarse, von_mises_fisher(coarse.basis, 1.0).expand(runs, -1).clone(), (), 1, steps)
    b = record(fine, von_mises_fisher(fine.basis, 1.0).expand(runs, -1).clone(), (), 1, steps)
    assert a.every[0].shape == (41,) and a.every[1].shape == (41, runs)
    tail = tail_share(coarse.basis, a.density).numpy()
    saved, every = resolution(a.t, tail, TAIL_TOL), resolution(a.t, tail, TAIL_TOL, a.every)
    assert every.first_unresolved is not None and every.first_unresolved in set(a.every[0].tolist())
    assert saved.first_unresolved is None or every.first_unresolved <= saved.first_unresolved
    assert np.all(np.diff(every.resolved.astype(int)) <= 0) and np.all(every.resolved <= saved.resolved)
    err = low_mode_distance(coarse.basis, a.density, b.density[..., : coarse.basis.size]).numpy().max(-1)
    assert err[every.resolved].max() < 1e-5


@pytest.mark.slow
def test_sphere_particles_converge_to_the_density():
    """The same on S^2 (degree 16): slope of the low-mode error in [-0.7, -0.35] for N = 10^2 .. 10^4."""
    field = mlp_noise(3, "relu", su=0.5, sw=0.5, modes=2, scale=0.3)
    s = DensitySolver(field, 16, 20, 0.3, beta=2.0)
    good = particle_convergence(s, [100, 1000, 10000], runs=4, concentration=1.0, seed=0, saves=2)
    assert good.resolved.all()
    assert -0.7 <= good.slope <= -0.35, good.slope


def test_a_standalone_particle_run_sees_the_same_noise_path():
    """LimitSDE + make_solver on the density's field, with the run's seed, draw the same B^k as the coupled
    run: the clouds agree to round-off; another seed gives another path."""
    from sdeformer.checks._spde.coupled import record
    from sdeformer.core._rng import Streams
    from sdeformer.dynamics._sde import LimitSDE, make_solver
    from sdeformer.spde._diagnostics import cloud_coefficients
    from sdeformer.spde._initial import sample_vmf

    s = DensitySolver(mlp_noise(2, "relu", su=0.5, sw=0.5, modes=3), 8, 10, 0.5, beta=2.0)
    x0 = sample_vmf(2, 40, 1.0, Streams(4, ()))
    coupled = record(s, von_mises_fisher(s.basis, 1.0), [x0], seed=3, steps=[10]).clouds[0][-1]
    alone = make_solver(LimitSDE(s.field, s.particle_attention), 10, 0.5)
    for seed, same in ((3, True), (4, False)):
        got = cloud_coefficients(s.basis, alone.run(x0, seed=seed, saveat=10).final)
        assert bool((got - coupled).abs().max() < 1e-13) is same
