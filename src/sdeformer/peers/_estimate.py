"""The up-front time estimate of every ``sdeformer peer`` preset (docs/peers.md, "Sizes and refusals"; issue 41
item 8), from its ``Plan`` (``peers._progress``): the steps of each run and its own loop for a few steps.

- ``plan(name, beta, options)``: the preset's plan (each preset module's ``plan``; the phase diagrams' here: one
  run per beta of the grid, ``maxtime`` over its own step).
- ``estimate(plan)``: seconds, from calibrated runs: the preset's own loop (``plan.trial``) for 2 and for 10 steps
  of the run's shapes (``CALIBRATION``; the longer one 4x longer until it takes ``CALIBRATION_S`` more than the
  shorter and at least twice as long, but never past a quarter of the run's steps, nor once the calibration took
  longer than ``CALIBRATION_S`` and the run it estimates): their difference is the cost of a step (a run's fixed
  start cancels), the shorter one's rest the fixed start; statistics timed apart (a short run of a phase diagram
  computes one at every step, the full one at its checkpoints only). The estimate is every run's start, steps and
  statistics at those costs; the progress lines correct it with the rate measured as the run goes.
- ``run_reported(name, beta, options, emit, plan)``: the estimate line, then the run with its progress lines
  (the command ``peer``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from . import _progress
from ._progress import EVERY_S, Plan, quiet, reporting, seconds_text

CALIBRATION = (2, 10)  # steps of the two calibrated runs (their difference: the cost of a step)
CALIBRATION_S = 0.3  # seconds the longer calibrated run must exceed the shorter by (else 4x its steps, again)
PHASE = ("simuformer", "glpr")  # the phase diagrams: their plan is made here


def plan(name: str, beta: list[float] | None, options: dict) -> Plan:
    """The plan of ``peer NAME --beta ... OPTIONS`` (``options``: the given ones, as ``peers.run`` takes them)."""
    from . import module, run

    if name not in PHASE:
        return module(name).plan(beta=beta, **options)
    s = module(name).settings(**options)
    betas = _progress.betas_of(name, s, beta)
    top = max(betas)

    def trial(steps: int) -> None:  # the largest beta (the smallest step), one beta, ``steps`` steps
        run(name, beta=[top], **{**options, "maxtime": steps * _progress._step_of(name, top, s), "betas": 1})

    runs = tuple(_progress.phase_steps(name, s, betas))
    return Plan(runs, trial, statistics=s.get("checkpoints", 200))


def estimate(p: Plan) -> float:
    """Seconds of the plan's runs (module docstring)."""
    short = CALIBRATION[0]
    long = min(CALIBRATION[1], max(short + 1, max(p.runs)))
    cap = max(long, sum(p.runs) // 4)  # the calibration's longest run: at most a quarter of the steps
    began = time.perf_counter()
    t1 = min(_calibrate(p, short)[0] for _ in range(2))
    t2, per_stat = _calibrate(p, long)
    total = _total(p, short, long, t1, t2, per_stat)
    while t2 - t1 < max(CALIBRATION_S, t1) and long < cap and max(total, CALIBRATION_S) > time.perf_counter() - began:
        long = min(4 * long, cap)  # noise: longer, while the run is longer than the calibration so far
        t2, per_stat = _calibrate(p, long)
        total = _total(p, short, long, t1, t2, per_stat)
    return total


def _total(p: Plan, short: int, long: int, t1: float, t2: float, per_stat: float) -> float:
    """Seconds of the plan's runs from calibrated runs of ``short`` and ``long`` steps taking ``t1`` and ``t2``."""
    per_step = max(t2 - t1, 0.0) / (long - short)  # the fixed cost of a run cancels
    fixed = max(t1 - short * per_step, 0.0)  # a run's start: its draws, its first calls
    return sum(fixed + n * per_step + min(n, p.statistics) * per_stat for n in p.runs)


def _calibrate(p: Plan, steps: int) -> tuple[float, float]:
    """(seconds of ``steps`` steps with the run's start, seconds per statistic) of the plan's trial, on one torch
    thread and without progress lines (as ``peers.run`` runs)."""
    from ..core._threads import torch_threads

    previous, _progress._calibrating[0] = _progress._calibrating[0], [0, 0.0]
    try:
        with quiet(), torch_threads(1):
            began = time.perf_counter()
            p.trial(steps)
            spent = time.perf_counter() - began
        stats, stat_seconds = _progress._calibrating[0]
    finally:
        _progress._calibrating[0] = previous
    return spent - stat_seconds, stat_seconds / max(stats, 1)


def estimate_line(name: str, p: Plan) -> str:
    """One line: the estimated time of the plan's runs and their steps."""
    total = sum(p.runs)
    size = f"{total:,} {p.unit}" if p.exact else f"at most {total:,} {p.unit}"
    return (
        f"peer {name}: about {seconds_text(estimate(p))} for {size} (from two short calibrated runs; progress "
        f"every {EVERY_S:g} s)"
    )


def run_reported(
    name: str, beta: list[float] | None, options: dict, emit: Callable[[str], None], p: Plan | None = None
) -> dict:
    """``peers.run(name, beta=beta, **options)`` with the estimate line first (``estimate_line``) and progress
    lines through ``emit`` (the command ``peer``: stderr); ``p``: the plan, if made already."""
    from . import run

    p = p or plan(name, beta, options)
    emit(estimate_line(name, p))
    with reporting(name, sum(p.runs) if p.exact else None, emit):
        return run(name, beta=beta, **options)
