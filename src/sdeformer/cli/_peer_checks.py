"""The command ``peer``'s checks before anything runs (docs/peers.md, "Sizes and refusals"): each names the CLI
option, in one line, exit 2.

- ``--beta`` (each value): finite; > 0 except for simuformer (its grid may hold any beta); at most ``BETA_MAX``,
  where the peer's rates or weights take e^beta (litm, bruno, glpr: float64's range; dotm: its staircase's
  largest beta is 4000, and its softmax at 1e9 runs at NaN speed);
- the phase diagrams (simuformer, glpr): ``--dim`` >= 2 (tokens on the sphere S^{d-1}), ``--tokens`` >= 2 (a pair),
  glpr's ``--betamin`` > 0 (its step takes sqrt(beta)), and at most ``MAX_STEPS`` steps per run (``--maxtime`` /
  the step: glpr's exp / N step shrinks by sqrt(beta) e^{beta - 1/2});
- ``sizes``: the run's size in one line (runs, steps per run, memory), printed before it starts.
"""

from __future__ import annotations

import math
from typing import Any

from ..core._errors import ConfigError

BETA_MAX = {"litm": 700.0, "bruno": 700.0, "glpr": 700.0, "dotm": 1e4, "simuformer": 700.0}
MAX_STEPS = 10**7  # steps of one run of a phase diagram (the peers' defaults: 300 to 500)


def check_beta(name: str, beta: list[float] | None) -> None:
    for b in beta or []:
        low_ok = name == "simuformer" or b > 0
        if not (math.isfinite(b) and low_ok and abs(b) <= BETA_MAX[name]):
            low = "any" if name == "simuformer" else "> 0"
            raise ConfigError("--beta", b, f"finite, {low} and at most {BETA_MAX[name]:g} for {name}")


def steps_per_run(name: str, s: dict[str, Any], beta: list[float] | None) -> float:
    """The most steps one run takes: maxtime over the smallest step of the grid (or of ``beta``)."""
    largest = max(beta) if beta else s["betamax"]
    if name == "glpr":
        from ..peers._glpr import eta

        return s["maxtime"] / eta(largest, s)
    return s["maxtime"] / s["step"]


def check_phase(name: str, s: dict[str, Any], beta: list[float] | None) -> float:
    """ConfigError naming the option for a phase-diagram size it cannot run; the steps per run."""
    if s["dim"] < 2:
        raise ConfigError("--dim", s["dim"], "at least 2 (tokens on the sphere S^{d-1})")
    if s["tokens"] < 2:
        raise ConfigError("--tokens", s["tokens"], "at least 2 (its statistic counts pairs)")
    if name == "glpr" and not s["betamin"] > 0:
        raise ConfigError("--betamin", s["betamin"], "> 0 for glpr (its step takes sqrt(beta))")
    steps = steps_per_run(name, s, beta)
    if not steps <= MAX_STEPS:
        raise ConfigError(
            "--maxtime", s["maxtime"], f"at most {MAX_STEPS:.0e} steps a run ({steps:.3g} at --step {s['step']:g})"
        )
    return steps


def sizes(name: str, s: dict[str, Any], beta: list[float] | None, steps: float, memory: float) -> str:
    """One line: the runs, the steps of each and the memory estimate."""
    betas = len(beta) if beta else s["betas"]
    return (
        f"peer {name}: {betas} beta x {s['batch']} runs of {s['tokens']} tokens in d = {s['dim']}, up to "
        f"{math.ceil(steps)} steps each, about {memory / 2**20:.3g} MiB"
    )
