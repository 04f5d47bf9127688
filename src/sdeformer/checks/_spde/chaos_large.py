"""Propagation of chaos on the circle to N = 10^6 particles, and the interaction energy's fluctuation along the
dynamics (THEORY sections 4-5; docs/spde.md section 9, "To a million particles").

**W_2 to 10^6.** The circle's check (``chaos.w2_check``, N <= 10^4) extended two decades: per noise path, i.i.d.
clouds of N = 10^2 .. 10^6 particles from the initial law are driven with the density solver on that path
(``DensitySolver.run(..., particles=...)``: each cloud's own attention through the harmonic series of
``spde._attention.KernelAttention`` and the field's spectral modes, O(N x modes) per step, no N x N matrix), and
sup_t W_2^2(mu^N_t, mu_t) is the exact quantile form ``chaos.w2_circle`` at ``LEVELS`` midpoint levels per
particle (one sort and FFTs of length LEVELS N: O(N log N)); its midpoint-rule error is a relative 1/LEVELS^2
of a quantile cloud's own W_2^2 (~N^-2): 1.6e-3 of an i.i.d. cloud's (~N^-1) at N = 100, falling like 1/N.
Paths run one at a time (memory O(N)); each path's seed is ``derive_seeds(seed, paths)[p]``. THEORY's rate
for i.i.d. starts is r_d(N) = N^-1/2 (ambient d = 2): the fitted slope of E sup_t W_2^2 with its bootstrap
interval over the paths is compared with it (holds when the interval lies below -1/2; the one-dimensional
sampling rate -1 is beside it).

**The energy along the dynamics.** E_beta(mu^N_t) = 1/(2 N^2) sum_{i != j} (e^beta - e^{beta <X_i, X_j>}) of K
independent i.i.d. clouds driven on ONE noise path (the density's batch holds K copies of that path: one seed
repeated), at the saved times t. Prediction: at t = 0 the Hoeffding law of ``theory.energy_law`` (von Mises
start, not uniform: sd = 2 sd_mu(h_1) N^-1/2); at t > 0 the fluctuation theorem of propagation of chaos
(Sznitman 1991, "Topics in propagation of chaos", ch. I.1; conditional on the common noise, Coghi & Flandoli
2016): sqrt(N) (mu^N_t - mu_t) has a Gaussian limit given the noise, so a smooth functional with a non-constant
first variation (mu_t not uniform) fluctuates at N^-1/2: the sd's slope is -1/2 at every t. Its constant is not
predicted; the reference column is the i.i.d. law at mu_t (2 sd_{mu_t}(h_t) N^-1/2, h_t(u) = (e^beta - int
e^{beta <u, v>} dmu_t(v)) / 2 from the density's coefficients): the limit flow's push-forward of the start, which
the interaction correlates. A slope interval that contains -1/2 and excludes -1 (a degenerate law) holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch

from ... import _spheresums
from ...core._rng import derive_seeds
from ...observables import bootstrap_slope, loglog_slope
from ...spde._initial import von_mises_fisher
from ...spde._solver import DensitySolver
from .chaos import Chaos, _angles, _solver, density_quantile, tracked_run, w2_circle

LEVELS = 4  # quantile levels per particle in W_2 (midpoint error: 1/16 of a quantile cloud's W_2^2)
SAVES = 4  # W_2 and the energy at t = 0, T/4, T/2, 3T/4, T
SIZES, QUICK_SIZES = tuple(10**k for k in range(2, 7)), (100, 1000, 10000)
PATHS, QUICK_PATHS = 8, 4
ENERGY_SIZES, QUICK_ENERGY_SIZES = (100, 1000, 10000, 100000), (100, 1000, 10000)
CLOUDS, QUICK_CLOUDS = 16, 12  # independent clouds per size on one noise path
ENERGY_PATHS, QUICK_ENERGY_PATHS = 2, 1
SD_FLOOR = 1e-10  # sd of E_beta below this is round-off (harmonic sums: <= 1e-13 e^beta): not a fluctuation
GRID = 4096  # angles of h_t's trapezoidal rule (spectrally accurate for these smooth densities)
Sampler = Callable[[np.ndarray, tuple[int, ...], np.random.Generator], np.ndarray]


def iid_angles(c: np.ndarray, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Angles ``shape`` drawn i.i.d. from the circle density with coefficients ``c`` (its quantile of uniforms)."""
    return density_quantile(c, rng.random(math.prod(shape))).reshape(shape)


