"""Benchmark part ``precision``: the effect of bf16 MLP matmuls on the energies of the paper-scale d = 64 panels."""

from __future__ import annotations

import torch

from sdeformer.config._batches import run_sweep
from sdeformer.experiments._grid import grid_configs
from sdeformer.observables import interaction_energy, mean_cosine

from ._timing import interleaved, ratio, spread


def bench_precision(device: torch.device, quick: bool, rounds: int = 3) -> dict:
    """Seconds of fp32 and bf16 MLP sweeps (interleaved over ``rounds``: min / median / max, bf16 over fp32 per
    round) and the largest differences of their energies and final cosines."""
    layers = 30 if quick else 150
    configs = [c for c in grid_configs("relu", layers=layers) if c.dim == 64]
    record, last = interleaved(
        {
            "fp32": lambda: run_sweep(configs, device),
            "bf16": lambda: run_sweep(configs, device, matmul_dtype=torch.bfloat16),
        },
        device,
        rounds,
    )
    fp32, bf16 = last["fp32"], last["bf16"]
    e32 = torch.stack([interaction_energy(t.x, beta=1.0) for t in fp32])  # (settings, L+1)
    e16 = torch.stack([interaction_energy(t.x, beta=1.0) for t in bf16])
    c32 = torch.stack([mean_cosine(t.final) for t in fp32])
    c16 = torch.stack([mean_cosine(t.final) for t in bf16])
    return {
        "settings": len(configs),
        "layers": layers,
        "dim": 64,
        "activation": "relu",
        "seconds_fp32": spread(record["seconds"]["fp32"]),
        "seconds_bf16": spread(record["seconds"]["bf16"]),
        "bf16_over_fp32": ratio(record["seconds"]["bf16"], record["seconds"]["fp32"]),
        "rounds": record,
        "energy_max_abs_difference": (e16 - e32).abs().max().item(),
        "energy_max_relative_difference": ((e16 - e32).abs() / e32.abs().clamp(min=1e-12)).max().item(),
        "energy_range_fp32": [e32.min().item(), e32.max().item()],
        "final_mean_cosine_max_abs_difference": (c16 - c32).abs().max().item(),
    }
