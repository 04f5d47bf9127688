"""The noise covariance read from the degree energies (docs/spde.md section 8): a moment check that carries the
constant.

The |z| check of the modes (``_checks.moment_check``) compares each coefficient on its own and does not resolve
a 10-20 % error of the noise covariance; the mean of a coefficient is worse still (the common noise turns the
whole density, path by path). The energies per degree ``E_l = sum_m |c_lm|^2`` do not see the turn, and their
expectation is the exact closed system of the two-point motion (``_theory.second_moments``). So the check reads
the covariance scale ``s`` (the field's covariance is ``s`` times the model's) from them: the linear estimator

    s_hat = 1 + sum_(l,t) w_lt (E_l(t) - E_l(t; 1)) / sum_(l,t) w_lt g_lt,   g = dE_l(t; s)/ds at s = 1,
    w = g / Var(E_l(t)),

per path (so its standard error over the paths counts every correlation), degrees 1..``DEGREES`` at ``SAVES``
times. The density runs at h and h/2 on one Brownian path (``theory._coupled``: the coarse step is fed the
normalised sums of two fine steps' draws), so the step bias is measured with a small standard error, and the
tolerance is ``checks._record.measured``'s. Its wrong models, the solver with the noise covariance x 0.8 ..
x 1.2, are re-run the same way on their own noise and judged with their own tolerance (``Check.with_catch``:
computed from the +-20 % models and confirmed by one re-run at report size, where K re-runs of 3200 paths cost
too much; counted over K seeds on request).
"""

from __future__ import annotations

import math

import torch

from ...core._rng import Streams
from ...core._sphere import project
from ...spde._fields import mlp_noise
from ...spde._initial import von_mises_fisher
from ...spde._solver import DensitySolver
from ...spde._theory import second_moments
from ...theory._coupled import Recorder, Summed
from ...theory._montecarlo import Estimate
from .._power import COMPUTED, Plan
from .._record import Check, measured

STEPS, HORIZON, SAVES, DEGREES = 20, 1.0, 4, 4  # coarse steps (h = 1/20), horizon, saved times, degrees 1..4
CASES = {2: 24, 3: 8}  # the density's degree per dimension (noise alone, ReLU sU = sW = 0.5, 2 modes, amp. 0.5)
PATHS = {False: {2: 3200, 3: 400}, True: {2: 800, 3: 100}}  # noise paths (report size, quick)
DERIVATIVE = 0.01  # relative step of the central difference dE/ds


def _solver(dim: int, steps: int, covariance: float) -> DensitySolver:
    field = mlp_noise(dim, "relu", 0.5, 0.5, modes=2, scale=0.5 * math.sqrt(covariance))
    return DensitySolver(field, CASES[dim], steps, HORIZON, attention="off")


def _start(dim: int, solver: DensitySolver) -> torch.Tensor:
    """The von Mises-Fisher law (concentration 1) about a generic direction, as the moment check's."""
    return von_mises_fisher(solver.basis, 1.0, project(torch.arange(1.0, dim + 1, dtype=torch.float64).flip(0)))


def coupled_energies(dim: int, covariance: float, paths: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """E_l (l = 1..DEGREES) at the SAVES saved times of the density at h/2 and at h on one Brownian path per
    noise path, from the start ``_start``: ``(fine, coarse)``, each ``(SAVES, DEGREES, paths)``."""
    fine, coarse = _solver(dim, 2 * STEPS, covariance), _solver(dim, STEPS, covariance)
    c0 = _start(dim, fine).expand(paths, -1).clone()
    states, source, saved = [c0, c0.clone()], Streams(seed, (paths,)), ([], [])
    for k in range(1, STEPS + 1):
        tape = Recorder(source)
        states[0] = fine.step(fine.step(states[0], tape), tape)
        half = len(tape.draws) // 2
        states[1] = coarse.step(states[1], Summed(tape.draws[:half], tape.draws[half:], source.batch))
        if k % (STEPS // SAVES) == 0:
            for out, c in zip(saved, states):
                out.append(fine.basis.energy(c)[..., 1 : DEGREES + 1].T)  # (DEGREES, paths)
    return torch.stack(saved[0]), torch.stack(saved[1])


def _theory(dim: int, covariance: float) -> torch.Tensor:
    """E_l(t; covariance) at the saved times, ``(SAVES, DEGREES)``."""
    solver = _solver(dim, STEPS, covariance)
    times = HORIZON * torch.arange(1, SAVES + 1).double().numpy() / SAVES
    e = second_moments(solver.field, _start(dim, solver), times)[:, 1 : DEGREES + 1]
    return torch.from_numpy(e)


def covariance_scale(dim: int, covariance: float, paths: int, seed: int) -> tuple[Estimate, Estimate]:
    """s_hat of the solver whose noise covariance is ``covariance`` times the model's, read against the model's
    theory (module docstring): its estimate at h/2 and the coupled step bias s_hat(h) - s_hat(h/2)."""
    fine, coarse = coupled_energies(dim, covariance, paths, seed)
    base = _theory(dim, 1.0)
    slope = (_theory(dim, 1 + DERIVATIVE) - _theory(dim, 1 - DERIVATIVE)) / (2 * DERIVATIVE)  # (SAVES, DEGREES)
    weight = slope / fine.var(-1)

    def read(e: torch.Tensor) -> torch.Tensor:  # (SAVES, DEGREES, paths) -> (paths,)
        return 1 + torch.einsum("sd,sdp->p", weight, e - base[..., None]) / (weight * slope).sum()

    s_fine = read(fine)
    return Estimate.of(s_fine), Estimate.of(read(coarse) - s_fine)


def covariance_check(dim: int, quick: bool = False, seed: int = 0, power: Plan = COMPUTED) -> Check:
    """The check of the noise covariance read from the energies (predicted 1), with the power record of the
    solver whose noise covariance is x (1 + s) (each its own coupled runs and tolerance, seed + k; ``power``)."""
    paths = PATHS[quick][dim]
    setting = {"dim": dim, "degree": CASES[dim], "paths": paths, "steps": [STEPS, 2 * STEPS], "horizon": HORIZON}

    def check(covariance: float, run_seed: int) -> Check:
        fine, bias = covariance_scale(dim, covariance, paths, run_seed)
        return measured(
            "spde density", setting, "noise covariance scale read from E_l, l = 1..4", 1.0,
            "E_l(t) of the two-point motion (docs/spde.md section 8)", fine, bias,
        )  # fmt: skip

    return check(1.0, seed).with_catch(
        lambda s: f"noise covariance x {1 + s:g}", lambda s, k: check(1 + s, seed + k), power
    )


def covariance_records(quick: bool = False, seed: int = 0) -> list[dict]:
    """The ``checks.json`` records of ``covariance_check`` on the circle and the sphere (``reproduce spde``)."""
    return [covariance_check(dim, quick, seed).record() for dim in CASES]
