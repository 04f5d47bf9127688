"""Metastability: plateaus of the interaction energy, the saddles they sit at, and their durations (BEYOND
section 10; Geshkovski, Koubbi, Polyanskiy, Rigollet, "Dynamic metastability in the self-attention model").

At large beta the tokens first gather into a few clusters, then stay near that multi-cluster configuration (a
saddle of E_beta) for a time exponential in beta before two clusters merge. The escape time from k clusters at
angular distance theta grows like e^{beta (1 - cos theta)}, so the plateaus of E_beta(t) have comparable lengths
in the rescaled time ``tau = log(t) / beta`` (``rescaled_time``) and not in t. ``plateaus`` finds the maximal
intervals where the energy is flat in u, tau measured as a fraction of the run's span (|dE/du| below ``tol``
times the energy's range), so its defaults hold at any beta and for any energy scale (E_beta, its log, or
``observables.normalized_energy``); ``staircase`` adds to each the cluster count and sizes of the state at its
middle, ``saddle_level`` is the level sum_k m_k^2 / N^2 of any saddle (unequal sizes included) and
``equal_clusters_energy`` is the closed-form energy of k equal clusters at equal spacing on the circle,

    E_k = (e^beta - (1/k) sum_{m=0}^{k-1} e^{beta cos(2 pi m / k)}) / 2,

the level of the plateau at that saddle (``cluster_energy``: any cluster sizes and centres). Energies are
computed with e^beta factored out (the log domain): any beta > 0, ``log=True`` for log E.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.sparse.csgraph import connected_components

from .core._errors import ConfigError
from .core._validate import positive_float, positive_int
from .observables import CLUSTER_COS, cosine_matrix

SCALES = ("rescaled", "log", "linear")
PLATEAU_TOL = 0.25  # |dE/du| below this fraction of the energy's range counts as flat (u: tau over its span)
PLATEAU_MIN = 0.025  # shortest plateau, as a fraction of the run's span in the time scale
LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)  # ~709.78


def rescaled_time(t, beta: float, scale: str = "rescaled") -> np.ndarray:
    """``tau``: log(t) / beta ('rescaled'), log t ('log') or t ('linear'), for times ``t > 0`` ``(S,)``."""
    t = np.asarray(t, float)
    if scale == "linear":
        return t
    if np.any(t <= 0):
        raise ConfigError("times", float(t.min()), "log time scales need times > 0 (drop the start state)")
    if scale == "log":
        return np.log(t)
    if scale == "rescaled":
        return np.log(t) / positive_float("beta", beta, "inverse temperature")
    raise ConfigError("scale", scale, f"one of {list(SCALES)}")


def geometric_times(first: float, last: float, count: int) -> list[float]:
    """``count`` times from ``first`` to ``last``, equally spaced in log t (a SaveAt for a staircase)."""
    first, last = positive_float("first", first), positive_float("last", last)
    return np.geomspace(first, last, positive_int("count", count)).tolist()


@dataclass(frozen=True)
class Plateau:
    """One flat stretch of E(t): its ends in t and in the time scale ``tau``, its level (the median energy),
    whether it lasts to the end of the run (``open``: its duration is a lower bound), and the saddle visited
    (``clusters``, their ``sizes`` in decreasing order) when the states were given."""

    start: float
    end: float
    tau_start: float
    tau_end: float
    level: float
    open: bool
    clusters: int = 0
    sizes: tuple[int, ...] = ()

    @property
    def duration(self) -> float:
        """Time spent on the plateau, in t."""
        return self.end - self.start

    @property
    def saddle_level(self) -> float:
        """``saddle_level(sizes)`` of the saddle visited (the level of a normalized energy; nan without sizes)."""
        return saddle_level(self.sizes) if self.sizes else math.nan


def plateaus(
    t, energy, beta: float, *, scale: str = "rescaled", tol: float = PLATEAU_TOL, min_length: float = PLATEAU_MIN
) -> list[Plateau]:
    """The plateaus of one run's energy ``(S,)`` at times ``t > 0`` ``(S,)``, in order: maximal runs of samples
    (on a uniform grid of u = (tau - tau_0) / (tau_S - tau_0), the time scale over the run's span) where
    |dE/du| <= ``tol`` (max E - min E), at least ``min_length`` (a fraction of the span) long. The same plateaus
    at any beta, for any affine change of the energy. Raises ConfigError for mismatched or too short series, a
    non-finite energy or a bad scale."""
    tau, e = rescaled_time(t, beta, scale), np.asarray(energy, float)
    if e.shape != tau.shape or e.ndim != 1 or e.size < 3 or np.any(np.diff(tau) <= 0):
        raise ConfigError("energy", e.shape, "one value per time, at >= 3 increasing times")
    if not np.all(np.isfinite(e)):
        raise ConfigError("energy", "non-finite", "finite values (past e^709 pass log or normalized energies)")
    grid = np.linspace(tau[0], tau[-1], e.size)
    u = np.linspace(0.0, 1.0, e.size)  # grid as a fraction of the span
    values = np.interp(grid, tau, e)
    spread = max(float(values.max() - values.min()), 1e-300)
    flat = np.abs(np.gradient(values, u)) <= tol * spread  # (S,)
    out: list[Plateau] = []
    k = 0
    while k < flat.size:
        if not flat[k]:
            k += 1
            continue
        j = k
        while j + 1 < flat.size and flat[j + 1]:
            j += 1
        if u[j] - u[k] >= min_length:
            ends = np.interp([grid[k], grid[j]], tau, np.asarray(t, float))
            level = float(np.median(values[k : j + 1]))
            out.append(
                Plateau(float(ends[0]), float(ends[1]), float(grid[k]), float(grid[j]), level, j == flat.size - 1)
            )
        k = j + 1
    return out


def cluster_sizes(x: torch.Tensor, threshold: float = CLUSTER_COS) -> tuple[int, ...]:
    """Sizes of the clusters of one state ``(N, d)`` (connected components of cos > threshold), decreasing."""
    adj = (cosine_matrix(x) > threshold).cpu().numpy()
    _, labels = connected_components(adj, directed=False)
    return tuple(sorted(np.bincount(labels).tolist(), reverse=True))


def staircase(
    t, energy, states: torch.Tensor, beta: float, *, threshold: float = CLUSTER_COS, **options
) -> list[Plateau]:
    """``plateaus`` of one run with the saddle of each: cluster count and sizes of the saved state ``(S, N, d)``
    nearest the plateau's middle (in the time scale). ``options`` go to ``plateaus``."""
    found = plateaus(t, energy, beta, **options)
    tau = rescaled_time(t, beta, options.get("scale", "rescaled"))
    out = []
    for p in found:
        k = int(np.argmin(np.abs(tau - (p.tau_start + p.tau_end) / 2)))
        sizes = cluster_sizes(states[k], threshold)
        out.append(Plateau(p.start, p.end, p.tau_start, p.tau_end, p.level, p.open, len(sizes), sizes))
    return out


def _from_log(log_e: float, log: bool) -> float:
    """log E, or E = e^{log E} (+inf where E exceeds the float64 range, never an OverflowError)."""
    if log:
        return log_e
    return math.exp(log_e) if log_e < LOG_FLOAT_MAX else math.inf


def _log_scaled(s: float) -> float:
    return math.log(s) if s > 0 else -math.inf


def equal_clusters_energy(k: int, beta: float, *, log: bool = False) -> float:
    """E_beta of k equal clusters at equal spacing on the circle (module docstring); E_1 = 0. Any beta > 0, in
    the log domain: e^beta factored out (``log=True``: log E_k, -inf for k = 1)."""
    k, beta = positive_int("clusters", k), positive_float("beta", beta, "inverse temperature")
    gaps = np.cos(2 * math.pi * np.arange(k) / k)
    scaled = float(np.mean(-np.expm1(beta * (gaps - 1))) / 2)  # e^{-beta} E_k
    return _from_log(beta + _log_scaled(scaled), log)


def cluster_energy(sizes: Sequence[int], centres: torch.Tensor, beta: float, *, log: bool = False) -> float:
    """E_beta of point clusters: ``sizes`` (n_a) at unit ``centres`` ``(k, d)``,
    sum_ab n_a n_b (e^beta - e^{beta <c_a, c_b>}) / (2 N^2), at any beta > 0 (``log=True``: log E). Raises
    ConfigError for sizes that are not positive integers, one per centre."""
    beta = positive_float("beta", beta, "inverse temperature")
    if len(sizes) != centres.shape[0] or any(int(m) != m or m < 1 for m in sizes):
        raise ConfigError("sizes", list(sizes), f"one positive integer per centre ({centres.shape[0]})")
    n = torch.as_tensor(list(sizes), dtype=torch.float64)
    c = centres.to(torch.float64)
    gram = (c @ c.T).clamp(max=1.0)  # (k, k)
    total = float(n.sum())
    scaled = float((n[:, None] * n[None, :] * -torch.expm1(beta * (gram - 1))).sum()) / (2 * total**2)
    return _from_log(beta + _log_scaled(scaled), log)


def saddle_level(sizes: Sequence[int]) -> float:
    """sum_k m_k^2 / N^2 for clusters of sizes m_k (N = sum m_k): the plateau level of ``normalized_energy`` at
    that saddle as beta -> infinity (the clusters' cross terms e^{beta (cos - 1)} vanish), for any sizes, equal
    or not; the level of E_beta is e^beta (1 - saddle_level) / 2 (BEYOND section 10). E.g. N = 5: 0.20, 0.28,
    0.36, 0.44, 0.52, 0.68, 1."""
    if not sizes or any(int(m) != m or m < 1 for m in sizes):
        raise ConfigError("sizes", list(sizes), "positive integer cluster sizes")
    total = sum(sizes)
    return sum(m * m for m in sizes) / total**2
