"""The benchmark suite runner: runs the named parts in one process, writes ``<out>/<part>[_quick].json`` and
gives the headline rows of the ``sdeformer bench`` table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from sdeformer.core.errors import ConfigError
from sdeformer.core.validate import positive_int
from sdeformer.io.store import write_json

from .attention import RB_SIZE, bench_attention, bench_throughput
from .grid import bench_grid
from .precision import bench_precision
from .sde import bench_sde
from .timing import machine, peaks

PARTS = ("grid", "sde", "attention", "throughput", "precision")


def check_device(device: str | torch.device) -> torch.device:
    """The torch device named ``device``; ConfigError for an unknown name or CUDA without a GPU."""
    try:
        device = torch.device(device)
    except RuntimeError:
        raise ConfigError("device", device, "a torch device such as 'cpu' or 'cuda'") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device", str(device), "CUDA is not available on this machine")
    return device


def run_benchmarks(
    parts: tuple[str, ...] = PARTS,
    quick: bool = False,
    out: str | Path | None = None,
    device: str | torch.device = "cpu",
    on_part: Callable[[str], None] | None = None,
    threads: int | None = None,
) -> dict:
    """Run the named parts; write ``<out>/<part>[_quick].json`` as each finishes. Returns all results.
    ``threads`` sets torch's CPU threads for the run (on a machine shared with other jobs, 1 thread avoids
    OpenMP oversubscription, which slows small ops by 10-40x). Raises ConfigError for an unknown part, a
    thread count < 1 or an unusable device."""
    for p in parts:
        if p not in PARTS:
            raise ConfigError("part", p, f"one or more of {list(PARTS)}")
    if threads is not None:
        torch.set_num_threads(positive_int("threads", threads))
    device = check_device(device)
    rates = peaks(device, quick)
    results: dict = {"machine": machine(device), "quick": quick, "rates": rates}
    runners = {
        "grid": lambda: bench_grid(device, rates, quick),
        "sde": lambda: bench_sde(device, quick),
        "attention": lambda: bench_attention(device, quick),
        "throughput": lambda: bench_throughput(device, quick),
        "precision": lambda: bench_precision(device, quick),
    }
    for part in parts:
        results[part] = runners[part]()
        if out is not None:
            suffix = "_quick" if quick else ""
            write_json(
                Path(out) / f"{part}{suffix}.json",
                {"machine": results["machine"], "rates": rates, "quick": quick, part: results[part]},
            )
        if on_part is not None:
            on_part(part)
    return results


def summary_rows(results: dict) -> list[tuple[str, str, str]]:
    """(measurement, value, target) rows of the headline ratios, for the CLI table and docs."""
    rows = []
    if "grid" in results:
        r = results["grid"]["ratios"]
        rows += [
            ("grid: plain loop / engine", f"{r['loop_over_engine']:.2f}x", ">= 3x"),
            ("grid: plain loop / engine (conditional sampling)", f"{r['loop_over_engine_conditional']:.2f}x", ">= 3x"),
            ("grid: engine / floor (direct counts)", f"{r['engine_over_floor_direct']:.2f}x", "<= 1.5x"),
            (
                "grid: engine conditional / its floor",
                f"{r['engine_conditional_over_floor_conditional']:.2f}x",
                "<= 1.5x",
            ),
        ]
    if "sde" in results and "skipped" not in results["sde"]:
        for name in ("gaussian", "random_feature_1024"):
            s = results["sde"][name]
            for kind in ("general", "expert"):
                unbatched = s["unbatched"][f"speedup_vs_{kind}"]
                rows += [
                    (f"sde ({name}): torchsde {kind} / ours, unbatched", f"{unbatched:.2f}x", ">= 4x"),
                    (
                        f"sde ({name}): torchsde {kind} unbatched / ours batched, per run-step",
                        f"{s[f'batched_speedup_per_run_step_vs_{kind}']:.2f}x",
                        ">= 10x",
                    ),
                ]
    if "attention" in results:
        last = results["attention"]["sizes"][-1]
        rows.append(
            (
                f"attention N={last['tokens']}: full (efficient) / random-batch p={RB_SIZE}",
                f"{last['efficient_over_random_batch']:.1f}x",
                ">= 50x at N=65536",
            )
        )
        rows.append(
            (
                f"attention N={last['tokens']}: extra memory of the efficient path",
                f"{last['efficient_mb']:.0f} MB",
                "< 1 GB at N=65536",
            )
        )
    if "throughput" in results:
        t = results["throughput"]
        rows += [
            (f"throughput N={t['tokens']}: {k}", f"{t[k]['token_layers_per_s']:.3g} token-layers/s", "")
            for k in ("full_attention_fp32", "random_batch_fp32", "random_batch_bf16_mlp")
        ]
    if "precision" in results:
        p = results["precision"]
        rows.append(("bf16 MLP: max |E_bf16 - E_fp32| (d=64 panels)", f"{p['energy_max_abs_difference']:.2e}", ""))
    return rows
