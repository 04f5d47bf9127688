"""Observables of one saved state against one model layer (issue 42, item 2), interleaved rounds.

    python -m benchmarks.observables --tokens 1024 4096 32768 --dim 3 [--old 2048]

For each N: one layer of ``simulate``'s model (``ModelConfig(tokens=N, dim=d, width=m)``, one step) and the
observables ``simulate`` records per saved state (energy, mean cosine, mean |cosine|, clusters at 0.99), timed
interleaved; with ``--old N`` also the former full-matrix formulas (transitive closure by squaring) at that N, with
``--pairs N`` the row-block pair sums with the S^1 / S^2 forms (``_spheresums``) switched off at that N, with
``--abs N`` mean |cosine| alone by the octree (``_abscos``, S^2) and by the row blocks at that N.
Prints one JSON line per N with the load average and ``torch.backends.cpu.get_cpu_capability()``.
"""

from __future__ import annotations

import argparse
import json
import os

import torch

from benchmarks._timing import interleaved, spread
from sdeformer import _abscos, _spheresums
from sdeformer._pairsums import pair_sum
from sdeformer.config import ModelConfig
from sdeformer.experiments._simulate import _observables


def _old(x: torch.Tensor, beta: float) -> None:
    """The former observables of one state: the (N, N) cosines, triu pairs, closure by boolean squaring."""
    u = x / x.norm(dim=-1, keepdim=True)
    c = u @ u.T
    n = c.shape[-1]
    (-(torch.expm1(beta * (c.clamp(max=1) - 1)))).sum()
    iu = torch.triu_indices(n, n, offset=1)
    pairs = c[iu[0], iu[1]]
    pairs.mean(), pairs.abs().mean()
    reach = c > 0.99
    while True:
        nxt = (reach.float() @ reach.float()) > 0
        if torch.equal(nxt, reach):
            break
        reach = nxt


def _pairs_only(xs: torch.Tensor, beta: float) -> None:
    """``simulate``'s observables by the row-block pair sums only."""
    keep, _spheresums.SCALABLE_MIN_TOKENS = _spheresums.SCALABLE_MIN_TOKENS, 1 << 62
    try:
        _observables(xs, beta)
    finally:
        _spheresums.SCALABLE_MIN_TOKENS = keep


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tokens", type=int, nargs="+", default=[1024, 4096, 32768])
    p.add_argument("--dim", type=int, default=3)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--old", type=int, nargs="*", default=[])
    p.add_argument("--pairs", type=int, nargs="*", default=[])
    p.add_argument("--abs", type=int, nargs="*", default=[])
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    for n in a.tokens:
        print(json.dumps(_row(n, a)), flush=True)


def _row(n: int, a: argparse.Namespace) -> dict:
    """The interleaved timings at N = ``n``."""
    cfg = ModelConfig(tokens=n, dim=a.dim, width=a.width, layers=1)
    model, x = cfg.build(), cfg.initial_tokens()
    xs = x[None].double()
    contenders = {
        "layer": lambda: model.run(x, seed=1, saveat=1),
        "observables": lambda: _observables(xs, cfg.beta),
    }
    if n in a.old:
        contenders["old_observables"] = lambda: _old(xs[0], cfg.beta)
    if n in a.pairs:
        contenders["pair_observables"] = lambda: _pairs_only(xs, cfg.beta)
    if n in a.abs:
        u = xs[0] / xs[0].norm(dim=-1, keepdim=True)
        contenders["abs_octree"] = lambda: _abscos.abs_cosine_sum(u.numpy())
        contenders["abs_rows"] = lambda: pair_sum(u, torch.abs_, diagonal=False)
    record, _ = interleaved(contenders, torch.device("cpu"), rounds=a.rounds, warmup=True)
    ratios = [o / la for o, la in zip(record["seconds"]["observables"], record["seconds"]["layer"])]
    return {
        "tokens": n,
        "dim": a.dim,
        "width": a.width,
        "median_s": {k: spread(v)["median"] for k, v in record["seconds"].items()},
        "observables_per_layer": sorted(ratios)[len(ratios) // 2],
        "load": record["load_average"],
        "capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads(),
        "env_cap": os.environ.get("ATEN_CPU_CAPABILITY", ""),
    }


if __name__ == "__main__":
    main()
