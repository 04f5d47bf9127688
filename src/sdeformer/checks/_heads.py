"""Monte Carlo check of resampled heads (BEYOND section 3): at beta = 0 the mean overlap
m = N^-2 sum_ij <x_i, x_j>, in tau = sV^2 (d - 1) t, against the logistic law with its first-order correction
in 1/(d - 1) (``quadrature.logistic_first_order``);
power: sV^2 x 0.8, 0.9, 1.1 and 1.2 (the time scale), each with its own tolerance, over the seeds of the
power ``Plan``."""

from __future__ import annotations

import functools
import math

import torch

from ..core._sphere import uniform_sphere
from ..dynamics._discrete import StochasticTransformer
from ..noise._heads import ResampledHeads
from ..theory import _montecarlo as mc, _quadrature as q
from ._power import REPORT, Plan
from ._record import Check, CheckRun, measured


def mean_overlap(x: torch.Tensor) -> torch.Tensor:
    """m = N^-2 sum_ij <x_i, x_j> = |mean token|^2, ``(..., N, d) -> (...)``."""
    return x.mean(-2).pow(2).sum(-1)


def heads_model(heads: int, sv2: float) -> mc.Model:
    """Step size dt = eta^2 / H -> one layer x <- LN(x + (eta/H) sum_h B_h) at beta = 0, V entries N(0, sv2)."""
    return lambda dt: StochasticTransformer(1, dt, noise=ResampledHeads(heads, 0.0, sv=math.sqrt(sv2))).step


def logistic_law(
    dim: int,
    taus=(1.0, 2.0, 6.0),
    *,
    tokens: int = 8,
    eta: float = 0.05,
    heads: int = 1,
    paths: int = 64,
    seed: int = 0,
    power: Plan = REPORT,
) -> list[Check]:
    """E m(tau) of the layer with step ``eta`` (dt = eta^2 / H, h = 2 dt coupled with dt) from uniform tokens,
    against ``logistic_first_order`` from the sample mean and variance of m(0); one Check per tau."""
    dt = eta * eta / heads
    x0 = uniform_sphere(tokens, dim, batch=(paths,), seed=seed, dtype=torch.float64)
    m0 = mean_overlap(x0)  # (R,)
    times = tuple(2 * dt * round(t * dim / (dim - 1) / (2 * dt)) for t in taus)  # t = tau / (sV^2 (d - 1)),
    run = CheckRun(x0, 2 * dt, max(times), lambda: mc.AtTimes(mean_overlap, times), seed + 1)  # on the coarse grid
    reached = [t * (dim - 1) / dim for t in times]  # the taus of those times
    predicted = q.logistic_first_order(reached, float(m0.mean()), float(m0.var()), tokens, dim)
    setting = {"dim": dim, "tokens": tokens, "eta": eta, "heads": heads, "beta": 0.0, "paths": paths}

    def judge(sv2: float, k: int = 0) -> list[Check]:
        paired = run.coupled(heads_model(heads, sv2), k)
        return [
            measured(
                "resampled_heads",
                {**setting, "tau": tau},
                "mean_overlap",
                float(predicted[k]),
                "BEYOND 3: logistic law m' = m(1 - m) with its O(1/d) correction (project derivation)",
                paired.fine[k],
                paired.bias[k],
                extra={"tau_reached": reached[k], "logistic": float(q.logistic(reached[k], float(m0.mean())))},
            )
            for k, tau in enumerate(taus)
        ]

    wrongs = functools.cache(lambda s, k: judge((1 + s) / dim, k))  # one run gives every tau's check
    return [
        check.with_catch(lambda s: f"sV^2 x {1 + s:g} (the time scale)", lambda s, k, i=i: wrongs(s, k)[i], power)
        for i, check in enumerate(judge(1.0 / dim))
    ]
