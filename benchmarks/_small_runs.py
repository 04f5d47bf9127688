"""Many small runs in one batch (the phase-diagram and sweep case; THEORY section 1's model with the MLP noise):
4,096 runs of N = 4, d = 4, width 8, 20 layers, float32, one seed per run, only the last state kept, against the
floor of ``torch.randn`` drawing the same count of normals (the MLP's per layer and run: 2 m d + m + d) and a
plain torch loop doing the same arithmetic with ``torch.randn`` (one generator for the batch: no run has its own
stream, so it is the floor of the arithmetic, not a contender that keeps batched equal to unbatched).

Contenders, interleaved A B A B over rounds (``timing.interleaved``): the sweep default (``rng: splitmix``), the
phase diagram's form of it (one beta and one su per run: 64 x 64 settings as one batched model,
``engine.build_batched``), with ``rng: counter`` (Philox) and with ``rng: generator`` (one generator per run,
``simulate``'s default), the same batch without noise (attention and normalization only), the plain loop and the
floor. Reported: seconds, and per round each over the floor and over the plain loop.

    python -m benchmarks small_runs [--rounds 5] [--runs 4096] [--out FILE]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import torch

from sdeformer.config import ModelConfig
from sdeformer.config._batches import build_batched
from sdeformer.dynamics._loop import SaveAt

from ._timing import conditions, finish, interleaved, ratio, spread

SIZE = {"tokens": 4, "dim": 4, "width": 8, "layers": 20}
HORIZON = 5.0  # ModelConfig's default T


def normals(runs: int) -> int:
    """The MLP noise's normals of ``runs`` runs: per layer and run W1 (m, d), b1 (m), W2 (d, m), b2 (d)."""
    m, d = SIZE["width"], SIZE["dim"]
    return runs * SIZE["layers"] * (2 * m * d + m + d)


def plain_loop(x: torch.Tensor) -> torch.Tensor:
    """The Post-LN layer of THEORY section 1 (beta = 1, relu MLP, zero bias stds) written as plain torch ops,
    drawing every layer's MLP with ``torch.randn`` for the whole batch. ``(B, N, d) -> (B, N, d)``."""
    runs, m, d = x.shape[0], SIZE["width"], SIZE["dim"]
    dt = HORIZON / SIZE["layers"]
    x = x / x.norm(dim=-1, keepdim=True)
    for _ in range(SIZE["layers"]):
        x = x + dt * (torch.softmax(x @ x.transpose(-1, -2), -1) @ x)
        x = x / x.norm(dim=-1, keepdim=True)
        U, W = torch.randn(runs, m, d), torch.randn(runs, d, m)
        torch.randn(runs, m), torch.randn(runs, d)  # the biases' normals, drawn; zero stds: nothing added
        hidden = torch.relu(x @ U.transpose(-1, -2) / math.sqrt(d))  # (B, N, m)
        x = x + math.sqrt(dt) * (hidden @ W.transpose(-1, -2) / math.sqrt(m))
        x = x / x.norm(dim=-1, keepdim=True)
    return x


def contenders(runs: int) -> dict:
    """The contenders at ``runs`` runs (the batched runs from the same tokens and seeds)."""
    cfg = ModelConfig(tokens=SIZE["tokens"], dim=SIZE["dim"], width=SIZE["width"], layers=SIZE["layers"])
    x0 = torch.randn(runs, SIZE["tokens"], SIZE["dim"], generator=torch.Generator().manual_seed(0))
    seeds, last = list(range(runs)), SaveAt(final_only=True)
    noisy, quiet, count = cfg.build(), cfg.replace(mlp=False).build(), normals(runs)
    grid = build_batched([cfg.replace(beta=0.5 + k % 64 / 8, su=k // 64 / 64) for k in range(runs)])
    return {
        "splitmix (sweep default)": lambda: noisy.run(x0, seed=seeds, rng="splitmix", saveat=last).final,
        "splitmix, a beta and su per run": lambda: grid.run(x0, seed=seeds, rng="splitmix", saveat=last).final,
        "counter": lambda: noisy.run(x0, seed=seeds, rng="counter", saveat=last).final,
        "generator": lambda: noisy.run(x0, seed=seeds, rng="generator", saveat=last).final,
        "no noise": lambda: quiet.run(x0, seed=seeds, saveat=last).final,
        "plain torch loop": lambda: plain_loop(x0),
        "randn floor": lambda: torch.randn(count),
    }


def bench_small_runs(rounds: int = 5, runs: int = 4096) -> dict:
    """Seconds per contender, each over the floor and over the plain loop, per round (min / median / max)."""
    record, _ = interleaved(contenders(runs), torch.device("cpu"), rounds, warmup=True)
    seconds = record["seconds"]
    over = {k: ratio(v, seconds["randn floor"]) for k, v in seconds.items() if k != "randn floor"}
    over_plain = {k: ratio(v, seconds["plain torch loop"]) for k, v in seconds.items() if k != "randn floor"}
    spreads = {k: spread(v) for k, v in seconds.items()}
    out = {"conditions": conditions(), "runs": runs, "normals": normals(runs), "record": record}
    return {**out, "seconds": spreads, "over_floor": over, "over_plain_loop": over_plain}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=4096)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    result = bench_small_runs(args.rounds, args.runs)
    print(result["conditions"])
    for name, s in result["seconds"].items():
        line = f"{name}: {s['min']:.4f} / {s['median']:.4f} / {s['max']:.4f} s"
        for label, table in (("floor", result["over_floor"]), ("plain loop", result["over_plain_loop"])):
            if name in table:
                r = table[name]
                line += f"; over the {label} {r['min']:.3g} / {r['median']:.3g} / {r['max']:.3g}"
        print(line)
    finish(result, args.out)


if __name__ == "__main__":
    main()
