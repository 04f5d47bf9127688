"""Progress and an up-front time estimate of ``sdeformer peer`` (docs/peers.md, "Sizes and refusals").

- ``reporting(name, total, emit)``: while the block runs, ``step`` (the ``progress`` callback the peers' time loops
  pass to ``run``: the phase diagrams' ``run_segments``, litm's, dotm's and bruno's runs, bruno's PDE loop)
  counts steps and, at most every ``EVERY_S`` seconds, emits one line: the share done of ``total`` steps (when
  known up front, or announced by ``expect`` as a preset starts), the time so far and the time left at the rate so
  far. Outside a block ``step`` returns at once.
- ``phase_steps(name, s, betas)``: the steps of each beta's run of a phase diagram, each at its own step
  (``maxtime`` / the peer's step; glpr's shrinks with beta without softmax), as the peers' clocks count them.
- ``run_reported(name, beta, options, emit)``: the peer's run with both (the command ``peer``).
- ``estimate(name, beta, options)``: (total steps, seconds), from calibrated runs: the peer's own ``run`` on the
  grid's largest beta for 2 and for 10 steps of the same shapes (``CALIBRATION``; the longer one 4x longer until
  it takes ``CALIBRATION_S`` more): their difference is the cost of a step (a run's fixed start cancels), the
  statistics timed apart (a short run computes the statistic at every step, a full one at its checkpoints only);
  the estimate is the sweep's runs, steps and statistics at those costs. The progress lines correct it with the
  rate measured as it runs.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

EVERY_S = 2.0  # seconds between two progress lines
CALIBRATION = (2, 10)  # steps of the two calibrated runs (their difference: the cost of a step)
CALIBRATION_S = 0.3  # seconds the longer calibrated run must exceed the shorter by (else 4x its steps, again)
PHASE = ("simuformer", "glpr")  # the peers whose total steps are known up front
_current: list[Any] = [None]  # the reporter of the running block, or None
_calibrating: list[Any] = [None]  # while ``estimate`` calibrates: [statistics computed, their seconds]


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
            f"about {_seconds(left)} left"
        )


def step(_k: int = 0) -> None:
    """One step done (the ``progress`` callback of a peer's run; ``_k``, the step's index, is not needed)."""
    reporter = _current[0]
    if reporter is not None:
        reporter.step()


def expect(steps: int) -> None:
    """``steps`` more steps to come, from a preset that knows its size as it starts (dotm's kinetic run, litm's
    particles, bruno's published PDE): added to the total the lines report."""
    reporter = _current[0]
    if reporter is not None:
        reporter.total = (reporter.total or 0) + int(steps)


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
    """``statistic(state)``, its time counted while ``estimate`` calibrates (``run_segments``' checkpoints)."""
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


def estimate(name: str, beta: list[float] | None, options: dict) -> tuple[int, float]:
    """(total steps, estimated seconds) of ``peer NAME`` with ``options`` (the CLI's given ones): the peer's run on
    the largest beta for ``CALIBRATION`` steps, its steps and its statistics timed apart (``timed``);
    the sweep takes its steps and one statistic at each of at most ``checkpoints`` distinct steps per beta."""
    from . import module

    s = module(name).settings(**options)
    betas = betas_of(name, s, beta)
    per_beta = phase_steps(name, s, betas)
    top = max(betas)
    short, long = CALIBRATION
    t1 = min(_calibrate(name, top, s, options, short)[0] for _ in range(2))
    t2, per_stat = _calibrate(name, top, s, options, long)
    while t2 - t1 < CALIBRATION_S and long < max(per_beta):  # too short to tell a step from the noise: longer
        long = min(4 * long, max(per_beta))
        t2, per_stat = _calibrate(name, top, s, options, long)
    per_step = max(t2 - t1, 0.0) / (long - short)  # the fixed cost of a run cancels
    fixed = max(t1 - short * per_step, 0.0)  # a run's start: its draws, its first calls
    checkpoints = s.get("checkpoints", 200)
    return sum(per_beta), sum(fixed + n * per_step + min(n, checkpoints) * per_stat for n in per_beta)


def _calibrate(name: str, beta: float, s: dict, options: dict, steps: int) -> tuple[float, float]:
    """(seconds of the steps with the run's start, seconds per statistic) of the peer's run at ``beta`` for
    ``steps`` steps."""
    from . import run

    short = {**options, "maxtime": steps * _step_of(name, beta, s), "betas": 1}
    previous, _calibrating[0] = _calibrating[0], [0, 0.0]
    try:
        with quiet():
            began = time.perf_counter()
            run(name, beta=[beta], **short)
            spent = time.perf_counter() - began
        stats, stat_seconds = _calibrating[0]
    finally:
        _calibrating[0] = previous
    return spent - stat_seconds, stat_seconds / max(stats, 1)


def estimate_line(name: str, beta: list[float] | None, options: dict) -> tuple[str, int | None]:
    """One line: the estimated time of the run (phase diagrams; other peers: their fixed preset, no line), and
    the total steps for ``reporting``."""
    if name not in PHASE:
        return "", None
    total, seconds = estimate(name, beta, options)
    line = (
        f"peer {name}: about {_seconds(seconds)} for {total:,} steps (from two short calibrated runs; progress "
        f"every {EVERY_S:g} s)"
    )
    return line, total


def run_reported(name: str, beta: list[float] | None, options: dict, emit: Callable[[str], None]) -> dict:
    """``peers.run(name, beta=beta, **options)`` with the estimate first (``estimate_line``) and progress lines
    through ``emit`` (the command ``peer``: stderr)."""
    from . import run

    line, total = estimate_line(name, beta, options)
    if line:
        emit(line)
    with reporting(name, total, emit):
        return run(name, beta=beta, **options)


def _seconds(s: float) -> str:
    if not math.isfinite(s):
        return "? s"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"