def _points(theta: np.ndarray) -> torch.Tensor:
    t = torch.from_numpy(np.ascontiguousarray(theta))
    return torch.stack([t.cos(), t.sin()], -1)


def drive(solver: DensitySolver, seed: int, clouds: Sequence[np.ndarray], concentration: float = 1.0):
    """The density from the von Mises-Fisher start and the clouds' angles ``(copies, N_i)`` on the noise path of
    ``seed`` (every copy of the batch on the same path): (times ``(S,)``, density ``(S, copies, P)``, angles
    ``[(S, copies, N_i)]``, largest tail share)."""
    copies = clouds[0].shape[0]
    c0 = von_mises_fisher(solver.basis, concentration).expand(copies, -1).clone()
    every = max(1, solver.steps // SAVES)
    traj, tail = tracked_run(solver, c0, [seed] * copies, every, [_points(t) for t in clouds])  # pyright: ignore[reportArgumentType]
    return traj.t.numpy(), traj.x[0].numpy(), [_angles(x) for x in traj.x[1:]], float(tail.max())


def w2_paths(solver: DensitySolver, sizes: Sequence[int], paths: int, seed: int = 0, against=None) -> Chaos:
    """sup_t W_2^2 of one i.i.d. cloud per size against the density, per path (module docstring): a ``Chaos``
    with ``w2`` ``(1, sizes, S, paths)``. ``against``: another solver (another equation) whose density on the
    same Brownian coefficients the clouds are compared with: the mismatched density."""
    rng = np.random.default_rng([seed, 42])
    c0 = von_mises_fisher(solver.basis, 1.0).numpy()
    w2, tails, times = [], [], np.zeros(0)
    for path_seed in derive_seeds(seed, paths):
        times, dens, clouds, tail = drive(solver, path_seed, [iid_angles(c0, (1, n), rng) for n in sizes])
        if against is not None:
            dens = drive(against, path_seed, [np.zeros((1, 1))])[1]
        w2.append([[w2_circle(a[s, 0], dens[s, 0], LEVELS * a.shape[-1]) for s in range(len(times))] for a in clouds])
        tails.append(tail)
    return Chaos(tuple(sizes), ("iid",), times, np.moveaxis(np.array(w2), 0, -1)[None], tail=np.array(tails))


def limit_h_sd(solver: DensitySolver, c: np.ndarray, beta: float) -> float:
    """sd_{mu}(h) for h(u) = (e^beta - int e^{beta <u, v>} dmu(v)) / 2 and mu the density of coefficients ``c``:
    the i.i.d. energy's sd is 2 sd_mu(h) N^-1/2 (``theory.energy_law``)."""
    theta = torch.arange(GRID, dtype=torch.float64) * (2 * math.pi / GRID)
    grid = torch.stack([theta.cos(), theta.sin()], -1)
    rho = solver.basis.synthesize(torch.from_numpy(c), grid).real.numpy() * (2 * math.pi / GRID)  # masses
    kernel = np.exp(beta * (np.cos(theta.numpy()) - 1.0))
    mean_kernel = np.fft.irfft(np.fft.rfft(kernel) * np.fft.rfft(rho), GRID) * math.exp(beta)  # circular conv.
    h = (math.exp(beta) - mean_kernel) / 2
    mean = (h * rho).sum() / rho.sum()
    return float(math.sqrt(max(((h - mean) ** 2 * rho).sum() / rho.sum(), 0.0)))


def energy_paths(
    solver: DensitySolver,
    sizes: Sequence[int],
    clouds: int,
    paths: int,
    seed: int = 0,
    sampler: Sampler = iid_angles,
) -> dict:
    """E_beta of ``clouds`` independent clouds per size on each of ``paths`` noise paths, at the saved times:
    ``energy`` ``(paths, sizes, S, clouds)``, ``h_sd`` ``(paths, S)`` (``limit_h_sd`` of that path's density),
    ``times``. ``sampler(c0, shape, rng)``: the initial angles (default i.i.d. from the initial law)."""
    assert solver.attention is not None, "the energy's beta is the attention's"
    beta = solver.attention.beta
    rng = np.random.default_rng([seed, 43])
    c0 = von_mises_fisher(solver.basis, 1.0).numpy()
    energy, h_sd, times = [], [], np.zeros(0)
    for path_seed in derive_seeds(seed + 1, paths):
        times, dens, angles, _ = drive(solver, path_seed, [sampler(c0, (clouds, n), rng) for n in sizes])
        e = [[_spheresums.scaled_energy(_points(a[s]), beta).numpy() * math.exp(beta) for s in range(len(times))]
             for a in angles]  # fmt: skip
        energy.append(e)
        h_sd.append([limit_h_sd(solver, dens[s, 0], beta) for s in range(len(times))])
    return {"energy": np.array(energy), "h_sd": np.array(h_sd), "times": times, "beta": beta}


def energy_rows(found: dict, sizes: Sequence[int], seed: int = 0) -> list[dict]:
    """Per saved time: the sd over clouds (pooled over paths: the mean of the per-path variances) per N with a 95%
    interval (the variance's mean +- 1.96 s.e.), the
    i.i.d. reference at mu_t, the sd's slope with its 95% bootstrap interval (over clouds), against -1/2; it holds
    when every sd is above round-off (``SD_FLOOR``) and the interval contains -1/2 and not -1 (a degenerate law)."""
    e, ns = found["energy"], np.asarray(sizes, float)  # (paths, sizes, S, K)
    k = e.shape[-1]
    dev2 = (e - e.mean(-1, keepdims=True)) ** 2 * (k / (k - 1))  # unbiased per-cloud variance terms
    rows = []
    for s, t in enumerate(found["times"]):
        samples = np.moveaxis(dev2[:, :, s], 1, 0).reshape(len(ns), -1)  # (sizes, paths * K)
        var, var_se = samples.mean(-1), samples.std(-1, ddof=1) / math.sqrt(samples.shape[1])
        sd = np.sqrt(var)
        ref = 2 * np.sqrt((found["h_sd"][:, s] ** 2).mean()) / np.sqrt(ns)
        lo, hi = bootstrap_slope(ns, np.maximum(samples, np.finfo(float).tiny), seed=seed)
        slope = loglog_slope(ns, sd**2) / 2
        rows.append({"t": float(t), "N": [int(n) for n in ns], "sd": sd.tolist(), "iid_sd": ref.tolist(),
                     "sd_ci": np.sqrt(np.maximum(var[:, None] + np.outer(var_se, [-1.96, 1.96]), 0)).tolist(),
                     "mean": e[:, :, s].mean((0, 2)).tolist(), "slope": slope, "slope_ci": [lo / 2, hi / 2],
                     "predicted_slope": -0.5, "clouds": int(k), "paths": int(e.shape[0]),
                     "resolved": bool(sd.min() > SD_FLOOR),
                     "holds": bool(sd.min() > SD_FLOOR and lo / 2 <= -0.5 <= hi / 2 and lo / 2 > -1.0)})  # fmt: skip
    return rows


def large_check(quick: bool = False, seed: int = 0) -> dict:
    """The report's part (docs/spde.md section 9): ``w2`` (``Chaos.rows`` of ``w2_paths`` to 10^6, with
    ``holds``: every path resolved and the slope's interval below r_d's -1/2) and ``energy`` (``energy_rows``)."""
    solver = _solver()
    sizes, paths = (QUICK_SIZES, QUICK_PATHS) if quick else (SIZES, PATHS)
    (w2,) = w2_paths(solver, sizes, paths, seed).rows()
    w2["holds"] = bool(w2["resolved_paths"] == paths and w2["slope_ci"][1] < w2["bound_slope"])
    esizes = QUICK_ENERGY_SIZES if quick else ENERGY_SIZES
    clouds, epaths = (QUICK_CLOUDS, QUICK_ENERGY_PATHS) if quick else (CLOUDS, ENERGY_PATHS)
    energy = energy_rows(energy_paths(solver, esizes, clouds, epaths, seed), esizes, seed)
    return {"w2": w2, "energy": energy, "levels_per_particle": LEVELS}
