"""Monte Carlo of many small runs, for the theory checks of BEYOND sections 1-4: the mean and standard error
over independent paths, and the statistics the checks measure along a path.

``step(x, source)`` is one layer of the discrete model (``StochasticTransformer.step``) or one step of an SDE
solver (``Solver.step``), ``(*batch, N, d) -> (*batch, N, d)`` with independent paths in the batch (``Normals``
feeds them; ``noise._sources.Antithetic`` around it pairs them, batch ``(2, R)``). A ``Model`` maps a step size
to such a step, so that one check runs at h and h/2 (``coupled``). A ``Statistic`` is told every state of a run
(``observe(t, x)``, t the time after the step) and returns per-path values ``(K, R)`` (K quantities):
``TimeAverage`` (a stationary mean after a burn-in), ``AtTimes`` (values at given times), ``Exit`` (which end of
an interval the pair overlap leaves by first: the absorption criterion of the P(antipodal) checks).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch

from ..contracts import RandomSource
from ..core._sphere import project

Step = Callable[[torch.Tensor, RandomSource], torch.Tensor]
Model = Callable[[float], Step]  # step size -> one step of the chain (or SDE solver) at that size
TIME_EPS = 1e-9  # times compare up to this (t = k h in floating point)


class Statistic(Protocol):
    """What a check measures along a run: told every state, returns per-path values ``(K, R)``. A statistic
    whose paths get decided early (``Exit``) says which are still ``needed`` (None: all, always), and is told
    to ``keep`` only those, so that the run drops the rest."""

    def observe(self, t: float, x: torch.Tensor, /) -> None: ...

    def needed(self) -> torch.Tensor | None: ...

    def keep(self, mask: torch.Tensor, /) -> None: ...

    def values(self) -> torch.Tensor: ...


class Normals:
    """Standard normals ``(*batch, *shape)`` from one seeded generator, drawn in float32 and cast to the asked
    dtype (torch draws float64 normals several times slower; float32 resolution is far below any Monte Carlo
    error here). ``resized(batch)``: the same generator for a smaller batch (paths dropped by ``keep``)."""

    def __init__(self, seed: int | torch.Generator, batch: tuple[int, ...]):
        self.generator = seed if isinstance(seed, torch.Generator) else torch.Generator().manual_seed(int(seed))
        self.batch = tuple(batch)

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.randn(self.batch + tuple(shape), generator=self.generator).to(dtype)

    def resized(self, batch: tuple[int, ...]) -> Normals:
        return Normals(self.generator, batch)


class _AllNeeded:
    """Statistics that need every path to the end."""

    def needed(self) -> torch.Tensor | None:
        return None

    def keep(self, mask: torch.Tensor) -> None:
        raise RuntimeError(f"{type(self).__name__} needs every path")


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo mean and its standard error over independent paths."""

    mean: float
    se: float

    @classmethod
    def of(cls, values: torch.Tensor) -> Estimate:
        """From per-path values ``(R,)`` (R >= 2), or antithetic pairs ``(2, R)`` (averaged per pair first)."""
        v = values.double()
        v = v.mean(0) if v.dim() == 2 else v.flatten()  # (R,)
        return cls(float(v.mean()), float(v.std() / math.sqrt(v.numel())))


def estimates(values: torch.Tensor) -> list[Estimate]:
    """One Estimate per quantity of a statistic's values ``(K, *batch)``."""
    return [Estimate.of(v) for v in values]


def pair_overlap(x: torch.Tensor) -> torch.Tensor:
    """u = <x_0, x_1> of the first two tokens, ``(..., N, d) -> (...)``."""
    return (x[..., 0, :] * x[..., 1, :]).sum(-1)


def two_tokens(u0: float | torch.Tensor, dim: int, paths: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """R copies of two unit tokens with overlap u0 (a number, or one per path ``(R,)``): e_1 and
    u0 e_1 + sqrt(1 - u0^2) e_2, ``(R, 2, d)``."""
    u = torch.as_tensor(u0, dtype=dtype).expand(paths)  # (R,)
    x = torch.zeros(paths, 2, dim, dtype=dtype)
    x[:, 0, 0] = 1.0
    x[:, 1, 0], x[:, 1, 1] = u, (1.0 - u * u).clamp(min=0.0).sqrt()
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


class TimeAverage(_AllNeeded):
    """Per-path time average of ``f(x)`` ``(R,)`` over the states at times > ``start``."""

    def __init__(self, f: Callable[[torch.Tensor], torch.Tensor], start: float):
        self.f, self.start, self.total, self.count = f, start, None, 0

    def observe(self, t: float, x: torch.Tensor) -> None:
        if t > self.start + TIME_EPS:
            v = self.f(x).double()
            self.total = v if self.total is None else self.total + v
            self.count += 1

    def values(self) -> torch.Tensor:
        assert self.total is not None, "no state after the burn-in"
        return (self.total / self.count).unsqueeze(0)  # (1, *batch)


class AtTimes(_AllNeeded):
    """``f(x)`` ``(R,)`` at given times (the state of the first step at or after each), ``(K, R)``."""

    def __init__(self, f: Callable[[torch.Tensor], torch.Tensor], times: tuple[float, ...]):
        self.f, self.times, self.seen = f, tuple(times), {}

    def observe(self, t: float, x: torch.Tensor) -> None:
        for s in self.times:
            if s not in self.seen and t >= s - TIME_EPS:
                self.seen[s] = self.f(x).double()

    def values(self) -> torch.Tensor:
        return torch.stack([self.seen[s] for s in self.times])  # (K, *batch)


class Exit:
    """Which end of (``lo``, ``hi``) the pair overlap u leaves by first (an absorption criterion). Values: 1 for
    an exit through ``lo``, 0 through ``hi``, 1/2 for a path still inside at the end (``unabsorbed`` counts
    them). A path is ``needed`` until it has left."""

    def __init__(self, lo: float, hi: float):
        self.lo, self.hi = lo, hi
        self.side: torch.Tensor | None = None  # (R,): -1 inside, 1 left through lo, 0 through hi
        self.rows: torch.Tensor | None = None  # (R',): the paths the run still carries

    def observe(self, t: float, x: torch.Tensor) -> None:
        u = pair_overlap(x)  # (R',)
        if self.side is None:
            self.side, self.rows = torch.full(u.shape, -1.0, dtype=torch.float64), torch.arange(u.shape[0])
        assert self.rows is not None
        side = self.side[self.rows]
        side = torch.where((side < 0) & (u <= self.lo), 1.0, torch.where((side < 0) & (u >= self.hi), 0.0, side))
        self.side[self.rows] = side

    def needed(self) -> torch.Tensor | None:
        return None if self.side is None or self.rows is None else self.side[self.rows] < 0

    def keep(self, mask: torch.Tensor) -> None:
        assert self.rows is not None
        self.rows = self.rows[mask]

    def unabsorbed(self) -> float:
        """The fraction of paths still inside (lo, hi)."""
        assert self.side is not None
        return float((self.side < 0).double().mean())

    def values(self) -> torch.Tensor:
        assert self.side is not None
        return torch.where(self.side < 0, 0.5, self.side).unsqueeze(0)  # (1, R)
