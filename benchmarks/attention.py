"""Benchmark parts ``attention`` (the drift at large N: plain, memory-efficient, random-batch) and ``throughput``
(the discrete model at N = 16,384 tokens: full vs random-batch attention, fp32 vs bf16 MLP)."""

from __future__ import annotations

import torch

from sdeformer.attention.softmax import RandomBatchAttention, SoftmaxAttention
from sdeformer.core.sphere import uniform_sphere
from sdeformer.dynamics.discrete import StochasticTransformer
from sdeformer.noise.mlp import MLPNoise

from .timing import peak_memory

RB_SIZE = 256  # random-batch size p of the attention and throughput parts
NAIVE_MAX_SCORES = 2**28  # plain attention is run only where its N^2 fp32 scores take <= 1 GB


def _plain_attention(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x @ x.transpose(-1, -2), dim=-1) @ x  # (N, d), N x N scores


def bench_attention(device: torch.device, quick: bool) -> dict:
    """Time and extra peak memory of the three drifts per N; random-batch error at N = 4096 as p grows."""
    sizes = (1024, 4096) if quick else (1024, 4096, 16384, 65536)
    d, full = 64, SoftmaxAttention()
    rows = []
    for n in sizes:
        x = uniform_sphere(n, d, seed=0, device=device)  # (N, d)
        row: dict = {"tokens": n}
        if n * n <= NAIVE_MAX_SCORES:
            row["plain_s"], row["plain_mb"], _ = peak_memory(lambda: _plain_attention(x), device)
        else:
            row["plain_s"] = row["plain_mb"] = None
            row["plain_note"] = f"not run: N^2 fp32 scores alone need {n * n * 4 / 2**30:.0f} GB"
        row["efficient_s"], row["efficient_mb"], exact = peak_memory(lambda: full.drift(x), device)
        rb = RandomBatchAttention(full, RB_SIZE, seed=1)
        row["random_batch_s"], row["random_batch_mb"], approx = peak_memory(lambda: rb.drift(x), device)
        row["random_batch_relative_mse"] = ((approx - exact).pow(2).sum() / exact.pow(2).sum()).item()
        row["efficient_over_random_batch"] = row["efficient_s"] / row["random_batch_s"]
        rows.append(row)
    n = 4096
    x = uniform_sphere(n, d, seed=0, device=device)
    exact = full.drift(x)
    err = []
    for p in (16, 64, 256, 1024, 4096):
        e = (RandomBatchAttention(full, p, seed=2).drift(x) - exact).pow(2).sum(-1).mean().item()
        err.append({"p": p, "mse": e, "relative_mse": e / exact.pow(2).sum(-1).mean().item()})
    return {"dim": d, "random_batch_size": RB_SIZE, "sizes": rows, "error_vs_p_at_4096": err}


def bench_throughput(device: torch.device, quick: bool) -> dict:
    """Seconds per layer, token-layers per second and extra peak memory of three variants of the discrete model."""
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
    for name, (attn, options) in variants.items():
        model = StochasticTransformer(
            layers, 5.0 * layers / 150, noise=MLPNoise("relu", m, 0.1, 0.1, **options), attention=attn
        )
        seconds, mem, _ = peak_memory(lambda: model.run(x0, seed=0, saveat=layers), device)
        out[name] = {
            "seconds_per_layer": seconds / layers,
            "token_layers_per_s": n * layers / seconds,
            "extra_peak_mb": mem,
        }
    return out
