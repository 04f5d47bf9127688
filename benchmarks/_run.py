"""The benchmark suite runner: runs the named parts in one process (one torch thread unless asked; every part
times its contenders interleaved over rounds, ``timing.interleaved``), writes ``<out>/<part>[_quick].json``
with the load average and thread count before and after the part, and gives the headline rows of the
``python -m benchmarks suite`` table (median of the per-round ratios, with their range and the load)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import torch

from sdeformer.core._errors import ConfigError
from sdeformer.core._validate import positive_int
from sdeformer.io._formats import write_json

from ._attention import RB_SIZE
from ._timing import conditions, machine, peaks

PARTS = ("grid", "phase", "sde", "attention", "throughput", "precision", "rng", "spde")


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
    threads: int | None = 1,
    rounds: int = 3,
) -> dict:
    """Run the named parts; write ``<out>/<part>[_quick].json`` as each finishes. Returns all results.
    ``threads`` sets torch's CPU threads for the run (default 1: on a machine shared with other jobs, more
    threads than free cores spin and slow small ops by 10-40x; None leaves torch's setting); ``rounds``: how
    many times each part runs its contenders, interleaved. Raises ConfigError for an unknown part, a thread
    or round count < 1 or an unusable device."""
    for p in parts:
        if p not in PARTS:
            raise ConfigError("part", p, f"one or more of {list(PARTS)}")
    if threads is not None:
        torch.set_num_threads(positive_int("threads", threads))
    rounds = positive_int("rounds", rounds)
    device = check_device(device)
    rates = peaks(device, quick)
    results: dict = {"machine": machine(device), "quick": quick, "rounds": rounds, "rates": rates}
    runners = {  # each part's module is imported when it runs (the grid and phase parts need the sweeps extra)
        "grid": lambda: _part("grid", "bench_grid")(device, rates, quick, rounds),
        "phase": lambda: _part("phase", "bench_phase")(device, quick, rounds),
        "sde": lambda: _part("sde", "bench_sde")(device, quick, rounds),
        "attention": lambda: _part("attention", "bench_attention")(device, quick, rounds),
        "throughput": lambda: _part("attention", "bench_throughput")(device, quick, rounds),
        "precision": lambda: _part("precision", "bench_precision")(device, quick, rounds),
        "rng": lambda: _part("rng", "bench_rng")(device, quick, rounds),
        "spde": lambda: _part("spde", "bench_spde")(quick, device, rounds),
    }
    for part in parts:
        before = conditions()
        results[part] = {**runners[part](), "conditions": {"before": before, "after": conditions()}}
        if out is not None:
            suffix = "_quick" if quick else ""
            write_json(
                Path(out) / f"{part}{suffix}.json",
                {"machine": results["machine"], "rates": rates, "quick": quick, part: results[part]},
                checksum=True,
            )
        if on_part is not None:
            on_part(part)
    return results


def _part(module: str, function: str) -> Callable:
    """The benchmark function ``function`` of the part module ``module`` of this package."""
    return getattr(importlib.import_module(f"{__package__}._{module}"), function)


def _x(r: dict) -> str:
    """A per-round ratio as ``median x [min - max]``."""
    return f"{r['median']:.2f}x [{r['min']:.2f}-{r['max']:.2f}]"


def summary_rows(results: dict) -> list[tuple[str, str, str]]:
    """(measurement, value, target) rows of the headline ratios (median of the rounds [min - max]), for the
    CLI table and docs; the last row gives the rounds, threads and load average."""
    rows = []
    if "grid" in results:
        r = results["grid"]["ratios"]
        rows += [
            ("grid: plain loop / engine", _x(r["loop_over_engine"]), ">= 1.5x"),
            ("grid: plain loop / engine (conditional sampling)", _x(r["loop_over_engine_conditional"]), ">= 1.5x"),
            ("grid: engine / floor (direct counts)", _x(r["engine_over_floor_direct"]), "<= 1.3x"),
            ("grid: engine conditional / its floor", _x(r["engine_conditional_over_floor_conditional"]), "<= 1.3x"),
        ]
    if "phase" in results:
        r = results["phase"]["ratios"]
        rows += [
            (
                "phase (attention only): plain script / ours, all beta in one batch",
                _x(r["plain_over_all_beta"]),
                ">= 1.5x",
            ),
            ("phase: ours per beta / all beta in one batch", _x(r["per_beta_over_all_beta"]), "> 1x"),
            (
                "phase: one-cluster test, share of the run",
                "{median:.0%} [{min:.0%}-{max:.0%}]".format(**results["phase"]["one_cluster_test_share_of_all_beta"]),
                "",
            ),
        ]
    if "sde" in results and "skipped" not in results["sde"]:
        for name in ("gaussian", "random_feature_1024"):
            s = results["sde"][name]
            for kind in ("general", "expert"):
                unbatched = s["unbatched"][f"speedup_vs_{kind}"]
                rows += [
                    (f"sde ({name}): torchsde {kind} / ours, unbatched", _x(unbatched), ">= 4x"),
                    (
                        f"sde ({name}): torchsde {kind} unbatched / ours batched, per run-step",
                        _x(s[f"batched_speedup_per_run_step_vs_{kind}"]),
                        ">= 10x",
                    ),
                ]
    if "attention" in results:
        last = results["attention"]["sizes"][-1]
        rows.append(
            (
                f"attention N={last['tokens']}: full (efficient) / random-batch p={RB_SIZE}",
                _x(last["efficient_over_random_batch"]),
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
            (f"throughput N={t['tokens']}: {k}", f"{t[k]['token_layers_per_s']['median']:.3g} token-layers/s", "")
            for k in ("full_attention_fp32", "random_batch_fp32", "random_batch_bf16_mlp")
        ]
    if "precision" in results:
        p = results["precision"]
        rows.append(("bf16 MLP: max |E_bf16 - E_fp32| (d=64 panels)", f"{p['energy_max_abs_difference']:.2e}", ""))
    if "rng" in results:
        for row in results["rng"]["rows"]:
            if row["batch"] >= 1024 or row["batch"] == 1:
                rows.append(
                    (
                        f"rng {row['dtype']} batch {row['batch']}: counter / torch.randn floor (loop / floor)",
                        f"{_x(row['counter_over_floor'])} ({row['loop_over_floor']['median']:.2f}x)",
                        "<= 2x at batch >= 1024",
                    )
                )
    loads = [results[p]["conditions"]["before"]["load_average"][0] for p in PARTS if p in results]
    if loads:
        rows.append(
            (
                "conditions",
                f"{results['rounds']} rounds, {results['machine']['torch_threads']} thread(s), load {min(loads):.1f}-"
                f"{max(loads):.1f}",
                "",
            )
        )
    return rows
