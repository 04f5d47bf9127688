"""Benchmark parts ``attention`` (the drift at large N: plain, memory-efficient, random-batch) and ``throughput``
(the discrete model at N = 16,384 tokens: full vs random-batch attention, fp32 vs bf16 MLP)."""

from __future__ import annotations

import functools

import torch

from sdeformer.attention._softmax import RandomBatchAttention, SoftmaxAttention
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.noise._mlp import MLPNoise

from ._timing import interleaved, peak_memory, ratio, spread

RB_SIZE = 256  # random-batch size p of the attention and throughput parts
NAIVE_MAX_SCORES = 2**28  # plain attention is run only where its N^2 fp32 scores take <= 1 GB


def _plain_attention(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x @ x.transpose(-1, -2), dim=-1) @ x  # (N, d), N x N scores


def bench_attention(device: torch.device, quick: bool, rounds: int = 3) -> dict:
    """Per N: extra peak memory of the three drifts (one call each), then their times interleaved over
    ``rounds`` (min / median / max, full over random-batch per round); random-batch error at N = 4096 as p
    grows."""
    sizes = (1024, 4096) if quick else (1024, 4096, 16384, 65536)
    d, full = 64, SoftmaxAttention()
    rows = []
    for n in sizes:
        x = uniform_sphere(n, d, seed=0, device=device)  # (N, d)
        rb = RandomBatchAttention(full, RB_SIZE, seed=1)
        contenders = {"efficient": lambda: full.drift(x), "random_batch": lambda: rb.drift(x)}
        row: dict = {"tokens": n}
        if n * n <= NAIVE_MAX_SCORES:
            contenders = {"plain": lambda: _plain_attention(x), **contenders}
        else:
            row["plain_s"] = row["plain_mb"] = None
            row["plain_note"] = f"not run: N^2 fp32 scores alone need {n * n * 4 / 2**30:.0f} GB"
        outputs = {}
        for name, fn in contenders.items():
            _, row[f"{name}_mb"], outputs[name] = peak_memory(fn, device)
        record, _ = interleaved(contenders, device, rounds)
        for name in contenders:
            row[f"{name}_s"] = spread(record["seconds"][name])
        row["rounds"] = record
        exact, approx = outputs["efficient"], outputs["random_batch"]
        row["random_batch_relative_mse"] = ((approx - exact).pow(2).sum() / exact.pow(2).sum()).item()
        row["efficient_over_random_batch"] = ratio(record["seconds"]["efficient"], record["seconds"]["random_batch"])
        rows.append(row)
    n = 4096
    x = uniform_sphere(n, d, seed=0, device=device)
    exact = full.drift(x)
    err = []
    for p in (16, 64, 256, 1024, 4096):
        e = (RandomBatchAttention(full, p, seed=2).drift(x) - exact).pow(2).sum(-1).mean().item()
        err.append({"p": p, "mse": e, "relative_mse": e / exact.pow(2).sum(-1).mean().item()})
    return {"dim": d, "random_batch_size": RB_SIZE, "sizes": rows, "error_vs_p_at_4096": err}


def bench_throughput(device: torch.device, quick: bool, rounds: int = 3) -> dict:
    """Seconds per layer and token-layers per second (min / median / max over ``rounds``, the variants
    interleaved) and extra peak memory (one run each) of three variants of the discrete model."""
    n, d, m = (4096 if quick else 16384), 64, 2048
    layers = 1 if quick else 3
    x0 = uniform_sphere(n, d, seed=0, device=device)
    variants = {
        "full_attention_fp32": (SoftmaxAttention(), {}),
        "random_batch_fp32": (RandomBatchAttention(SoftmaxAttention(), RB_SIZE, seed=1), {}),
        "random_batch_bf16_mlp": (
            RandomBatchAttention(SoftmaxAttention(), RB_SIZE, seed=1),
            {"matmul_dtype": torch.bfloat16},
        ),
    }
    out: dict = {"tokens": n, "dim": d, "width": m, "layers": layers}
    runs = {}
    for name, (attn, options) in variants.items():
        model = StochasticTransformer(
            layers, 5.0 * layers / 150, noise=MLPNoise("relu", m, 0.1, 0.1, **options), attention=attn
        )
        runs[name] = functools.partial(model.run, x0, seed=0, saveat=layers)
        _, mem, _ = peak_memory(runs[name], device)
        out[name] = {"extra_peak_mb": mem}
    record, _ = interleaved(runs, device, rounds)
    for name, seconds in record["seconds"].items():
        out[name]["seconds_per_layer"] = spread([s / layers for s in seconds])
        out[name]["token_layers_per_s"] = spread([n * layers / s for s in seconds])
    out["rounds"] = record
    return out
