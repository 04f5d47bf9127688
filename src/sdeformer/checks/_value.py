"""Monte Carlo checks of value-matrix noise (BEYOND section 2): P(antipodal | u0 = 0) of two tokens against the
scale function, and the threshold beta_c(d) through the growth rate of 1 + u at the antipode, whose sign is
part of the verdict. Power of both: beta x 0.8, 0.9, 1.1 and 1.2, each with its own tolerance, over the
seeds of the power ``Plan``."""

from __future__ import annotations

import math

import torch

from ..dynamics._discrete import StochasticTransformer
from ..noise._value import ValueNoise
from ..theory import _montecarlo as mc, _quadrature as q
from ._power import REPORT, Plan
from ._record import Check, CheckRun, measured

DELTA = 0.05  # absorption criterion: a pair is decided when |u| >= 1 - DELTA


def value_model(beta: float) -> mc.Model:
    """Step size -> one layer of the discrete model with value noise at inverse temperature beta."""
    return lambda dt: StochasticTransformer(1, dt, noise=ValueNoise(beta)).step


def antipodal(
    beta: float,
    dim: int,
    *,
    h: float = 0.02,
    horizon: float = 300.0,
    paths: int = 2000,
    seed: int = 0,
    power: Plan = REPORT,
) -> Check:
    """The fraction of pairs from u0 = 0 whose overlap leaves (-1 + DELTA, 1 - DELTA) through the antipodal
    end, against the scale function's exit probability for those ends (exact for the criterion, where the
    final sign of u at a fixed T counts pairs not yet absorbed). Runs until every pair is absorbed or
    ``horizon``; a pair still inside counts 1/2, and half the unabsorbed fraction joins the tolerance."""
    lo, hi = -1.0 + DELTA, 1.0 - DELTA
    run = CheckRun(mc.two_tokens(0.0, dim, paths), h, horizon, lambda: mc.Exit(lo, hi), seed)
    setting = {"beta": beta, "dim": dim, "delta": DELTA, "h": h, "horizon": horizon, "paths": paths}

    def judge(b: float, k: int = 0) -> Check:
        paired = run.coupled(value_model(b), k)
        unabsorbed = max(_unabsorbed(s) for s in (paired.fine_stat, paired.coarse_stat))
        return measured(
            "value_noise",
            setting,
            "p_antipodal",
            q.exit_probability(*q.value_noise_coefficients(beta, dim), 0.0, lo, hi),
            f"BEYOND 2: scale function, exit through -1 + {DELTA:g} before 1 - {DELTA:g}",
            paired.fine[0],
            paired.bias[0],
            allowance=unabsorbed / 2,
            allowance_rule="half the fraction not absorbed by the horizon",
            extra={"unabsorbed": unabsorbed, "p_antipodal_limit": q.value_noise_antipodal(beta, dim)},
        )

    return judge(beta).with_catch(_label, lambda s, k: judge(beta * (1 + s), k), power)


def _label(size: float) -> str:
    return f"beta x {1 + size:g}"


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
    power: Plan = REPORT,
) -> Check:
    """E[log(1 + u_T) - log(1 + u_0)] / T for pairs started at 1 + u_0 = ``gap`` (1 + u = |x_1 + x_2|^2 / 2,
    exact in floating point) against ``antipode_exponent_theory``, over ``paths`` antithetic pairs. A sign
    check and a magnitude check: it holds only within the tolerance, with the predicted sign (beta > beta_c(d) iff
    negative) and a tolerance below |prediction|."""
    theta = math.pi - 2 * math.asin(math.sqrt(gap / 2))  # 1 + cos(theta) = gap
    x0 = mc.two_tokens(math.cos(theta), dim, paths)
    x0[:, 1, 0], x0[:, 1, 1] = -math.cos(math.pi - theta), math.sin(math.pi - theta)
    log_w0 = float(_log_one_plus_u(x0[:1])[0])

    def rate() -> mc.AtTimes:
        return mc.AtTimes(lambda x: (_log_one_plus_u(x) - log_w0) / horizon, (horizon,))

    run = CheckRun(x0, h, horizon, rate, seed, antithetic=True)
    setting = {"beta": beta, "dim": dim, "beta_c": q.value_noise_beta_c(dim), "h": h, "horizon": horizon}
    setting |= {"paths": paths}

    def judge(b: float, k: int = 0) -> Check:
        paired = run.coupled(value_model(b), k)
        return measured(
            "value_noise",
            setting,
            "antipode_log_gap_rate",
            antipode_exponent_theory(beta, dim),
            "BEYOND 2 (project derivation): (2/d)((d - 1) r - 1), r = 1/(2 cosh^2 beta)",
            paired.fine[0],
            paired.bias[0],
            bound="sign",
            extra={"antipode_attracts": paired.fine[0].mean < 0},
        )

    return judge(beta).with_catch(_label, lambda s, k: judge(beta * (1 + s), k), power)


def _unabsorbed(stat: mc.Statistic) -> float:
    assert isinstance(stat, mc.Exit)
    return stat.unabsorbed()


def _log_one_plus_u(x: torch.Tensor) -> torch.Tensor:
    """log(1 + u) = log(|x_1 + x_2|^2 / 2), ``(..., 2, d) -> (...)``."""
    return ((x[..., 0, :] + x[..., 1, :]).pow(2).sum(-1) / 2).log()
