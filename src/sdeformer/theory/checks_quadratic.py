"""Monte Carlo checks of the random quadratic form (BEYOND section 4): P(antipodal) = theta_0 / pi,
E<X_t, X_0> = exp(-(n - 1) t / 2), and synchronization under forcing at least as fast as the bound."""

from __future__ import annotations

import math

import numpy as np
import torch

from ..dynamics.discrete import StochasticTransformer
from ..noise.quadratic import QuadraticForm, forcing_rate_bound
from ..noise.sources import BulkSource
from . import montecarlo as mc
from .checks import Check, halved


def _two_at_angle(theta: float, dim: int, paths: int) -> torch.Tensor:
    return mc.two_tokens(math.cos(theta), dim, paths)


def antipodal(
    theta_over_pi: float, dim: int, *, h: float = 0.01, horizon: float = 6.0, paths: int = 2000, seed: int = 0
) -> Check:
    """Fraction of pairs ending antipodal (final u < 0) from angle theta_0 vs theta_0 / pi (BEYOND 4)."""
    x0 = _two_at_angle(theta_over_pi * math.pi, dim, paths)

    def measure(step_size: float) -> mc.Estimate:
        steps = round(horizon / step_size)
        step = StochasticTransformer(steps, horizon, noise=QuadraticForm()).step
        return mc.antipodal_fraction(step, x0, steps, BulkSource.seeded(seed, (paths,)))

    est, bias = halved(measure, h)
    setting = {"theta0_over_pi": theta_over_pi, "dim": dim, "h": h, "horizon": horizon, "paths": paths}
    return Check("quadratic_form", setting, "p_antipodal", theta_over_pi, est.mean, est.se, bias)


def autocorrelation(dim: int, t: float = 1.0, *, h: float = 0.01, paths: int = 4000, seed: int = 0) -> Check:
    """E<X_t, X_0> of one token vs exp(-(n - 1) t / 2) (BEYOND 4: one token is a spherical Brownian motion)."""
    x0 = torch.zeros(paths, 1, dim, dtype=torch.float64)
    x0[..., 0] = 1.0

    def measure(step_size: float) -> mc.Estimate:
        steps = round(t / step_size)
        step = StochasticTransformer(steps, t, noise=QuadraticForm()).step
        final = mc.run_steps(step, x0, steps, BulkSource.seeded(seed, (paths,)))
        return mc.Estimate.of(final[:, 0, 0])

    est, bias = halved(measure, h)
    setting = {"dim": dim, "t": t, "h": h, "paths": paths}
    return Check(
        "quadratic_form", setting, "mean_overlap_with_start", math.exp(-(dim - 1) * t / 2), est.mean, est.se, bias
    )


def forcing_rate(
    gamma: float,
    dim: int,
    *,
    h: float = 0.01,
    horizon: float = 6.0,
    paths: int = 1000,
    groups: int = 8,
    floor: float = 1e-9,
    seed: int = 0,
) -> Check:
    """Synchronization under forcing: the decay rate of the mean geodesic distance of two tokens (start
    orthogonal), fitted on log E dist(t) where E dist > ``floor``, against the bound lambda (BEYOND 4).
    The s.e. is across ``groups`` groups of paths; the check holds when the rate is at least lambda - 3 s.e.
    (``extra`` records whether E dist(t) <= pi exp(-lambda t) at every saved time)."""
    steps, every = round(horizon / h), max(1, round(0.25 / h))
    x0 = mc.two_tokens(0.0, dim, paths)
    dist: list[torch.Tensor] = []

    def observe(k: int, y: torch.Tensor) -> None:
        if k % every == 0:
            chord = torch.linalg.vector_norm(y[:, 0] - y[:, 1], dim=-1)  # (R,)
            dist.append(2 * torch.arcsin((chord / 2).clamp(max=1.0)))

    step = StochasticTransformer(steps, horizon, noise=QuadraticForm(gamma)).step
    mc.run_steps(step, x0, steps, BulkSource.seeded(seed, (paths,)), observe)
    times = np.arange(1, len(dist) + 1) * every * h
    d = torch.stack(dist).double().numpy()  # (S, R)

    def rate(cols: np.ndarray) -> float:
        mean = cols.mean(-1)
        keep = mean > floor
        return float(-np.polyfit(times[keep], np.log(mean[keep]), 1)[0])

    parts = [rate(g) for g in np.array_split(d, groups, axis=1)]
    bound = forcing_rate_bound(gamma, dim)
    under = bool((d.mean(-1) <= math.pi * np.exp(-bound * times)).all())
    measured, se = rate(d), float(np.std(parts, ddof=1) / math.sqrt(groups))
    setting = {"gamma": gamma, "dim": dim, "h": h, "horizon": horizon, "paths": paths}
    return Check(
        "quadratic_form_forced",
        setting,
        "sync_rate",
        bound,
        measured,
        se,
        0.0,
        {"below_bound_curve": under},
        bound="at_least",
    )
