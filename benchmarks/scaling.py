"""Cost per layer against N: the peers' steps, and the log-log figure of docs/scaling.md (issue 42, item 4).

    python -m benchmarks.scaling peers --tokens 1000 3000 10000 > peers.jsonl
    python -m benchmarks.scaling plot benchmarks/results/scaling.json docs/scaling-per-layer.png

``peers``: the step of GLPR's and simuformer's presets (``sdeformer peer glpr|simuformer``: the peers' models as
``sdeformer.peers`` runs them, not their own scripts) on S^1 (d = 2, one run, beta = 1, softmax, one head), as
the wall time of a run to T = 3 less that of a run to T = 1, over the 20 extra steps of 0.1 (each run records the
same number of checkpoints, so their statistics cancel). One JSON line per (peer, N) with the load and
``torch.backends.cpu.get_cpu_capability()``.

``plot``: seconds per layer against N on log-log axes from a results JSON (``{"rows": [{"label", "dim", "tokens",
"seconds_per_layer", "load", "capability"}, ...]}``; rows of ``benchmarks.layers`` and ``peers`` with a label), one
line per (label, d); the caption lists the loads.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

from sdeformer.peers import _glpr as glpr, _simuformer as simuformer

STEP, SHORT, LONG = 0.1, 1.0, 3.0


def _timed(run) -> float:
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def _peer_runs(n: int) -> dict:
    """Runs to ``maxtime`` of each preset at N = ``n``, d = 2, one run, beta = 1."""
    common = {"tokens": n, "dim": 2, "batch": 1, "betas": 1, "betamin": 1.0, "step": STEP}
    return {
        "glpr": lambda t: glpr.run(betamax=1.0, maxtime=t, use_softmax=True, **common),
        "simuformer": lambda t: simuformer.run(heads=1, betamax=1.0, maxtime=t, checkpoints=11, **common),
    }


def peers(tokens: list[int]) -> None:
    for n in tokens:
        for name, run in _peer_runs(n).items():
            load = os.getloadavg()[0]
            extra = _timed(lambda: run(LONG)) - _timed(lambda: run(SHORT))
            row = {"label": f"{name} preset", "dim": 2, "tokens": n, "seconds_per_layer": extra * STEP / (LONG - SHORT)}
            row |= {"load": load, "capability": torch.backends.cpu.get_cpu_capability()}
            print(json.dumps(row), flush=True)


def plot(results: Path, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = json.loads(results.read_text())["rows"]
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    lines = sorted({(r["label"], r["dim"]) for r in rows})
    for label, dim in lines:
        pts = sorted((r["tokens"], r["seconds_per_layer"]) for r in rows if (r["label"], r["dim"]) == (label, dim))
        ax.loglog(*zip(*pts), marker="o", label=f"{label}, d = {dim}")
    ax.set_xlabel("tokens N")
    ax.set_ylabel("seconds per layer (one thread)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    loads = [r["load"] for r in rows]
    caps = sorted({r["capability"] for r in rows})
    ax.set_title(f"Cost per layer against N (load {min(loads):.1f}-{max(loads):.1f}, {', '.join(caps)})", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="part", required=True)
    q = sub.add_parser("peers")
    q.add_argument("--tokens", type=int, nargs="+", default=[1000, 3000, 10000])
    q.add_argument("--threads", type=int, default=1)
    r = sub.add_parser("plot")
    r.add_argument("results", type=Path)
    r.add_argument("out", type=Path)
    a = p.parse_args()
    if a.part == "peers":
        torch.set_num_threads(a.threads)
        peers(a.tokens)
    else:
        plot(a.results, a.out)


if __name__ == "__main__":
    main()
