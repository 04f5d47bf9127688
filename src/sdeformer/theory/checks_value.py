"""Monte Carlo checks of value-matrix noise (BEYOND section 2): P(antipodal | u0 = 0) of two tokens against the
scale-function quadrature, and the threshold beta_c(d) through the growth rate of 1 + u at the antipode."""

from __future__ import annotations

import math

from ..dynamics.discrete import StochasticTransformer
from ..noise.sources import BulkSource
from ..noise.value import ValueNoise
from . import montecarlo as mc
from . import quadrature as q
from .checks import Check, halved


def antipodal(
    beta: float, dim: int, *, h: float = 0.01, horizon: float = 80.0, paths: int = 2000, seed: int = 0
) -> Check:
    """Fraction of pairs with final u < 0 from u0 = 0 vs the scale-function P(antipodal | 0)."""
    x0 = mc.two_tokens(0.0, dim, paths)

    def measure(step_size: float) -> mc.Estimate:
        steps = round(horizon / step_size)
        step = StochasticTransformer(steps, horizon, noise=ValueNoise(beta)).step
        return mc.antipodal_fraction(step, x0, steps, BulkSource.seeded(seed, (paths,)))

    est, bias = halved(measure, h)
    setting = {"beta": beta, "dim": dim, "h": h, "horizon": horizon, "paths": paths}
    return Check("value_noise", setting, "p_antipodal", q.value_noise_antipodal(beta, dim), est.mean, est.se, bias)


def antipode_exponent_theory(beta: float, dim: int) -> float:
    """Growth rate of log(1 + u) near u = -1: (2/d)((d - 1) r - 1), r = 1/(2 cosh^2 beta); negative (the
    antipode attracts) iff beta > beta_c(d)."""
    r = 1.0 / (2.0 * math.cosh(beta) ** 2)
    return 2.0 / dim * ((dim - 1) * r - 1.0)


def antipode_exponent(
    beta: float,
    dim: int,
    *,
    gap: float = 1e-8,
    h: float = 0.005,
    horizon: float = 4.0,
    paths: int = 2000,
    seed: int = 0,
) -> Check:
    """E[log(1 + u_T) - log(1 + u_0)] / T for pairs started at 1 + u_0 = ``gap`` (1 + u = |x_1 + x_2|^2 / 2,
    exact in floating point) against ``antipode_exponent_theory``; its sign decides beta > beta_c(d)."""
    theta = math.pi - 2 * math.asin(math.sqrt(gap / 2))  # 1 + cos(theta) = gap
    x0 = mc.two_tokens(math.cos(theta), dim, paths)
    x0[:, 1, 0], x0[:, 1, 1] = -math.cos(math.pi - theta), math.sin(math.pi - theta)

    def measure(step_size: float) -> mc.Estimate:
        steps = round(horizon / step_size)
        step = StochasticTransformer(steps, horizon, noise=ValueNoise(beta)).step
        final = mc.run_steps(step, x0, steps, BulkSource.seeded(seed, (paths,)))
        w = (final[:, 0] + final[:, 1]).pow(2).sum(-1) / 2  # (R,) 1 + u
        w0 = (x0[:, 0] + x0[:, 1]).pow(2).sum(-1) / 2
        return mc.Estimate.of((w.log() - w0.log()) / horizon)

    est, bias = halved(measure, h)
    setting = {
        "beta": beta,
        "dim": dim,
        "beta_c": q.value_noise_beta_c(dim),
        "h": h,
        "horizon": horizon,
        "paths": paths,
    }
    return Check(
        "value_noise",
        setting,
        "antipode_log_gap_rate",
        antipode_exponent_theory(beta, dim),
        est.mean,
        est.se,
        bias,
        {"antipode_attracts": est.mean < 0},
    )
