"""Issue 42's items 1-4 on a device, run by ``python -m benchmarks gpu`` (``benchmarks/gpu.sh``) after its engine
grid: what they add at the sizes a GPU is for (docs/scaling.md, "Devices").

- ``attention``: ``SoftmaxAttention(beta, method="harmonic")`` (Fourier modes on S^1, real spherical harmonics on
  S^2) against ``method="exact"`` at d = 2, 3, beta = 1, 4, float64 tokens, N = 10^3 .. 10^6 (exact up to 10^5):
  the best seconds of 3 calls after a warm-up, and the largest difference of the two drifts where both ran;
- ``observables``: ``cluster_count``, ``mean_cosine`` and ``interaction_energy`` of one state against one layer of
  the model (``config.run_group``, 2 layers minus 1 layer) at N = 4,096 .. 32,768, d = 3;
- ``mlp``: one layer of the MLP field at N = 65,536, m = 1,024, d = 3 (its hidden layer in token blocks,
  ``noise._mlp.TOKEN_BLOCK``): seconds and the device's peak memory.

A part whose time estimate does not fit the time left is marked skipped. ``--tiny`` runs a few tokens (the CPU
check, tests/test_gpu_bench.py). Without the device (``--device cuda`` on a machine without CUDA) the benchmark
writes nothing and says so (``_gpu.main``).
"""

from __future__ import annotations

import time

import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.config import ModelConfig
from sdeformer.config._batches import run_group
from sdeformer.core._sphere import uniform_sphere
from sdeformer.observables import cluster_count, interaction_energy, mean_cosine

FULL = {"attention": (1_000, 10_000, 100_000, 1_000_000), "exact_max": 100_000, "observables": (4096, 32768)}
FULL.update(mlp=(65_536, 1024))
TINY = {"attention": (16, 64), "exact_max": 64, "observables": (16,), "mlp": (32, 8)}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _best(fn, device: torch.device, repeat: int = 3) -> tuple[float, object]:
    """(best seconds of ``repeat`` calls after one warm-up, the last call's value)."""
    out = fn()
    best = float("inf")
    for _ in range(repeat):
        _sync(device)
        began = time.perf_counter()
        out = fn()
        _sync(device)
        best = min(best, time.perf_counter() - began)
    return best, out


def attention(device: torch.device, sizes: dict, deadline: float) -> list[dict]:
    rows = []
    for dim in (2, 3):
        for beta in (1.0, 4.0):
            for n in sizes["attention"]:
                row: dict = {"dim": dim, "beta": beta, "tokens": n}
                if time.perf_counter() > deadline:
                    rows.append({**row, "status": "skipped: time"})
                    continue
                x = uniform_sphere(n, dim, seed=0, dtype=torch.float64, device=device)
                drifts = {}
                for method in ("harmonic", "exact"):
                    if method == "exact" and n > sizes["exact_max"]:
                        continue
                    attn = SoftmaxAttention(beta, method=method)
                    row[f"{method}_s"], drifts[method] = _best(lambda a=attn: a.drift(x), device)
                if len(drifts) == 2:
                    row["max_abs_diff"] = float((drifts["harmonic"] - drifts["exact"]).abs().max())
                    row["speedup"] = row["exact_s"] / row["harmonic_s"]
                rows.append({**row, "status": "ok"})
    return rows


def _layer(cfg: ModelConfig, device: torch.device) -> float:
    """Seconds of one layer: a 2-layer run minus a 1-layer run (set-up drops out)."""
    one, _ = _best(lambda: run_group([cfg.replace(layers=1)], device), device, 2)
    two, _ = _best(lambda: run_group([cfg.replace(layers=2)], device), device, 2)
    return max(two - one, 0.0)


def observables(device: torch.device, sizes: dict, deadline: float) -> list[dict]:
    rows = []
    for n in sizes["observables"]:
        if time.perf_counter() > deadline:
            rows.append({"tokens": n, "status": "skipped: time"})
            continue
        cfg = ModelConfig(tokens=n, dim=3, width=64, layers=2)
        x = uniform_sphere(n, 3, seed=0, device=device)
        row: dict = {"tokens": n, "layer_s": _layer(cfg, device)}
        for name, fn in (("clusters", cluster_count), ("mean_cos", mean_cosine), ("energy", interaction_energy)):
            row[f"{name}_s"], _ = _best(lambda f=fn: f(x), device)
        rows.append({**row, "status": "ok"})
    return rows


def mlp(device: torch.device, sizes: dict, deadline: float) -> dict:
    n, width = sizes["mlp"]
    if time.perf_counter() > deadline:
        return {"tokens": n, "width": width, "status": "skipped: time"}
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    seconds = _layer(ModelConfig(tokens=n, dim=3, width=width, layers=2), device)
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None
    return {"tokens": n, "width": width, "layer_s": seconds, "peak_bytes": peak, "status": "ok"}


def bench_scaling(device: torch.device, tiny: bool, seconds: float) -> dict:
    """The three parts within ``seconds`` in all (each part's later sizes are skipped past the deadline)."""
    sizes, deadline = (TINY if tiny else FULL), time.perf_counter() + seconds
    return {
        "attention": attention(device, sizes, deadline),
        "observables": observables(device, sizes, deadline),
        "mlp": mlp(device, sizes, deadline),
    }


def table(result: dict) -> str:
    """Markdown tables of ``bench_scaling``'s result."""
    lines = ["", "## Issue 42 on the device", "", "| d | beta | N | harmonic s | exact s | speed-up | max diff |"]
    lines.append("|---|---|---|---|---|---|---|")
    for r in result["attention"]:
        cells = [f"{r.get(k, '-'):.3g}" if isinstance(r.get(k), float) else "-" for k in
                 ("harmonic_s", "exact_s", "speedup", "max_abs_diff")]  # fmt: skip
        lines.append(f"| {r['dim']} | {r['beta']:g} | {r['tokens']} | " + " | ".join(cells) + " |")
    lines += ["", "| N | one layer s | clusters s | mean cos s | energy s |", "|---|---|---|---|---|"]
    for r in result["observables"]:
        cells = [f"{r[k]:.3g}" if k in r else "-" for k in ("layer_s", "clusters_s", "mean_cos_s", "energy_s")]
        lines.append(f"| {r['tokens']} | " + " | ".join(cells) + " |")
    m = result["mlp"]
    seconds = f"{m['layer_s']:.3g} s" if "layer_s" in m else "-"
    peak = f"{m['peak_bytes'] / 2**30:.3g} GiB" if m.get("peak_bytes") else "-"
    lines += ["", f"MLP field, N = {m['tokens']}, m = {m['width']}: {seconds} a layer, peak {peak} ({m['status']})"]
    return "\n".join(lines) + "\n"
