"""Monte Carlo check of resampled heads (BEYOND section 3): at beta = 0 the mean overlap
m = N^-2 sum_ij <x_i, x_j> follows the logistic law m' = m(1 - m) in tau = sV^2 (d - 1) t, up to O(1/d)."""

from __future__ import annotations

import torch

from ..core.sphere import uniform_sphere
from ..dynamics.discrete import StochasticTransformer
from ..noise.heads import ResampledHeads
from ..noise.sources import BulkSource
from . import montecarlo as mc
from . import quadrature as q
from .checks import Check

LOGISTIC_SLACK = 4.0  # allowed |m - logistic| is 3 s.e. + LOGISTIC_SLACK / d (the law holds up to O(1/d))


def mean_overlap(x: torch.Tensor) -> torch.Tensor:
    """m = N^-2 sum_ij <x_i, x_j> = |mean token|^2, ``(..., N, d) -> (...)``."""
    return x.mean(-2).pow(2).sum(-1)


def logistic_law(
    dim: int,
    taus=(1.0, 2.0, 6.0),
    *,
    tokens: int = 8,
    eta: float = 0.05,
    heads: int = 1,
    paths: int = 64,
    beta: float = 0.0,
    seed: int = 0,
) -> list[Check]:
    """m(tau) of the layer x <- LN(x + (eta/H) sum_h B_h) (dt = eta^2 / H) from uniform tokens, against
    logistic(tau, m(0)) with m(0) the sample mean; one Check per tau."""
    dt = eta * eta / heads
    tau_per_step = dt * (dim - 1) / dim  # sV^2 (d - 1) dt with sV^2 = 1/d
    marks = {round(t / tau_per_step): t for t in taus}
    steps = max(marks)
    x0 = uniform_sphere(tokens, dim, batch=(paths,), seed=seed, dtype=torch.float64)
    m0 = float(mean_overlap(x0).mean())
    seen: dict[float, mc.Estimate] = {}

    def observe(k: int, y: torch.Tensor) -> None:
        if k in marks:
            seen[marks[k]] = mc.Estimate.of(mean_overlap(y))

    model = StochasticTransformer(steps, steps * dt, noise=ResampledHeads(heads, beta))
    mc.run_steps(model.step, x0, steps, BulkSource.seeded(seed + 1, (paths,)), observe)
    setting = {"dim": dim, "tokens": tokens, "eta": eta, "heads": heads, "beta": beta, "paths": paths}
    return [
        Check(
            "resampled_heads",
            {**setting, "tau": tau},
            "mean_overlap",
            float(q.logistic(tau, m0)),
            seen[tau].mean,
            seen[tau].se,
            allowance=LOGISTIC_SLACK / dim,
        )
        for tau in taus
    ]
