"""Propagation of chaos on the 2-sphere up to N = 10^5 in the spherical sliced Wasserstein distance (THEORY section 5;
docs/spde.md section 9), where exact transport against the density no longer fits.

The spherical sliced Wasserstein distance (Bonet, Berg, Courty, Septier, Drumetz, Pham, ICLR 2023; POT's
``ot.sliced_wasserstein_sphere``) averages the circle's W_2^2 over the great circles:

    SSW_2^2(mu, nu) = int_{S^2} W_2^2(P^p_# mu, P^p_# nu) dsigma(p),   P^p(x) = the angle of x in the great circle
                                                                        with pole p (theta = atan2(<x, u_2>, <x, u_1>)).

Here every slice is exact and nothing stands for the density but its own coefficients: with x = cos(lam) (cos(phi)
u_1 + sin(phi) u_2) + sin(lam) p the slice of rho is the circle density int rho(x) cos(lam) dlam, a trigonometric
polynomial of degree <= L in phi (rho is a polynomial of degree L in x), so its Fourier coefficients are exact on
``ANGLES`` equally spaced phi (exact below trigonometric degree ``ANGLES`` > 2 L) with Gauss-Legendre in lam
(``LATITUDES`` nodes: the integrand is entire in lam; 48 and 96 nodes agree to 1e-15); each slice's W_2^2 is the
circle's exact quantile form (``chaos.w2_circle``). The integral over poles is a quadrature: ``POLES``
points of a spherical Fibonacci lattice, the same for every cloud, time, path and model. So the approximation
is the pole rule alone; ``pole_spread`` gives its size (the s.e. of the mean over poles, and the value on twice
as many poles). SSW_2 is a different distance from W_2 (a great circle's projection is not 1-Lipschitz near its
pole): ``sphere_sliced_table`` states the ratio SSW_2^2 / W_2^2 on the clouds where both are measured (N <= 10^3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from ...spde._solver import DensitySolver
from .._power import SIGNED as WRONG
from .chaos import Chaos, _periodic, cloud_quantile, default_levels, density_quantile, w2_quantiles
from .chaos_power import falls as _falls, power_records
from .chaos_sphere import _solver, driven_clouds, qmc_vmf, sphere_table

POLES = 16  # great circles (their poles on a spherical Fibonacci lattice)
LATITUDES = 48  # Gauss-Legendre nodes along a meridian
SIZES = (100, 300, 1000, 10000, 100000)  # the table's and the report-size check's N (quick: 100, 1000)


def frames(poles: int) -> np.ndarray:
    """``(poles, 3, 3)`` orthonormal frames (u_1, u_2, p): the poles p on a spherical Fibonacci lattice, u_1 the
    unit vector of p x e (e the coordinate axis least aligned with p), u_2 = p x u_1."""
    p = qmc_vmf(poles, 0.0)
    e = np.eye(3)[np.argmin(np.abs(p), -1)]
    u1 = np.cross(p, e)
    u1 /= np.linalg.norm(u1, axis=-1, keepdims=True)
    return np.stack([u1, np.cross(p, u1), p], -2)


def slice_angles(x: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """P^p(x): the angles in [0, 2 pi) of the points ``(..., N, 3)`` in the great circle of ``frame`` ``(3, 3)``."""
    return np.mod(np.arctan2(x @ frame[1], x @ frame[0]), 2 * math.pi)


def slice_coefficients(solver: DensitySolver, c: torch.Tensor, frame: np.ndarray, angles: int = 0) -> np.ndarray:
    """The Fourier coefficients ``(..., L + 1)`` (``chaos.density_quantile``'s convention: c_m = int f(theta)
    e^{-i m theta} dtheta) of the slice P^p_# rho of the densities ``c`` ``(..., P)`` on the great circle of
    ``frame`` (module docstring); ``angles``: equally spaced phi (default the first power of 2 above 2 L)."""
    degree = solver.basis.degree
    angles = angles or 2 ** math.ceil(math.log2(2 * degree + 1))
    nodes, weights = np.polynomial.legendre.leggauss(LATITUDES)
    lam, phi = math.pi / 2 * nodes, 2 * math.pi * np.arange(angles) / angles
    circle = np.stack([np.cos(phi), np.sin(phi)], -1) @ frame[:2]  # (A, 3)
    points = np.cos(lam)[:, None, None] * circle + np.sin(lam)[:, None, None] * frame[2]  # (lat, A, 3)
    grid = torch.from_numpy(points.reshape(-1, 3))  # (lat A, 3): one basis table for every density of c
    rho = solver.basis.synthesize(c, grid, solver.basis.prepare(grid)).numpy()
    meridian = (math.pi / 2 * weights * np.cos(lam)) @ rho.reshape(*rho.shape[:-1], LATITUDES, angles)  # (..., A)
    return (2 * math.pi / angles * np.fft.fft(meridian, axis=-1))[..., : degree + 1]


def sliced_w2(clouds: Sequence[np.ndarray], coefficients: np.ndarray, frame: np.ndarray) -> list[float]:
    """W_2^2 of each slice P^p_# of the ``clouds`` ``(N_i, 3)`` against one slice of a density (its
    ``slice_coefficients`` ``(L + 1,)`` on ``frame``), the density's quantile computed once per level count."""
    return _against(_slices(clouds, frame), coefficients)


