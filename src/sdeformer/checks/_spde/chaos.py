"""Propagation of chaos as THEORY section 5 states it, on the circle: ``E sup_t W_2^2(mu^N_t, mu_t) <= C_T r_d(N)``
with ``r_d(N) = N^-1/2`` (ambient d = 2 < 4), mu^N the N-particle empirical measure and mu the density solution of
the SPDE (THEORY section 4) on the same noise path (docs/spde.md section 9).

W_2 on the circle is exact through quantile functions (Delon, Salomon, Sobolevski 2010): with the lifted quantile
functions Q_mu, Q_nu on [0, 1) (Q(t + 1) = Q(t) + 2 pi),

    W_2^2(mu, nu) = min_alpha int_0^1 |Q_mu(t) - Q_nu(t + alpha)|^2 dt.

Both are sampled at M midpoint levels (M a multiple of N, so the empirical quantile is exact and the only error is
the midpoint rule on the density's quantile inside a particle's cell: a relative error below 1 / (M/N)^2 of
the quantile particles' own W_2^2), the periodic parts ``Q(t) - 2 pi t`` are cross-correlated by FFT for every
shift alpha = k / M (the minimum refined by a parabola through its neighbours), and the density's quantile is
its CDF (exact from its Fourier coefficients at 2^16 angles) inverted by linear interpolation (quantile error
about 1e-9). Particles: i.i.d. draws Q_0(U) and the deterministic quantile (QMC) points Q_0((k + 1/2) / N) of
the initial law, all driven with the density by one set of Brownian coefficients. The initial-sample part of the
distance is W_2^2 at t = 0; what the dynamics adds is sup_t W_2^2 - W_2^2(0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from ...dynamics._loop import SaveAt
from ...observables import bootstrap_slope, loglog_slope
from ...spde._diagnostics import TAIL_TOL, tail_share
from ...spde._fields import mlp_noise
from ...spde._initial import von_mises_fisher
from ...spde._solver import DensitySolver
from .._power import SIGNED
from .chaos_power import power_records

SUBLEVELS = 16  # quantile levels per particle (M = SUBLEVELS N, at least MIN_LEVELS)
MIN_LEVELS = 2**14
GRID = 2**16  # angles of the density's CDF table (linear interpolation: quantile error ~ (2 pi / GRID)^2 / 8)


def density_quantile(c: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Q_nu at ``levels`` in [0, 1) for the circle density ``rho = sum_m eps_m Re(c_m e^{i m theta}) / sqrt(2 pi)``
    (``c`` ``(P,)``, normalised to mass 1; angles in [0, 2 pi)): its CDF from angle 0, exact at ``GRID`` + 1
    angles (one FFT), inverted by linear interpolation (quantile error about 1e-9)."""
    m = np.arange(1, c.shape[0])
    a = np.zeros(GRID // 2 + 1, complex)
    a[1 : c.shape[0]] = c[1:] / (1j * m)
    trig = GRID * np.fft.irfft(a, GRID) - 2 * np.real(a).sum()  # 2 Re sum_m a_m (e^{i m theta_j} - 1)
    theta = 2 * math.pi * np.arange(GRID + 1) / GRID
    cdf = (c[0].real * theta + np.append(trig, trig[0])) / (c[0].real * 2 * math.pi)
    return np.interp(levels, np.maximum.accumulate(cdf), theta)


def default_levels(n: int) -> int:
    """``w2_circle``'s quantile levels for N = ``n`` particles: SUBLEVELS N, at least MIN_LEVELS (a multiple of N)."""
    return n * max(SUBLEVELS, -(-MIN_LEVELS // n))


def _periodic(q: np.ndarray, levels: np.ndarray) -> np.ndarray:
    return q - 2 * math.pi * levels


def w2_circle(points: np.ndarray, c: np.ndarray, levels: int = 0, g: np.ndarray | None = None) -> float:
    """W_2^2 between the empirical measure of angles ``points`` ``(N,)`` and the density with coefficients ``c``,
    on ``levels`` midpoint levels (a multiple of N; default SUBLEVELS N, at least MIN_LEVELS); ``g``: the
    density's periodic quantile part on those levels, when already computed."""
    size = levels or default_levels(points.shape[0])
    t = (np.arange(size) + 0.5) / size
    g = _periodic(density_quantile(c, t), t) if g is None else g
    return w2_quantiles(cloud_quantile(points, size), g)


def cloud_quantile(points: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The periodic part of the empirical quantile of angles ``points`` ``(N,)`` on ``size`` midpoint levels (a
    multiple of N) and its real FFT: what ``w2_quantiles`` needs of a cloud, computed once for every density."""
    n = points.shape[0]
    if size % n:
        raise ValueError(f"w2_circle: {size} levels are not a multiple of N = {n}")
    t = (np.arange(size) + 0.5) / size
    f = _periodic(np.sort(np.mod(points, 2 * math.pi))[np.floor(t * n).astype(int)], t)
    return f, np.fft.rfft(f)


def w2_quantiles(cloud: tuple[np.ndarray, np.ndarray], g: np.ndarray) -> float:
    """W_2^2 from the cloud's ``cloud_quantile`` and the density's periodic quantile part ``g`` on the same
    levels: the minimum over the shifts alpha = k / M by one circular cross-correlation (module docstring)."""
    f, spectrum = cloud
    size = f.shape[0]
    cross = np.fft.irfft(np.conj(spectrum) * np.fft.rfft(g), size) / size  # mean_j f_j g_(j+k)
    shift = 2 * math.pi * (np.arange(2 * size) - size) / size  # alpha = k / M, k = -M .. M - 1
    base = np.tile((f * f).mean() + (g * g).mean() - 2 * cross, 2)
    cost = base + shift * (shift - 2 * (f.mean() - g.mean()))
    k = int(np.clip(np.argmin(cost), 1, 2 * size - 2))
    lo, mid, hi = cost[k - 1 : k + 2]
    curve = hi - 2 * mid + lo  # a parabola through the three shifts nearest the minimum: alpha off the grid
    best = mid - (hi - lo) ** 2 / (8 * curve) if curve > 0 else mid
    return float(max(best, 0.0))


def r_d(n: np.ndarray | Sequence[int], dim: int) -> np.ndarray:
    """The rate of THEORY section 5 in the ambient dimension: N^-1/2 (d < 4), N^-1/2 log(1 + N), N^-2/d."""
    n = np.asarray(n, float)
    if dim < 4:
        return n**-0.5
    return n**-0.5 * np.log1p(n) if dim == 4 else n ** (-2.0 / dim)


@dataclass(frozen=True)
class Chaos:
    """W_2^2 of N-particle clouds against the density on the same noise paths: ``w2`` ``(kind, sizes, S, runs)``
    at the saved ``times`` for the particle kinds ``kinds`` ('iid', 'qmc'), in the ambient dimension ``dim``;
    ``tail``: the density's resolution, its largest tail share over every step of each path (``TAIL_TOL``)."""

    sizes: tuple[int, ...]
    kinds: tuple[str, ...]
    times: np.ndarray
    w2: np.ndarray
    dim: int = 2
    tail: np.ndarray | None = None  # (runs,): the density's largest tail share over every step of each path

    def sup(self) -> np.ndarray:
        """sup over the saved times, ``(kind, sizes, runs)``."""
        return self.w2.max(2)

    def rows(self) -> list[dict]:
        """Per kind: N, mean sup_t W_2^2, its 95% interval (1.96 s.e. over the paths), the initial-sample part
        and what the dynamics adds (each with its s.e.), the fitted slopes of both with their bootstrap 95%
        intervals beside the slope of r_d(N)."""
        out, runs = [], self.w2.shape[-1]
        for i, kind in enumerate(self.kinds):
            sup, start = self.sup()[i], self.w2[i, :, 0]
            se = sup.std(-1, ddof=1) / math.sqrt(runs)
            added = sup - start
            out.append(
                {
                    "particles": kind,
                    "N": list(self.sizes),
                    "sup_w2": sup.mean(-1).tolist(),
                    "sup_w2_ci": [[m - 1.96 * s, m + 1.96 * s] for m, s in zip(sup.mean(-1), se)],
                    "initial_w2": start.mean(-1).tolist(),
                    "initial_w2_se": (start.std(-1, ddof=1) / math.sqrt(runs)).tolist(),
                    "dynamics_added": added.mean(-1).tolist(),
                    "dynamics_added_se": (added.std(-1, ddof=1) / math.sqrt(runs)).tolist(),
                    "slope": loglog_slope(self.sizes, sup.mean(-1)),
                    "slope_ci": list(bootstrap_slope(self.sizes, sup)),
                    "dynamics_slope": loglog_slope(self.sizes, added.mean(-1)),
                    "dynamics_slope_ci": list(bootstrap_slope(self.sizes, np.maximum(added, np.finfo(float).tiny))),
                    "bound_slope": loglog_slope(self.sizes, r_d(self.sizes, self.dim)),
                    "paths": runs,
                    "sup_w2_last_paths": sup[-1].tolist(),  # per path at the largest N: the paired test's
                    **self.resolution(),
                }
            )
        return out

    def upto(self, largest: int) -> Chaos:
        """The same measurement at the sizes N <= ``largest`` only."""
        keep = [i for i, n in enumerate(self.sizes) if n <= largest]
        return replace(self, sizes=tuple(self.sizes[i] for i in keep), w2=self.w2[:, keep])

    def resolution(self) -> dict:
        """The density's largest tail share over every step and path, and how many paths stayed resolved."""
        if self.tail is None:
            return {}
        resolved = int((self.tail <= TAIL_TOL).sum())
        return {"max_tail_share": float(self.tail.max()), "resolved_paths": resolved}


def tracked_run(solver: DensitySolver, c0: torch.Tensor, seed: int, every: int, clouds: Sequence[torch.Tensor]):
    """``solver.run`` of the batch ``c0`` with ``clouds``, saving every ``every`` steps, and the density's tail
    share evaluated at every step (``diagnostics.tail_share``): (trajectory, largest tail share per path)."""
    worst = torch.zeros(c0.shape[:-1], dtype=torch.float64)

    def observe(k: int, t: float, state) -> None:
        worst.copy_(torch.maximum(worst, tail_share(solver.basis, state[0] if isinstance(state, tuple) else state)))

    observe(0, 0.0, c0)
    traj = solver.run(c0, seed=seed, saveat=SaveAt(every=every, observers=(observe,)), particles=tuple(clouds))
    return traj, worst.numpy()


def _angles(x: torch.Tensor) -> np.ndarray:
    return torch.atan2(x[..., 1], x[..., 0]).numpy()


def chaos_w2(solver: DensitySolver, sizes: Sequence[int], runs: int, **options: Any) -> Chaos:
    """i.i.d. and QMC clouds of every size from the von Mises-Fisher law, driven with the density by ``solver``
    over ``runs`` noise paths (one batch); W_2^2 at ``saves`` + 1 equally spaced times. ``options``: those of
    ``chaos_w2_models`` (seed, saves, concentration)."""
    return chaos_w2_models([solver], sizes, runs, **options)[0]


def chaos_w2_models(
    models: Sequence[DensitySolver],
    sizes: Sequence[int],
    runs: int,
    *,
    seed: int = 0,
    saves: int = 4,
    concentration: float = 1.0,
) -> tuple[Chaos, ...]:
    """``chaos_w2`` for each density of ``models``, against the same clouds driven once with the first (the right
    model); the others (wrong models: another equation, e.g. another noise scale) are re-run on the same Brownian
    coefficients (same seed): one ``Chaos`` each."""
    solver, *wrong = models
    if solver.dim != 2:
        raise ValueError("chaos_w2: the exact quantile form is on the circle (dim 2)")
    c0 = von_mises_fisher(solver.basis, concentration)
    c0_np = c0.numpy()
    rng = np.random.default_rng(seed)
    clouds: list[torch.Tensor] = []
    for n in sizes:
        iid = density_quantile(c0_np, rng.random((runs * n,))).reshape(runs, n)
        qmc = np.broadcast_to(density_quantile(c0_np, (np.arange(n) + 0.5) / n), (runs, n))
        for theta in (iid, qmc):
            t = torch.from_numpy(np.ascontiguousarray(theta))
            clouds.append(torch.stack([t.cos(), t.sin()], -1))
    every = max(1, solver.steps // saves)
    batch = c0.expand(runs, -1).clone()
    traj, tail = tracked_run(solver, batch, seed, every, clouds)
    densities = [traj.x[0], *(w.run(batch, seed=seed, saveat=every).x for w in wrong)]  # (S, runs, P) each
    size = SUBLEVELS * max(sizes)
    if any(size % n for n in sizes):
        raise ValueError("chaos_w2: every size must divide the largest")
    t = (np.arange(size) + 0.5) / size
    w2 = np.zeros((len(densities), 2, len(sizes), traj.x[0].shape[0], runs))
    for m, dens in enumerate(d.numpy() for d in densities):
        for s in range(dens.shape[0]):
            for r in range(runs):
                g = _periodic(density_quantile(dens[s, r], t), t)
                for j, cloud in enumerate(traj.x[1:]):
                    w2[m, j % 2, j // 2, s, r] = w2_circle(_angles(cloud[s, r]), dens[s, r], size, g)
    return tuple(Chaos(tuple(int(n) for n in sizes), ("iid", "qmc"), traj.t.numpy(), w, tail=tail) for w in w2)


# -- the report's propagation-of-chaos check (docs/spde.md section 9) --------------------------------------------

SCALE = 0.5  # ReLU noise (sU = sW = 0.5, degree 3) at this amplitude, softmax beta = 2, T = 0.5
DEGREE = 64  # the density's degree: every one of the 32 paths resolved at every step (at 32 one path is not)


def _solver(covariance: float = 1.0) -> DensitySolver:
    field = mlp_noise(2, "relu", 0.5, 0.5, modes=3, scale=SCALE * math.sqrt(covariance))
    return DensitySolver(field, DEGREE, 20, 0.5, beta=2.0)


def w2_check(
    quick: bool = False, seed: int = 0, runs: int = 32, particle_field: bool = True, independent: bool = True
) -> dict:
    """W_2^2 against N (10^2 .. 10^4; quick 10^2 .. 10^3) over ``runs`` noise paths for i.i.d. and QMC particles,
    and the same with the density's noise covariance x 0.8 .. 1.2 (a wrong model: the density of another
    equation on the same Brownian coefficients), judged by ``_chaos_power.power_records`` (the paired test at
    the largest N; i.i.d. clouds also against r_d's slope; the computed size_80 confirmed on seed + 1).
    ``particle_field``: also the wrong particle field over K seeds and the interaction part
    (``chaos_particles.particle_field_check``, under ``particle_field``); ``independent``: the i.i.d. clouds
    against the independent density scheme over K seeds (``chaos_independent.independent_check``, under
    ``independent``)."""
    sizes = (100, 1000) if quick else (100, 1000, 10000)

    def measure(wrong: Sequence[float], seed: int) -> tuple[list[dict], dict[float, list[dict]]]:
        found = chaos_w2_models([_solver(), *(_solver(1 + s) for s in wrong)], sizes, runs, seed=seed)
        return found[0].rows(), {s: c.rows() for s, c in zip(wrong, found[1:])}

    right, wrong = measure(SIGNED, seed)
    records = power_records("propagation_of_chaos", right, wrong, again=(seed + 1, lambda w: measure(w, seed + 1)))
    out = {"w2": records, "slope": {r["particles"]: r["slope"] for r in records}}
    if particle_field:
        from .chaos_particles import particle_field_check  # it builds on this module

        out["particle_field"] = particle_field_check(quick, seed, runs)
    if independent:
        from .chaos_independent import independent_check  # it builds on this module

        out["independent"] = independent_check(quick, seed, runs)
    return out


def circle_table(sizes: Sequence[int] = (100, 1000, 10000, 100000), runs: int = 32, seed: int = 0) -> list[dict]:
    """The measurement of docs/spde.md section 9 on the circle (the right model of ``w2_check``, N up to 10^5):
    the rows of ``Chaos.rows`` (``sup_w2`` with its interval, the initial and dynamics parts, fitted ``slope``)."""
    return chaos_w2(_solver(), sizes, runs, seed=seed).rows()
