"""Monte Carlo of many small runs, for the theory checks of BEYOND.md: time averages of the overlap of two
tokens after a burn-in, final overlaps, and the mean with its standard error across independent paths.

``step(x, source)`` is one layer of the discrete model (``StochasticTransformer.step``) or one step of an SDE
solver (``Solver.step``), ``(R, ..., N, d) -> (R, ..., N, d)`` with R independent paths (a ``BulkSource``
feeds them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..contracts import RandomSource
from ..core.sphere import project

Step = Callable[[torch.Tensor, RandomSource], torch.Tensor]


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo mean and its standard error over independent paths."""

    mean: float
    se: float

    @classmethod
    def of(cls, values: torch.Tensor) -> Estimate:
        """From per-path values ``(R,)`` (R >= 2)."""
        v = values.double().flatten()
        return cls(float(v.mean()), float(v.std() / math.sqrt(v.numel())))


def pair_overlap(x: torch.Tensor) -> torch.Tensor:
    """u = <x_0, x_1> of the first two tokens, ``(..., N, d) -> (...)``."""
    return (x[..., 0, :] * x[..., 1, :]).sum(-1)


def two_tokens(u0: float, dim: int, paths: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """R copies of two unit tokens with overlap u0: e_1 and u0 e_1 + sqrt(1 - u0^2) e_2, ``(R, 2, d)``."""
    x = torch.zeros(paths, 2, dim, dtype=dtype)
    x[:, 0, 0] = 1.0
    x[:, 1, 0], x[:, 1, 1] = u0, math.sqrt(max(0.0, 1.0 - u0 * u0))
    return x


def run_steps(
    step: Step,
    x: torch.Tensor,
    steps: int,
    source: RandomSource,
    observe: Callable[[int, torch.Tensor], None] | None = None,
) -> torch.Tensor:
    """``steps`` steps from LN(x); ``observe(k, x)`` after step k. Returns the final state."""
    x = project(x)
    for k in range(1, steps + 1):
        x = step(x, source)
        if observe is not None:
            observe(k, x)
    return x


def stationary_average(
    step: Step,
    x: torch.Tensor,
    steps: int,
    burn: int,
    source: RandomSource,
    f: Callable[[torch.Tensor], torch.Tensor] = lambda u: 1.0 - u,
    every: int = 1,
) -> Estimate:
    """Per-path time average of f(u) over steps burn+1 .. steps (every ``every``-th), then mean and s.e.
    across paths (batch means: valid when each path's window is long against the correlation time)."""
    total = torch.zeros(x.shape[0], dtype=torch.float64)
    seen = [0]

    def observe(k: int, y: torch.Tensor) -> None:
        if k > burn and k % every == 0:
            total.add_(f(pair_overlap(y)).double().reshape(x.shape[0], -1).mean(-1))
            seen[0] += 1

    run_steps(step, x, steps, source, observe)
    return Estimate.of(total / max(1, seen[0]))


def antipodal_fraction(step: Step, x: torch.Tensor, steps: int, source: RandomSource) -> Estimate:
    """Fraction of paths whose final pair overlap is negative (the pair went antipodal), with its s.e."""
    final = pair_overlap(run_steps(step, x, steps, source))
    return Estimate.of((final < 0).double())