def _slices(clouds: Sequence[np.ndarray], frame: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each cloud's slice on ``frame`` as ``chaos.cloud_quantile`` on its default levels: shared by every density."""
    return [cloud_quantile(slice_angles(x, frame), default_levels(x.shape[0])) for x in clouds]


def _against(slices: Sequence[tuple[np.ndarray, np.ndarray]], coefficients: np.ndarray) -> list[float]:
    """``sliced_w2`` of the clouds' ``_slices`` against the slice of one density."""
    quantiles: dict[int, np.ndarray] = {}
    out = []
    for cloud in slices:
        size = cloud[0].shape[0]
        if size not in quantiles:
            t = (np.arange(size) + 0.5) / size
            quantiles[size] = _periodic(density_quantile(coefficients, t), t)
        out.append(w2_quantiles(cloud, quantiles[size]))
    return out


def chaos_sliced_models(
    solver: DensitySolver,
    wrong: Sequence[DensitySolver],
    sizes: Sequence[int],
    runs: int,
    *,
    poles: int = POLES,
    **options,
) -> tuple[tuple[Chaos, ...], np.ndarray]:
    """The clouds and densities of ``chaos_sphere.driven_clouds`` (the same as ``chaos_w2_sphere_models``'), each
    cloud against each density (the right one and those of ``wrong``) in SSW_2^2 on ``poles`` great circles: one
    ``Chaos`` per model (its ``w2`` the mean over poles) and the per-pole values ``(models, kind, sizes, S, runs,
    poles)``. ``options``: those of ``driven_clouds`` (seed, saves, concentration)."""
    traj, tail, densities = driven_clouds(solver, wrong, sizes, runs, **options)
    clouds = [x.numpy() for x in traj.x[1:]]  # (S, runs, N, 3) each, i.i.d. and QMC alternating
    saved = clouds[0].shape[0]
    per_pole = np.zeros((len(densities), 2, len(sizes), saved, runs, poles))
    for f, frame in enumerate(frames(poles)):
        coefficients = [slice_coefficients(solver, density, frame) for density in densities]  # (S, runs, L + 1)
        for s in range(saved):
            for r in range(runs):
                slices = _slices([x[s, r] for x in clouds], frame)
                for m, c in enumerate(coefficients):
                    if m and torch.equal(densities[m][s, r], densities[0][s, r]):  # the common start: not again
                        per_pole[m, :, :, s, r, f] = per_pole[0, :, :, s, r, f]
                        continue
                    per_pole[m, :, :, s, r, f] = np.reshape(_against(slices, c[s, r]), (len(sizes), 2)).T
    times = traj.t.numpy()
    kinds = ("iid", "qmc")
    models = tuple(Chaos(tuple(int(n) for n in sizes), kinds, times, w.mean(-1), dim=3, tail=tail) for w in per_pole)
    return models, per_pole


def pole_spread(per_pole: np.ndarray) -> dict:
    """The pole rule's error on the right model (``per_pole`` of ``chaos_sliced_models``): per kind and size the
    largest over the saved times of the relative s.e. of the mean over poles (of the path-mean SSW_2^2), and the
    relative change of sup_t SSW_2^2 on every other pole of the lattice (a spread, not a bound)."""
    right = per_pole[0].mean(-2)  # (kind, sizes, S, poles): the mean over paths
    mean = right.mean(-1)
    se = right.std(-1, ddof=1) / math.sqrt(right.shape[-1])
    half = right[..., ::2].mean(-1).max(-1)
    return {
        "relative_se": (se / mean).max(-1).tolist(),
        "relative_half_change": (np.abs(half / mean.max(-1) - 1)).tolist(),
    }


def sphere_sliced_table(
    sizes: Sequence[int] = SIZES,
    runs: int = 32,
    seed: int = 0,
    poles: int = POLES,
    wrong: Sequence[float] = (),
    exact_upto: int = 0,
) -> dict:
    """The sphere's propagation of chaos in SSW_2^2 up to N = 10^5 (docs/spde.md section 9; the setting of
    ``chaos_sphere.sphere_table``: ``_solver``, von Mises-Fisher start, t = 0, T/2, T): ``w2`` (the rows of
    ``Chaos.rows`` with their fitted ``slope``), ``slope`` per kind, ``poles`` (``pole_spread``), ``wrong``
    (relative size s -> the rows against the density with the noise covariance x (1 + s), same clouds) and, for
    ``exact_upto`` > 0, ``to_exact``: per kind the ratio of the mean sup_t SSW_2^2 to the mean sup_t W_2^2 of
    ``sphere_table`` at the sizes <= ``exact_upto`` (the same clouds and noise: the same seed draws them first)."""
    models, per_pole = chaos_sliced_models(_solver(), [_solver(1 + s) for s in wrong], sizes, runs, seed=seed,
                                           poles=poles)  # fmt: skip
    rows = models[0].rows()
    out = {"w2": rows, "slope": {r["particles"]: r["slope"] for r in rows}, "poles": pole_spread(per_pole),
           "distance": "spherical sliced W_2^2", "wrong": {s: m.rows() for s, m in zip(wrong, models[1:])}}  # fmt: skip
    if exact_upto:
        exact = sphere_table(tuple(n for n in sizes if n <= exact_upto), runs, seed)["w2"]
        out["to_exact"] = {
            e["particles"]: {n: r["sup_w2"][r["N"].index(n)] / w for n, w in zip(e["N"], e["sup_w2"])}
            for e, r in zip(exact, rows)
        }
    return out


def sliced_check(quick: bool = False, seed: int = 0, runs: int = 32, poles: int = POLES) -> dict:
    """The sphere's propagation of chaos in ``reproduce spde`` beyond exact transport: SSW_2^2 at N = 10^2 .. 10^5
    (``SIZES``, those of ``sphere_sliced_table``: the same clouds and noise; quick 10^2, 10^3) over ``runs`` noise
    paths, i.i.d. and QMC clouds, judged as the circle's
    (``chaos.power_records``: both slopes' 95% intervals below r_d's, every path resolved, and a wrong density,
    noise covariance x 1.1 or x 1.2 on the same Brownian coefficients and clouds, caught), each record with the
    pole rule's relative s.e. on ``poles`` great circles (``pole_spread``: the largest over sizes)."""
    sizes = (100, 1000) if quick else SIZES

    def measure(wrong: Sequence[float], seed: int):
        models, per_pole = chaos_sliced_models(_solver(), [_solver(1 + s) for s in wrong], sizes, runs, seed=seed,
                                               poles=poles)  # fmt: skip
        return models[0].rows(), {s: m.rows() for s, m in zip(wrong, models[1:])}, per_pole

    right, wrong, per_pole = measure(WRONG, seed)
    again = (seed + 1, lambda w: measure(w, seed + 1)[:2])  # the confirming re-run on a fresh seed
    records = power_records("propagation_of_chaos_sphere_sliced", right, wrong, w2=False, again=again)
    spread = pole_spread(per_pole)
    for i, r in enumerate(records):
        r |= {
            "distance": "spherical sliced W_2^2",
            "poles": poles,
            "pole_rule_relative_se": max(spread["relative_se"][i]),
        }
        resolved = r["resolved_paths"] == r["paths"]
        verdict = "holds" if r["holds"] else "not resolved" if resolved else "below resolution"
        r |= {"falls_faster_than_r_d": _falls(r), "resolved": resolved, "verdict": verdict}
    return {"w2": records, "slope": {r["particles"]: r["slope"] for r in records}, "poles": spread}
