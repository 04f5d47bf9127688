"""What a density run reports (docs/spde.md section 6; THEORY sections 4-5): mass, positivity, the spectral
tail and the resolution verdict, the energy E_beta of the density, mode amplitudes, and weak distances between
a density and a particle cloud.

Resolution is reported, never hidden: the tail is the share sqrt(sum_{l > L - L/3} E_l / sum_l E_l) of the
energy E_l = sum_m |c_lm|^2 in the top third of the degrees, evaluated at every step (``coupled.record``); from
the first step it exceeds ``tol`` on, every result is marked "below resolution" (``resolved`` False), and
densities and clouds are compared only while resolved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ._budget import beta_value
from ._harmonics import Harmonics

TAIL_TOL = 1e-3  # tail share above which a density is below resolution (docs/spde.md section 6: calibrated)
LOW_MODES = 8  # the "first modes" of the weak distance


def tail_share(basis: Harmonics, c: torch.Tensor) -> torch.Tensor:
    """sqrt(energy in degrees > L - max(1, L // 3) / total energy), ``(..., P) -> (...)``."""
    e = basis.energy(c)  # (..., L+1)
    cut = basis.degree - max(1, basis.degree // 3)
    return (e[..., cut + 1 :].sum(-1) / e.sum(-1)).sqrt()


def min_density(basis: Harmonics, c: torch.Tensor) -> torch.Tensor:
    """min rho / (1 / area) on a grid exact to degree 4L: < 0 where positivity is lost. ``(..., P) -> (...)``."""
    pts, _ = basis.quadrature(4 * basis.degree)
    return basis.synthesize(c, pts.to(c.real.dtype).to(c.device)).amin(-1) * basis.area


def energy_beta(basis: Harmonics, c: torch.Tensor, beta: float) -> torch.Tensor:
    """E_beta(mu) = 1/2 (e^beta mass^2 - sum_k eps_k F_l |c_k|^2) (THEORY section 5) from the coefficients
    (exact for a density of degree <= L; for a cloud, its coefficients up to L give the series cut there)."""
    f = basis.per_coefficient(basis.exp_multipliers(beta_value(beta), scaled=True)).to(c.device)
    quad = (basis.eps.to(c.device) * f * c.abs().pow(2)).sum(-1)
    return 0.5 * math.exp(beta) * (basis.mass(c) ** 2 - quad)


def cloud_coefficients(basis: Harmonics, x: torch.Tensor) -> torch.Tensor:
    """The coefficients of the empirical measure of x ``(..., N, d)`` -> ``(..., P)``."""
    masses = torch.full(x.shape[:-1], 1.0 / x.shape[-2], dtype=x.dtype, device=x.device)
    return basis.moments(x, masses)


def low_mode_distance(basis: Harmonics, a: torch.Tensor, b: torch.Tensor, upto: int = LOW_MODES) -> torch.Tensor:
    """sqrt(sum_{1 <= l <= upto} E_l(a - b)): the L^2 distance of the projections on degrees 1..upto."""
    return basis.energy(a - b)[..., 1 : upto + 1].sum(-1).sqrt()


def negative_sobolev(basis: Harmonics, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """sqrt(sum_{l >= 1} E_l(a - b) / (l (l + d - 2))): the H^-1 distance, a smoothed weak distance."""
    e = basis.energy(a - b)[..., 1:]
    lf = torch.arange(1, basis.degree + 1, dtype=e.dtype, device=e.device)
    return (e / (lf * (lf + basis.dim - 2))).sum(-1).sqrt()


@dataclass(frozen=True)
class Resolution:
    """The tail per saved time, the tolerance, the first time it was exceeded (None: never) and ``resolved``
    (False from that time on: "below resolution")."""

    tol: float
    tail: np.ndarray
    resolved: np.ndarray
    first_unresolved: float | None

    def to_json(self) -> dict:
        return {
            "tol": self.tol,
            "tail_max": float(np.max(self.tail)),
            "first_unresolved_time": self.first_unresolved,
            "resolved_fraction": float(np.mean(self.resolved)),
        }


def resolution(
    t: np.ndarray, tail: np.ndarray, tol: float = TAIL_TOL, every: tuple | None = None, saturated: float | None = None
) -> Resolution:
    """The verdict of one run: ``tail`` ``(S,)`` (or ``(S, B)``: the worst run counts) at the saved times t.
    ``every``: (times, tails) of every step (``coupled.Recording.every``): a saved time is then resolved when no
    step up to it exceeded ``tol``, and the first unresolved time is that step's. ``saturated``: the step dt of
    a run outside its scheme's range (``dynamics._step_guard``): below resolution from the first step on,
    whatever the tail says."""
    if saturated is not None:
        verdict = resolution(t, tail, tol, every)
        resolved = verdict.resolved & (np.asarray(t, float) < saturated)
        return Resolution(tol, verdict.tail, resolved, float(saturated))
    worst = np.asarray(tail, float).reshape(len(t), -1).max(-1)
    if every is not None:
        times = np.asarray(every[0], float)
        running = np.maximum.accumulate(np.asarray(every[1], float).reshape(len(times), -1).max(-1))
        upto = np.searchsorted(times, np.asarray(t, float) + 1e-9 * (1 + abs(times[-1])), side="right") - 1
        worst = np.maximum(worst, running[upto])  # the worst step up to each saved time
        bad = np.flatnonzero(running > tol)
        return Resolution(tol, worst, worst <= tol, float(times[bad[0]]) if bad.size else None)
    resolved = np.cumprod(worst <= tol).astype(bool)
    bad = np.flatnonzero(~resolved)
    return Resolution(tol, worst, resolved, float(t[bad[0]]) if bad.size else None)


MAP_POINTS = (256, (61, 120))  # figure grids: angles on the circle, (latitudes, longitudes) on the sphere


def density_map(basis: Harmonics, c: torch.Tensor) -> tuple[list[np.ndarray], np.ndarray]:
    """The density on a figure grid: the circle's angles in [-pi, pi) ``(G,)`` -> ``(..., G)``; the sphere's
    (latitude, longitude) in [-pi/2, pi/2] x [-pi, pi) -> ``(..., nlat, nlon)``. Returns (axes, values)."""
    if basis.dim == 2:
        theta = torch.linspace(-math.pi, math.pi, MAP_POINTS[0] + 1, dtype=torch.float64)[:-1]
        pts = torch.stack([theta.cos(), theta.sin()], -1)
        return [theta.numpy()], basis.synthesize(c, pts.to(c.device)).cpu().numpy()
    nlat, nlon = MAP_POINTS[1]
    lat = torch.linspace(-math.pi / 2, math.pi / 2, nlat, dtype=torch.float64)
    lon = torch.linspace(-math.pi, math.pi, nlon + 1, dtype=torch.float64)[:-1]
    la, lo = torch.meshgrid(lat, lon, indexing="ij")
    pts = torch.stack([la.cos() * lo.cos(), la.cos() * lo.sin(), la.sin()], -1).reshape(-1, 3)
    values = basis.synthesize(c, pts.to(c.device)).cpu().numpy()
    return [lat.numpy(), lon.numpy()], values.reshape(values.shape[:-1] + (nlat, nlon))
