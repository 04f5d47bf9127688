"""Progress lines of ``sdeformer peer`` and the plan its up-front estimate is made from (docs/peers.md, "Sizes
and refusals"; the estimate itself: ``peers._estimate``).

- ``Plan``: what a preset will run, known before it runs: the steps of each of its runs (as its time loop counts
  them), its own loop for a few steps (``trial``), its memory and the option that sets its size. Each preset
  module's ``plan(**options)`` returns one; the phase diagrams' (simuformer, glpr) is ``peers._estimate``'s.
- ``reporting(name, total, emit)``: while the block runs, ``step`` (the ``progress`` callback the peers' time loops
  pass to ``run``: the phase diagrams' ``run_segments``, litm's, dotm's and bruno's runs, bruno's PDE loops, dotm's
  staircase) counts steps and, at most every ``EVERY_S`` seconds, emits one line: the share done of ``total`` steps
  (None: a count only), the time so far and the time left at the rate so far. Outside a block ``step`` returns at
  once.
- ``phase_steps(name, s, betas)``: the steps of each beta's run of a phase diagram, each at its own step
  (``maxtime`` / the peer's step; glpr's shrinks with beta without softmax), as the peers' clocks count them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

EVERY_S = 2.0  # seconds between two progress lines
_current: list[Any] = [None]  # the reporter of the running block, or None
_calibrating: list[Any] = [None]  # while ``_estimate`` calibrates: [statistics computed, their seconds]


@dataclasses.dataclass(frozen=True)
class Plan:
    """A preset's size before it runs: ``runs``, the steps of each run (``unit``: what a step is); ``trial(n)``,
    its own loop for ``n`` steps at the run's shapes (the calibrated runs); ``memory`` (bytes at its peak) and the
    CLI option that sets it, ``sized_by`` (name, value), refused beyond the limit before any calibration;
    ``exact``: False where ``runs`` are upper bounds (dotm's staircase ends when its tokens merge);
    ``statistics``: the statistics a run computes at most (the phase diagrams' checkpoints, timed apart)."""

    runs: tuple[int, ...]
    trial: Callable[[int], object]
    memory: int = 0
    sized_by: tuple[str, object] = ("part", None)
    exact: bool = True
    statistics: int = 0
    unit: str = "steps"


class _Reporter:
    def __init__(self, name: str, total: int | None, emit: Callable[[str], None]):
        self.name, self.total, self.emit = name, total, emit
        self.done, self.began = 0, time.monotonic()
        self.last = self.began

    def step(self) -> None:
        now = time.monotonic()
        if not self.done:  # the first line EVERY_S after the first step, not after the run's set-up
            self.last = now
        self.done += 1
        if now - self.last >= EVERY_S:
            self.last = now
            self.emit(self.line(now))

    def line(self, now: float) -> str:
        spent = now - self.began
        if not self.total:
            return f"peer {self.name}: {self.done:,} steps, {spent:.0f} s"
        share = min(self.done / self.total, 1.0)
        left = spent * (self.total - self.done) / self.done if self.done else math.inf
        return (
            f"peer {self.name}: {100 * share:.0f} % ({self.done:,} / {self.total:,} steps), {spent:.0f} s, "
            f"about {seconds_text(left)} left"
        )


def step(_k: int = 0) -> None:
    """One step done (the ``progress`` callback of a peer's run; ``_k``, the step's index, is not needed)."""
    reporter = _current[0]
    if reporter is not None:
        reporter.step()


@contextlib.contextmanager
def reporting(name: str, total: int | None, emit: Callable[[str], None]) -> Iterator[None]:
    """Progress lines of the block's steps through ``emit`` (see the module docstring)."""
    previous, _current[0] = _current[0], _Reporter(name, total, emit)
    try:
        yield
    finally:
        _current[0] = previous


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No progress for the block (the calibrated run's steps are not the run's)."""
    previous, _current[0] = _current[0], None
    try:
        yield
    finally:
        _current[0] = previous


def timed(statistic: Callable[[Any], Any], state: Any) -> Any:
    """``statistic(state)``, its time counted while ``_estimate`` calibrates (``run_segments``' checkpoints)."""
    cal = _calibrating[0]
    if cal is None:
        return statistic(state)
    began = time.perf_counter()
    out = statistic(state)
    cal[0], cal[1] = cal[0] + 1, cal[1] + time.perf_counter() - began
    return out


def _step_of(name: str, beta: float, s: dict) -> float:
    """The peer's step at ``beta``."""
    if name == "glpr":
        from ._glpr import eta

        return float(eta(beta, s))
    import torch

    from ._simuformer import eta

    return float(eta(torch.tensor(beta, dtype=torch.float32), s))


def betas_of(name: str, s: dict, beta: list[float] | None) -> list[float]:
    """The betas the run takes: ``beta``, else the peer's grid."""
    if beta:
        return [float(b) for b in beta]
    import numpy as np

    return np.linspace(s["betamin"], s["betamax"], s["betas"]).tolist()


def phase_steps(name: str, s: dict, betas: list[float]) -> list[int]:
    """The steps of each beta's run: ceil(maxtime / its step), at least one (the peers' clocks)."""
    return [max(1, math.ceil(s["maxtime"] / _step_of(name, b, s) - 1e-9)) for b in betas]


def seconds_text(s: float) -> str:
    """``s`` seconds in words: s, min or h."""
    if not math.isfinite(s):
        return "? s"
    if s < 1:
        return "a second or less"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"
