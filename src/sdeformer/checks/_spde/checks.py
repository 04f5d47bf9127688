"""The checks of the density solver against the linear theory (docs/spde.md sections 7-8; THEORY sections 1, 4):
noise-free growth rates of the modes of the uniform law, and the mean and second moment of the modes under the
common noise by Monte Carlo over noise paths. Each returns its numbers; ``passes`` applies the tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...core._sphere import project
from ...spde._fields import mlp_noise
from ...spde._harmonics import Harmonics
from ...spde._initial import perturbed, von_mises_fisher
from ...spde._solver import DensitySolver
from ...spde._theory import linear_rates, second_moments

RATE_STEP = 0.008  # |rate| dt of the fastest mode: the Euler bias of a measured rate is O(rate dt)
GROWTH = 2.0  # e-folds of the fastest mode over the run
Z_TOL = 4.5  # |Monte Carlo - theory| / standard error allowed (about 50 comparisons per check)


@dataclass(frozen=True)
class RateRow:
    """One mode's noise-free growth rate about the uniform law: theory and the solver's."""

    dim: int
    attention: str
    beta: float
    degree: int
    theory: float
    measured: float

    @property
    def error(self) -> float:
        return abs(self.measured - self.theory) / max(abs(self.theory), 1e-12)


def measured_rates(
    dim: int, attention: str, beta: float, degrees: Sequence[int], scale: float = 1.0, eps: float = 1e-7
) -> list[RateRow]:
    """Run the noise-free solver from uniform + eps Re(B_l) (one batch element per degree) until the fastest
    mode grew ``GROWTH`` e-folds, in steps of rate dt = ``RATE_STEP``; measured rate = log(|c_l(T)| / eps) / T."""
    top = max(degrees)
    theory = linear_rates(dim, top, beta, scale, attention)
    fastest = float(theory[1:].abs().max())
    horizon, steps = GROWTH / fastest, math.ceil(GROWTH / RATE_STEP)
    field = mlp_noise(dim, modes=1, scale=0.0)  # noise-free: the grid map is smooth, a small grid is exact
    solver = DensitySolver(
        field, top + 2, steps, horizon, attention=attention, beta=beta, scale=scale, quadrature=3 * top + 12
    )
    c0 = torch.stack([perturbed(solver.basis, deg, None, eps) for deg in degrees])  # (D, P)
    final = solver.run(c0, saveat=steps).final  # (D, P)
    rows = []
    for i, deg in enumerate(degrees):
        k = solver.basis.index(deg)
        amp = float(final[i, k].abs()) * float(solver.basis.eps[k])
        rows.append(RateRow(dim, attention, beta, deg, float(theory[deg]), math.log(amp / eps) / horizon))
    return rows


def rates_pass(rows: Sequence[RateRow], rtol: float = 0.01) -> bool:
    return all(r.error <= rtol for r in rows)


@dataclass(frozen=True)
class MomentCheck:
    """Mean of the coefficients and second moment E_l of each degree 1..D at the saved times: theory, Monte
    Carlo over ``paths`` noise paths and its standard error; ``z``: the largest |MC - theory| / se."""

    times: np.ndarray
    mean_theory: np.ndarray  # (T, K) complex, the coefficients of degrees 1..D
    mean_mc: np.ndarray
    mean_se: np.ndarray  # (T, K) complex: the standard errors of the real and imaginary parts
    energy_theory: np.ndarray  # (T, D)
    energy_mc: np.ndarray
    energy_se: np.ndarray
    paths: int

    @property
    def z(self) -> float:
        zs = [
            _z(np.real(self.mean_mc), np.real(self.mean_theory), np.real(self.mean_se)),
            _z(np.imag(self.mean_mc), np.imag(self.mean_theory), np.imag(self.mean_se)),
            _z(self.energy_mc, self.energy_theory, self.energy_se),
        ]
        return max(zs)

    def passes(self, z_tol: float = Z_TOL) -> bool:
        return self.z <= z_tol


def _z(mc: np.ndarray, theory: np.ndarray, se: np.ndarray) -> float:
    """max |mc - theory| / se over the entries with se > 0 (an entry with se = 0 must match to 1e-12)."""
    diff = np.abs(mc - theory)
    exact = se <= 1e-14
    if np.any(diff[exact] > 1e-12):
        return math.inf
    return float(np.max(diff[~exact] / se[~exact], initial=0.0))


def mean_theory(basis: Harmonics, c0: torch.Tensor, rates: torch.Tensor, t: float) -> torch.Tensor:
    """E c(t) = e^{rate_l t} c(0) per coefficient, ``rates`` ``(L+1,)`` (the linear theory; exact for the noise
    alone)."""
    return c0 * basis.per_coefficient(torch.exp(rates * t)).to(c0.dtype)


def moment_check(
    solver: DensitySolver, concentration: float, paths: int, degrees: int = 4, seed: int = 0, save_every: int = 0
) -> MomentCheck:
    """Monte Carlo over ``paths`` noise paths of ``solver`` from the von Mises-Fisher law about a generic
    direction, against the linear theory: mean rate lambda_l - k Lambda_l / 2, second moments by the
    two-point system (``spde._theory.second_moments``; with attention to first order)."""
    basis, field = solver.basis, solver.field
    mean = project(torch.arange(1.0, basis.dim + 1, dtype=torch.float64).flip(0))  # (d, ..., 1) / |.|
    c0 = von_mises_fisher(basis, concentration, mean)
    saveat = save_every or max(1, solver.steps // 2)
    traj = solver.run(c0.expand(paths, -1).clone(), seed=seed, saveat=saveat)
    att = solver.attention
    free = torch.zeros(basis.degree + 1, dtype=torch.float64)
    if att is not None:
        free = linear_rates(basis.dim, basis.degree, att.beta, att.scale, att.kind)
    rates = free - field.k * basis.laplace_by_degree() / 2  # the Laplacian (k/2) Laplace_S of the Ito SPDE
    times = traj.t.numpy()
    sel = (basis.l >= 1) & (basis.l <= degrees)
    means_th = np.stack([mean_theory(basis, c0, rates, float(t))[sel].numpy() for t in times])
    x = traj.x[:, :, sel]  # (T, paths, K)
    se = (x.real.std(1) + 1j * x.imag.std(1)).numpy() / math.sqrt(paths)
    energy = basis.energy(traj.x)[..., 1 : degrees + 1]  # (T, paths, D)
    e_th = second_moments(field, c0, times, free if att is not None else None)[:, 1 : degrees + 1]
    return MomentCheck(
        times,
        means_th,
        x.mean(1).numpy(),
        se,
        e_th,
        energy.mean(1).numpy(),
        energy.std(1).numpy() / math.sqrt(paths),
        paths,
    )
