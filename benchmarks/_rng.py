"""Benchmark part ``rng``: standard normals per second from the counter-based streams (``core._counter``) and
from the per-generator loop (``core._rng.Streams``), at batch 1, 32, 1024 and 8192 runs, against ``torch.randn``
of the same count from one generator (the floor: what the machine's own sampler does without any per-run
stream). Each run draws ``SHAPE`` (an MLP's U at m = 256, d = 8) per call; the three contenders are
interleaved over the rounds; a timing repeats its call until it has drawn ``PER_TIMING`` normals (at most
``MAX_CALLS`` calls).
Target: the counter within 2x of the floor at batch >= 1024. The counter's cost per draw, apart
from the normals, is ~130 torch ops (Philox and the transform per chunk, 25 per-stream ops per call): what a
batch of one pays on a CPU, and what a GPU pays once per draw for the whole batch (docs/benchmarks.md,
"Counter-based randomness").
"""

from __future__ import annotations

import math

import torch

from sdeformer.core._counter import CounterStreams
from sdeformer.core._rng import Streams

from ._timing import interleaved, ratio, spread

BATCHES = (1, 32, 1024, 8192)
SHAPE = (256, 8)  # normals per run and call: 2048
PER_TIMING = 1 << 23  # >= 4 calls per timing up to batch 1024: a run draws every layer, not once
MAX_CALLS = 256  # batch 1: the counter's ~130 torch ops per call make a call cost ~0.5 ms on a CPU


def _repeat(fn, calls: int):
    """``fn`` called ``calls`` >= 1 times in a row (one timing); returns the last result."""

    def run():
        out = fn()
        for _ in range(calls - 1):
            out = fn()
        return out

    return run


def bench_rng(device: torch.device, quick: bool, rounds: int = 3) -> dict:
    """Normals per second (min / median / max over ``rounds``) of counter, loop and floor per batch and dtype,
    and the seconds ratios counter / floor, loop / floor and loop / counter per round."""
    dtypes = (torch.float32,) if quick else (torch.float32, torch.float64)
    out: dict = {"shape_per_run": list(SHAPE), "rows": []}
    generator = torch.Generator(device=device).manual_seed(0)
    for dtype in dtypes:
        for batch in BATCHES:
            seeds = list(range(batch))
            counter, loop = CounterStreams(seeds, (batch,), device), Streams(seeds, (batch,), device)
            total = batch * math.prod(SHAPE)
            calls = min(MAX_CALLS, max(1, PER_TIMING // total))
            contenders = {
                "counter": _repeat(lambda: counter.randn(SHAPE, dtype), calls),
                "loop": _repeat(lambda: loop.randn(SHAPE, dtype), calls),
                "floor": _repeat(
                    lambda: torch.randn((batch, *SHAPE), generator=generator, dtype=dtype, device=device), calls
                ),
            }
            for fn in contenders.values():
                fn()  # warm-up: allocator, first-call costs
            record, _ = interleaved(contenders, device, rounds)
            s = record["seconds"]
            out["rows"].append(
                {
                    "dtype": str(dtype).removeprefix("torch."),
                    "batch": batch,
                    "normals_per_timing": calls * total,
                    **{f"{k}_normals_per_s": spread([calls * total / t for t in v]) for k, v in s.items()},
                    "counter_over_floor": ratio(s["counter"], s["floor"]),
                    "loop_over_floor": ratio(s["loop"], s["floor"]),
                    "loop_over_counter": ratio(s["loop"], s["counter"]),
                    "rounds": record,
                }
            )
    return out
