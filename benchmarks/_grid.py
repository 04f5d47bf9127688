"""Benchmark part ``grid``: the Figures 2-6 grid with the batched engine, a plain per-setting loop and the floor."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from sdeformer.config import ModelConfig
from sdeformer.config._batches import run_sweep
from sdeformer.core._activations import get_activation
from sdeformer.experiments._grid import MLP_CHOICES, grid_configs
from sdeformer.noise._mlp import MLPNoise, root_pays

from ._timing import floor_seconds, interleaved, peaks, qr_flops, ratio, spread


def plain_grid_run(cfg: ModelConfig) -> torch.Tensor:
    """The straightforward baseline: one setting, one plain-PyTorch loop over layers (THEORY section 1), the
    same random numbers as the engine's default mode. Returns the saved states ``(L+1, N, d)``."""
    x = cfg.initial_tokens()  # (N, d)
    d, m = cfg.dim, cfg.width
    dt, act, g = cfg.horizon / cfg.layers, get_activation(cfg.activation), torch.Generator().manual_seed(cfg.seed)
    states = [x]
    for _ in range(cfg.layers):
        attn = torch.softmax(cfg.beta * x @ x.T, dim=-1) @ x * cfg.attention_scale  # (N, d)
        x = F.normalize(x + dt * attn, dim=-1)
        if cfg.mlp:
            U, bU = torch.randn(m, d, generator=g), cfg.su * torch.randn(m, generator=g)
            W, bW = torch.randn(d, m, generator=g), cfg.sw * torch.randn(d, generator=g)
            G = act(x @ U.T / math.sqrt(d) + bU) @ W.T / math.sqrt(m) + bW  # (N, d)
            x = F.normalize(x + math.sqrt(dt) * G, dim=-1)
        states.append(x)
    return torch.stack(states)


def _mlp_flops(n: int, d: int, m: int, sampling: str) -> tuple[float, float]:
    """(matmul flops, QR flops) of one MLP layer (conditional mode: a Householder QR root where it pays, then
    the smaller products)."""
    if sampling == "direct":
        return 4.0 * n * m * d, 0.0
    k, flops, qr = d + 1, 0.0, 0.0
    for rows, cols in ((k, m), (m, d)):  # the hidden stage f (N, d+1) Z (d+1, m), the output stage (N, m) (m, d)
        if root_pays(n, rows, cols):
            flops, qr = flops + 2.0 * n * n * cols, qr + qr_flops(rows, n)
        else:
            flops += 2.0 * n * rows * cols
    return flops, qr


def grid_counts(configs: list[ModelConfig], sampling: str) -> dict:
    """Normals drawn, matmul flops and QR flops of a sweep of configs (per layer and setting, times L)."""
    normals = flops = qr = 0.0
    for c in configs:
        attn = 4.0 * c.tokens**2 * c.dim
        mlp = MLPNoise(c.activation, c.width, sampling=sampling)
        mm, root = _mlp_flops(c.tokens, c.dim, c.width, sampling) if c.mlp else (0.0, 0.0)
        normals += c.layers * (mlp.normals_per_layer(c.tokens, c.dim) if c.mlp else 0)
        flops, qr = flops + c.layers * (attn + mm), qr + c.layers * root
    return {"normals": normals, "flops": flops, "qr": qr}


def bench_grid(device: torch.device, rates: dict, quick: bool, rounds: int = 3) -> dict:
    """Seconds of the plain loop, the engine (default and conditional sampling) and their floors, interleaved
    over ``rounds`` (the sampling and matmul rates are measured again in every round, so each round's floor
    sees that round's load), with min / median / max and the ratios per round. ``rates``: the rates measured
    before the part (kept in the result for reference)."""
    layers = 15 if quick else 150
    choices = ("relu",) if quick else MLP_CHOICES
    # the reproduction samples conditionally; the engine-vs-loop comparison draws U, W directly, as the loop does
    configs = [c.replace(sampling="direct") for ch in choices for c in grid_configs(ch, layers=layers)]
    round_rates: list[dict] = []
    contenders = {
        "plain_loop": lambda: [plain_grid_run(c) for c in configs],
        "engine": lambda: run_sweep(configs, device),
        "engine_conditional": lambda: run_sweep(configs, device, sampling="conditional"),
        "rates": lambda: round_rates.append(peaks(device, quick)),
    }
    record, last = interleaved(contenders, device, rounds)
    agree = max((p - t.x.cpu()).abs().max().item() for p, t in zip(last["plain_loop"], last["engine"]))
    direct, cond = grid_counts(configs, "direct"), grid_counts(configs, "conditional")
    floors = {
        "floor_direct": [floor_seconds(**direct, rates=r) for r in round_rates],
        "floor_conditional": [floor_seconds(**cond, rates=r) for r in round_rates],
    }
    per_round = {**record["seconds"], **floors}

    def over(a: str, b: str) -> dict:
        return ratio(per_round[a], per_round[b])

    return {
        "settings": len(configs),
        "layers": layers,
        "choices": list(choices),
        "rounds": record,
        "rates_before": rates,
        "seconds": {name: spread(v) for name, v in per_round.items() if name != "rates"},
        "counts": {"direct": direct, "conditional": cond},
        "ratios": {
            "loop_over_engine": over("plain_loop", "engine"),
            "loop_over_engine_conditional": over("plain_loop", "engine_conditional"),
            "engine_over_floor_direct": over("engine", "floor_direct"),
            "engine_conditional_over_floor_conditional": over("engine_conditional", "floor_conditional"),
            "engine_conditional_over_floor_direct": over("engine_conditional", "floor_direct"),
        },
        "max_abs_difference_loop_vs_engine": agree,
    }
