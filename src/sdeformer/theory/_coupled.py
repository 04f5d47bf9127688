"""Coupled runs at step sizes h and h/2 on the same Brownian path: the step bias of a theory check
(THEORY section 5: couple what you compare).

A fine step (h/2) draws its standard normals from the run's source; ``coupled`` records the draws of two
consecutive fine steps and feeds the coarse step (h) their sums divided by sqrt(2), call by call. Each coarse
draw is again exactly standard normal, so the coarse chain has its exact law, and for every field linear in
its normals (the Gaussian fields, value noise, the quadratic form, resampled heads at beta = 0, partial
sharing of these) the coarse increment is the sum of the two fine ones: the two chains follow one Brownian
path, and the difference of a statistic between them, path by path, estimates the step bias
m_h - m_{h/2} with a standard error far below that of independent runs (for a field nonlinear in its
normals, the width-m MLP, the coupling is looser and the standard error says so). A field must draw the same
shapes in the same order on every step (true of every field of the package).

Paths that a statistic no longer needs (``Statistic.needed``: an exit already seen) are dropped from the
batch every ``DROP_EVERY`` steps, which needs a 1-d batch and a source with ``resized`` (``Normals``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..contracts import RandomSource
from ..core._sphere import project
from ._montecarlo import Estimate, Model, Normals, Statistic, estimates

SQRT_HALF = math.sqrt(0.5)
DROP_EVERY = 50  # steps between looks for paths to drop
DROP_BELOW = 0.75  # drop when at most this fraction of the carried paths is still needed


class Recorder:
    """A source that keeps every draw it passes on."""

    def __init__(self, source: RandomSource):
        self.source, self.batch, self.draws = source, source.batch, []

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        z = self.source.randn(shape, dtype)
        self.draws.append(z)
        return z


class Summed:
    """A source that returns (a_k + b_k) / sqrt(2) for its k-th call, from two recorded fine steps."""

    def __init__(self, first: list[torch.Tensor], second: list[torch.Tensor], batch: tuple[int, ...]):
        if len(first) != len(second):
            raise RuntimeError("the two fine steps drew a different number of normals: cannot couple them")
        self.pairs, self.batch = iter(zip(first, second)), batch

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        a, b = next(self.pairs)
        return (a + b).to(dtype) * SQRT_HALF


@dataclass(frozen=True)
class Paired:
    """One statistic's per-quantity estimates at h/2 (``fine``) and of m_h - m_{h/2} (``bias``, coupled)."""

    fine: list[Estimate]
    bias: list[Estimate]
    fine_stat: Statistic
    coarse_stat: Statistic


def _steps(horizon: float, h: float) -> int:
    """Steps of size h that reach ``horizon`` (up to rounding)."""
    return max(1, math.ceil(horizon / h - 1e-9))


def _drop(stats: tuple[Statistic, ...], states: list[torch.Tensor], source: RandomSource) -> RandomSource | None:
    """Drop the paths no statistic needs from ``states`` (in place) and the statistics; the resized source,
    or None when every path is still needed (or nothing is worth dropping)."""
    masks = [s.needed() for s in stats]
    if any(m is None for m in masks) or not isinstance(source, Normals):
        return None
    need = torch.stack([m for m in masks if m is not None]).any(0)  # (R',)
    if int(need.sum()) > DROP_BELOW * need.numel():
        return None
    for s in stats:
        s.keep(need)
    for i, x in enumerate(states):
        states[i] = x[need]
    return source.resized((int(need.sum()),))


def coupled(
    model: Model, x0: torch.Tensor, h: float, horizon: float, source: RandomSource, statistic: Callable[[], Statistic]
) -> Paired:
    """Run ``model`` at h/2 and at h from LN(x0) to ``horizon`` on one Brownian path (``source``), telling two
    fresh ``statistic()`` objects every state; stops early once neither needs any path."""
    fine, coarse = model(h / 2), model(h)
    sf, sc = statistic(), statistic()
    states = [project(x0), project(x0)]  # fine, coarse
    for k in range(1, _steps(horizon, h) + 1):
        tape = Recorder(source)
        states[0] = fine(states[0], tape)
        sf.observe((2 * k - 1) * h / 2, states[0])
        half = len(tape.draws)
        states[0] = fine(states[0], tape)
        sf.observe(k * h, states[0])
        states[1] = coarse(states[1], Summed(tape.draws[:half], tape.draws[half:], source.batch))
        sc.observe(k * h, states[1])
        if k % DROP_EVERY == 0 and (resized := _drop((sf, sc), states, source)) is not None:
            source = resized
            if states[0].shape[0] == 0:
                break
    vf, vc = sf.values(), sc.values()  # (K, R) each
    return Paired(estimates(vf), estimates(vc - vf), sf, sc)


def single(
    model: Model, x0: torch.Tensor, h: float, horizon: float, source: RandomSource, statistic: Callable[[], Statistic]
) -> tuple[list[Estimate], Statistic]:
    """``model`` at step ``h`` alone (the measurement of a power record: the fine step of a check)."""
    step, stat = model(h), statistic()
    states = [project(x0)]
    for k in range(1, _steps(horizon, h) + 1):
        states[0] = step(states[0], source)
        stat.observe(k * h, states[0])
        if k % DROP_EVERY == 0 and (resized := _drop((stat,), states, source)) is not None:
            source = resized
            if states[0].shape[0] == 0:
                break
    return estimates(stat.values()), stat
