"""Many small runs in one batch (the phase-diagram case; THEORY section 1's model with the MLP noise): 4,096 runs
of N = 4, d = 4, width 8, 20 layers, float32, one seed per run, only the last state kept, against the floor of
``torch.randn`` drawing the same count of normals (the MLP's per layer and run: 2 m d + m + d).

Contenders, interleaved A B A B over rounds (``timing.interleaved``): the run with ``rng: splitmix`` (the source for
this case), the phase diagram's form of it (one beta and one su per run: 64 x 64 settings as one batched model,
``engine.build_batched``), the same in the usual layout (``batch_last`` off: what ``dynamics._batch_last`` saves;
the numbers are equal), with ``rng: counter`` (Philox) and with the default source (one generator per run), the
same batch without noise (attention and normalization only: the part of the time that is not the noise), and the
floor. Reported: seconds, and per round each over the floor.

    python -m sdeformer.bench small_runs [--rounds 5] [--runs 4096] [--out FILE]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from sdeformer.config import ModelConfig
from sdeformer.dynamics._engine import build_batched
from sdeformer.dynamics._loop import SaveAt

from ._timing import conditions, finish, interleaved, ratio, spread

SIZE = {"tokens": 4, "dim": 4, "width": 8, "layers": 20}


def normals(runs: int) -> int:
    """The MLP noise's normals of ``runs`` runs: per layer and run W1 (m, d), b1 (m), W2 (d, m), b2 (d)."""
    m, d = SIZE["width"], SIZE["dim"]
    return runs * SIZE["layers"] * (2 * m * d + m + d)


def contenders(runs: int) -> dict:
    """The seven contenders at ``runs`` runs (the batched runs from the same tokens and seeds)."""
    cfg = ModelConfig(tokens=SIZE["tokens"], dim=SIZE["dim"], width=SIZE["width"], layers=SIZE["layers"])
    x0 = torch.randn(runs, SIZE["tokens"], SIZE["dim"], generator=torch.Generator().manual_seed(0))
    seeds, last = list(range(runs)), SaveAt(final_only=True)
    noisy, quiet, usual, count = cfg.build(), cfg.replace(mlp=False).build(), cfg.build(), normals(runs)
    usual.batch_last = False
    grid = build_batched([cfg.replace(beta=0.5 + k % 64 / 8, su=k // 64 / 64) for k in range(runs)])
    return {
        "splitmix": lambda: noisy.run(x0, seed=seeds, rng="splitmix", saveat=last).final,
        "splitmix, a beta and su per run": lambda: grid.run(x0, seed=seeds, rng="splitmix", saveat=last).final,
        "splitmix, usual layout": lambda: usual.run(x0, seed=seeds, rng="splitmix", saveat=last).final,
        "counter": lambda: noisy.run(x0, seed=seeds, rng="counter", saveat=last).final,
        "generator": lambda: noisy.run(x0, seed=seeds, rng="generator", saveat=last).final,
        "no noise": lambda: quiet.run(x0, seed=seeds, saveat=last).final,
        "randn floor": lambda: torch.randn(count),
    }


def bench_small_runs(rounds: int = 5, runs: int = 4096) -> dict:
    """Seconds per contender and each over the floor, per round (min / median / max)."""
    record, _ = interleaved(contenders(runs), torch.device("cpu"), rounds, warmup=True)
    seconds = record["seconds"]
    over = {k: ratio(v, seconds["randn floor"]) for k, v in seconds.items() if k != "randn floor"}
    spreads = {k: spread(v) for k, v in seconds.items()}
    out = {"conditions": conditions(), "runs": runs, "normals": normals(runs), "record": record}
    return {**out, "seconds": spreads, "over_floor": over}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=4096)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    result = bench_small_runs(args.rounds, args.runs)
    for name, s in result["seconds"].items():
        line = f"{name}: {s['min']:.3f} / {s['median']:.3f} / {s['max']:.3f} s"
        if name in result["over_floor"]:
            r = result["over_floor"][name]
            line += f"; over the floor {r['min']:.3g} / {r['median']:.3g} / {r['max']:.3g}"
        print(line)
    finish(result, args.out)


if __name__ == "__main__":
    main()
