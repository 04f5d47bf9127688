"""Observables of one saved state against one model layer (issue 42, item 2), interleaved rounds.

    python -m benchmarks.observables --tokens 1024 4096 32768 --dim 3 [--old 2048]

For each N: one layer of ``simulate``'s model (``ModelConfig(tokens=N, dim=d, width=m)``, one step) and the
observables ``simulate`` records per saved state (energy, mean cosine, mean |cosine|, clusters at 0.99), timed
interleaved; with ``--old N`` also the former full-matrix formulas (transitive closure by squaring) at that N, with
``--pairs N`` the row-block pair sums with the S^1 / S^2 forms (``_spheresums``) switched off at that N, with
``--abs N`` mean |cosine| alone by the octree (``_abscos``, S^2) and by the row blocks at that N.
Prints one JSON line per N with the load average and ``torch.backends.cpu.get_cpu_capability()``.

    python -m benchmarks.observables --crossover 65536 131072 [--rounds 2] [--sample 64]

The S^2 mean |cosine| switch (``_spheresums.SPHERE_ABS_MIN_TOKENS``): per N and per cloud (``spread``: uniform
tokens, the octree's worst case; ``clustered``: 64 tight clusters), the octree run in full against the row
blocks' throughput. The row blocks do fixed work per cosine whatever the tokens, so ``--sample`` blocks spread
over the rows (every k-th block, ``_pairsums.block_sum`` as ``pair_sum`` runs it) are timed and scaled by the
cosines of all blocks against the sampled ones: a measured throughput, not a full run. CPU time of this process
(``time.process_time``, one thread; the machine is shared) and wall time, rounds interleaved. Run it once per
``ATEN_CPU_CAPABILITY`` (default, avx2, avx512). Up to N = 2^15 one full ``pair_sum`` checks the sampled rate;
each contender's best round is reported (and every round's CPU time).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np
import torch

from benchmarks._timing import interleaved, spread
from sdeformer import _abscos, _spheresums
from sdeformer._pairsums import _rows, block_sum, pair_sum
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
    p.add_argument("--crossover", type=int, nargs="*", default=[])
    p.add_argument("--sample", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    if a.crossover:
        for n in a.crossover:
            for cloud in ("spread", "clustered"):
                print(json.dumps(_crossover(n, cloud, a)), flush=True)
        return
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


def _cloud(n: int, cloud: str) -> np.ndarray:
    """Unit tokens ``(n, 3)`` float64: uniform on S^2, or 64 clusters of angular radius ~0.02."""
    g = np.random.default_rng(0)
    x = g.standard_normal((n, 3))
    if cloud == "clustered":
        x = g.standard_normal((64, 3))[g.integers(0, 64, n)] + 0.02 * x
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _timed(fn) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of ``fn()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def _rows_sample(u: torch.Tensor, sample: int) -> None:
    """``sample`` upper row blocks of ``pair_sum(u, abs, diagonal=False)``, every k-th, as it runs them."""
    step = _rows(u)
    starts = range(0, u.shape[0], step)
    for s in starts[:: max(1, math.ceil(len(starts) / sample))]:
        block_sum(u[s : s + step] @ u.T[:, s:], torch.abs_, diagonal=False)


def _crossover(n: int, cloud: str, a: argparse.Namespace) -> dict:
    """The octree in full against the row blocks scaled from a sample, ``a.rounds`` interleaved rounds."""
    w = _cloud(n, cloud)
    u = torch.from_numpy(w)
    step = _rows(u)
    starts = range(0, n, step)
    picked = starts[:: max(1, math.ceil(len(starts) / a.sample))]
    scale = sum(n - s for s in starts) / sum(n - s for s in picked)  # all cosines over the sampled ones
    runs: dict[str, list] = {"octree": [], "rows": [], "load": []}
    _abscos.abs_cosine_sum(w[:4096])  # first calls (imports, allocator) outside the timings
    for r in range(a.rounds):
        order = [("octree", lambda: _abscos.abs_cosine_sum(w)), ("rows", lambda: _rows_sample(u, a.sample))]
        for name, fn in order[r % 2 :] + order[: r % 2]:
            runs["load"].append(os.getloadavg()[0])
            cpu, wall = _timed(fn)
            runs[name].append((cpu, wall) if name == "octree" else (cpu * scale, wall * scale))
    if n <= 1 << 15:  # the sample checked against one full run
        runs["rows_full"] = [_timed(lambda: pair_sum(u, torch.abs_, diagonal=False))]
    med = {k: min(v) for k, v in runs.items() if k != "load"}  # best round: the least disturbed by the load
    return {
        "tokens": n,
        "cloud": cloud,
        "octree_cpu_s": med["octree"][0],
        "octree_wall_s": med["octree"][1],
        "rows_cpu_s": med["rows"][0],
        "rows_wall_s": med["rows"][1],
        "rows_full_cpu_s": med["rows_full"][0] if "rows_full" in med else None,
        "rows_over_octree_cpu": med["rows"][0] / med["octree"][0],
        "rounds_cpu_s": {k: [round(c, 3) for c, _ in runs[k]] for k in ("octree", "rows")},
        "rows_sampled_blocks": len(picked),
        "rows_blocks": len(starts),
        "rounds": a.rounds,
        "load": [min(runs["load"]), max(runs["load"])],
        "capability": torch.backends.cpu.get_cpu_capability(),
        "env_cap": os.environ.get("ATEN_CPU_CAPABILITY", ""),
    }


if __name__ == "__main__":
    main()
