"""The command ``peer``: a peer's published experiment, its conventions built in (docs/peers.md); its settings are
the peers' declared options (``peers._options``), and it checks them before anything runs ("Sizes and refusals"):
each names the CLI option, in one line, exit 2.

- ``--beta`` (each value): finite; > 0 except for simuformer (its grid may hold any beta); at most ``BETA_MAX``,
  where the peer's rates or weights take e^beta (litm, bruno, glpr: float64's range; dotm: its staircase's
  largest beta is 4000, and its softmax at 1e9 runs at NaN speed);
- the phase diagrams (simuformer, glpr): ``--dim`` >= 2 (tokens on the sphere S^{d-1}), ``--tokens`` >= 2 (a pair),
  glpr's ``--betamin`` > 0 (its step takes sqrt(beta)), and at most ``MAX_STEPS`` steps per run (``--maxtime`` /
  the step: glpr's exp / N step shrinks by sqrt(beta) e^{beta - 1/2});
- ``size_line``: the run's size in one line (runs, steps per run, memory), printed before it starts; every
  other preset's from its plan (``peers._estimate.plan``: runs, steps, memory, refused past ``--max-memory``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ...core._errors import ConfigError
from ...params import Param
from ...peers._options import OPTIONS, PEER_OPTIONS

SETTINGS = (
    Param("name", str, ..., doc="litm, dotm, bruno, simuformer or glpr"),
    Param("beta", list[float], None, doc="beta (repeat for several) [the peer's own]"),
    Param("out", Path, None, doc="write the peer's table layout into this folder"),
    Param("compare", Path, None, doc="the file the peer's script wrote: cells equal / total"),
    *OPTIONS,
)

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
        from ...peers._glpr import eta

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


def size_line(name: str, s: dict[str, Any], beta: list[float] | None, steps: float, memory: float) -> str:
    """One line: the runs, the steps of each and the memory estimate."""
    betas = len(beta) if beta else s["betas"]
    return (
        f"peer {name}: {betas} beta x {s['batch']} runs of {s['tokens']} tokens in d = {s['dim']}, up to "
        f"{math.ceil(steps)} steps each, about {memory / 2**20:.3g} MiB"
    )


def peer(s: dict[str, Any]) -> dict:
    """Run a peer's experiment at its default settings (and the options given); with --compare, count the cells
    equal to the peer's file."""
    from ... import peers
    from .bounds import bound, peer_bytes

    name, beta = s["name"], s["beta"]
    given = {p.name: s[p.name] for p in OPTIONS if s[p.name] is not None and s[p.name] is not False}  # --no-X: unset
    allowed = PEER_OPTIONS.get(name)
    if allowed is None:
        raise ConfigError("peer", name, f"one of {list(PEER_OPTIONS)}")
    for key in given:
        if key not in allowed:
            raise ConfigError(key, given[key], f"not an option of {name}")
    seed = given.get("seed")
    if seed is not None and not 0 <= seed < 2**64:  # torch's generator seeds
        raise ConfigError("seed", seed, "an integer in [0, 2^64)")
    check_beta(name, beta)
    if s["compare"] is not None:  # a FIFO or a device: refused before the run, never opened
        from ...peers._files import check_regular

        check_regular(s["compare"])
    from rich.console import Console

    err = Console(stderr=True)
    if name in ("simuformer", "glpr"):  # the two whose options size their arrays: bounded before any draw
        sizes = {k: v for k, v in given.items() if k not in ("seed", "as_published")}
        r = {**peers.module(name).settings(**sizes), **({"betas": len(beta)} if beta else {})}
        steps = check_phase(name, r, beta)
        shape = tuple(r.get(k, 1) for k in ("batch", "tokens", "dim", "heads"))
        memory = bound("batch/tokens/dim/heads", shape, peer_bytes(name, r))
        err.print(size_line(name, r, beta, steps, memory), highlight=False, soft_wrap=True)
    from ...peers._estimate import plan, run_reported  # the estimate, then progress lines, on stderr

    p = plan(name, beta or None, given)  # every preset's size, refused past its bounds before any calibration
    if name not in ("simuformer", "glpr"):
        memory = bound(*p.sized_by, p.memory)
        size = f"{len(p.runs)} run{'s' * (len(p.runs) > 1)} of {'up to ' * (not p.exact)}{max(p.runs):,} {p.unit}"
        err.print(f"peer {name}: {size}, about {memory / 2**20:.3g} MiB", highlight=False, soft_wrap=True)
    result = run_reported(name, beta or None, given, lambda line: err.print(line, highlight=False, soft_wrap=True), p)
    if s["out"] is not None:
        result["files"] = [str(p) for p in peers.write(name, result, s["out"])]
    if s["compare"] is not None:
        result["compare"] = peers.compare(name, result, s["compare"])
    return peers.printable(result)


def show(result: dict, s: dict[str, Any]) -> None:
    from rich.console import Console

    console, name = Console(), s["name"]
    for key in ("t_crit", "runs"):
        for row in result.get(key, []):
            console.print({k: v for k, v in row.items() if k not in ("plateau_tau",)})
    if "density" in result:
        for b, row in zip(result["betas"], result["density"], strict=True):
            console.print(f"beta {b:.4g}: " + " ".join(f"{v:.3f}" for v in row))
    if "angles" in result:  # litm's particles: the angles at its snapshot times (--out writes them, --json prints)
        first, last = result["angles"][0], result["angles"][-1]
        console.print(
            f"angles of {len(first)} tokens at {len(result['angles'])} times t = 0 .. {result['times'][-1]:g}"
        )
        console.print(f"t = 0: {min(first):.4f} .. {max(first):.4f}; t = {result['times'][-1]:g}: {min(last):.4f} .. "
                      f"{max(last):.4f} (--json for all, --out for angles.npy)", highlight=False)  # fmt: skip
    if "z" in result:  # dotm's kinetic trajectory
        shape = (len(result["z"]), len(result["z"][0]), len(result["z"][0][0]))
        console.print(f"trajectory z {shape}; clusters at the end: {result['final_clusters']}")
    if "compare" in result:
        c = result["compare"]
        console.print(f"cells equal: {c['equal']} / {c['total']}, largest difference {c['max_diff']:.3g}")
        if name in ("simuformer", "glpr") and c["equal"] < c["total"]:  # the peer's script never seeds torch
            console.print(
                f"hint: {name}'s script never seeds torch, so its file matches only a run seeded as this one "
                "(--seed; `python tools/run_peer.py` seeds it; docs/peers.md)", highlight=False,
            )  # fmt: skip
