"""GPU readiness: the engine (``config.run_group``, one batched run of B configs) at
N = 64 ... 65,536 tokens and B = 1 ... 8,192 runs, float32 and bfloat16, the counter RNG (``rng="counter"``,
Philox for the whole batch) against the generator loop (``rng="generator"``, one ``torch.Generator`` call per
run and draw), beside this device's matmul peak (a large fp32 and bf16 matmul) and memory bandwidth (a large
copy), both measured here; then issue 42's harmonic attention, observables and token-blocked MLP field
(``_gpu_scaling``). Without CUDA, ``--device cuda`` skips in one line and writes nothing.

``python -m benchmarks gpu OUT [--device cuda] [--tiny] [--budget-gb G] [--max-seconds S]`` writes
``OUT/gpu.json`` and ``OUT/gpu.md``; ``benchmarks/gpu.sh OUT`` runs it on a GPU (sized for < 8 minutes on one
H200). A setting is timed as (run of 1 + K layers) - (run of 1 layer), so set-up, tokens and compilation drop
out; per layer and run it does 4 N^2 d (softmax attention) + 4 N m d (MLP noise, direct sampling) flops and
draws 2 m d + m + d normals. Settings whose estimated memory exceeds the budget, or whose estimated time
(flops at the matmul peak) does not fit the time left, are skipped and marked so in the table. ``--tiny``
(sizes of a few tokens, for ``--device cpu``) checks the script end to end before a GPU runs it
(tests/test_gpu_bench.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch

from sdeformer.config import ModelConfig
from sdeformer.config._batches import run_group
from sdeformer.io._atomic import atomic_write_text
from sdeformer.io._formats import write_json

from ._gpu_scaling import bench_scaling, table as scaling_table
from ._timing import conditions, machine

FULL = {"tokens": (64, 256, 1024, 4096, 16384, 65536), "batches": (1, 8, 64, 512, 4096, 8192), "dim": 64}
FULL.update(width=2048, extra_layers=2, peak_n=8192, copy_elems=1 << 30)  # m = 2048: THEORY section 6
TINY = {"tokens": (8, 16), "batches": (1, 4), "dim": 4, "width": 16, "extra_layers": 1}
TINY.update(peak_n=128, copy_elems=1 << 20)
DTYPES = ("float32", "bfloat16")
RNGS = ("counter", "generator")
COUNTER_SCRATCH = 200 * 2**20  # core._counter's chunk buffers on a GPU: 5 x 8 B x 2^22 blocks + 16 MB
SETUP_S_PER_RUN = 2.6e-3  # building and starting one run's config, tokens and loop draws, all timings together


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _best(fn, device: torch.device, repeat: int = 5) -> float:
    """Best seconds of ``repeat`` calls after one warm-up."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        best = min(best, time.perf_counter() - start)
    return best


def peaks(device: torch.device, sizes: dict) -> dict:
    """Matmul flop/s (fp32 and bf16, n x n x n) and copy bandwidth (bytes read + written per second)."""
    out = {}
    n = sizes["peak_n"]
    for name, dtype in (("matmul_fp32_flops", torch.float32), ("matmul_bf16_flops", torch.bfloat16)):
        a = torch.randn(n, n, device=device).to(dtype)
        out[name] = 2 * n**3 / _best(lambda: a @ a, device)
    src = torch.empty(sizes["copy_elems"], device=device)
    dst = torch.empty_like(src)
    out["copy_bytes_per_s"] = 2 * src.numel() * src.element_size() / _best(lambda: dst.copy_(src), device)
    return out


def work(tokens: int, batch: int, dim: int, width: int) -> dict:
    """Per layer of one batched run: flops, normals drawn, estimated peak memory of the tensors (bytes at float32
    size: the draws U, W and their product, the hidden layer before and after the activation, tokens,
    attention and saved states)."""
    flops = batch * (4 * tokens**2 * dim + 4 * tokens * width * dim)
    normals = batch * (2 * width * dim + width + dim)
    memory = 4 * batch * (3 * width * dim + 2 * tokens * width + 12 * tokens * dim)
    return {"flops": flops, "normals": normals, "memory_bytes": memory}


def _run(configs: list[ModelConfig], device: torch.device) -> float:
    _sync(device)
    start = time.perf_counter()
    run_group(configs, device)
    _sync(device)
    return time.perf_counter() - start


def time_setting(tokens: int, batch: int, dtype: str, rng: str, sizes: dict, device: torch.device) -> float:
    """Seconds per layer of the engine: (1 + K layers) minus 1 layer, over K (K = ``extra_layers``)."""
    k = sizes["extra_layers"]
    base = ModelConfig(tokens=tokens, dim=sizes["dim"], width=sizes["width"], dtype=dtype, rng=rng, su=0.1, sw=0.1)
    runs = {}
    for layers in (1, 1 + k):
        cfg = base.replace(layers=layers, horizon=0.05 * layers, save_every=layers)
        runs[layers] = [cfg.replace(seed=s) for s in range(batch)]
    _run(runs[1], device)  # warm-up: kernels, allocator
    return max(_run(runs[1 + k], device) - _run(runs[1], device), 0.0) / k


def bench_gpu(device: torch.device, tiny: bool, budget_bytes: float, max_seconds: float) -> dict:
    """The grid of settings (small to large), each timed with both sources, or skipped with the reason."""
    sizes = TINY if tiny else FULL
    rates = peaks(device, sizes)
    deadline = time.perf_counter() + max_seconds
    scratch = COUNTER_SCRATCH if device.type == "cuda" else 0
    rows = []
    for tokens in sizes["tokens"]:  # small to large: the time limit cuts the largest settings
        for batch in sizes["batches"]:
            for dtype in DTYPES:
                peak = rates["matmul_bf16_flops" if dtype == "bfloat16" else "matmul_fp32_flops"]
                w = work(tokens, batch, sizes["dim"], sizes["width"])
                w["memory_bytes"] += scratch
                row: dict = {"tokens": tokens, "batch": batch, "dtype": dtype, **w}
                layers = 2 * (2 + sizes["extra_layers"])  # warm-up, 1 and 1 + K layers, both sources
                estimate = layers * w["flops"] / peak + batch * SETUP_S_PER_RUN
                if w["memory_bytes"] > budget_bytes:
                    row["status"] = f"skipped: memory {w['memory_bytes'] / 2**30:.3g} GiB > budget"
                elif time.perf_counter() + estimate > deadline:
                    row["status"] = (
                        f"skipped: time (estimated {estimate:.0f} s, left {deadline - time.perf_counter():.0f} s)"
                    )
                else:
                    row["status"] = "ok"
                    for rng in RNGS:
                        seconds = time_setting(tokens, batch, dtype, rng, sizes, device)
                        row[f"{rng}_s_per_layer"] = seconds
                        row[f"{rng}_flops_fraction"] = w["flops"] / seconds / peak if seconds > 0 else None
                        row[f"{rng}_normals_per_s"] = w["normals"] / seconds if seconds > 0 else None
                rows.append(row)
    return {"machine": machine(device), "tiny": tiny, "rates": rates, "budget_bytes": budget_bytes, "rows": rows}


def _cell(row: dict, key: str, fmt: str) -> str:
    value = row.get(key)
    return "-" if value is None else format(value, fmt)


def table(result: dict) -> str:
    """The markdown report: the device and its measured peaks, then one row per setting."""
    r, m = result["rates"], result["machine"]
    lines = [
        f"# Engine on {m['gpu'] or m['cpu']} ({m['device']}, torch {m['torch']})",
        "",
        f"matmul peak fp32 {r['matmul_fp32_flops'] / 1e12:.2f} TFLOP/s, bf16 {r['matmul_bf16_flops'] / 1e12:.2f}"
        f" TFLOP/s; copy {r['copy_bytes_per_s'] / 1e9:.1f} GB/s; memory budget {result['budget_bytes'] / 2**30:.3g}"
        f" GiB; load average {result['conditions']['after']['load_average']}",
        "",
        "| N | runs | dtype | counter s/layer | loop s/layer | loop / counter | counter % of matmul peak"
        " | counter normals/s | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        c, g = row.get("counter_s_per_layer"), row.get("generator_s_per_layer")
        speedup = f"{g / c:.2f}x" if c and g else "-"
        share = row.get("counter_flops_fraction")
        lines.append(
            f"| {row['tokens']} | {row['batch']} | {row['dtype']} | {_cell(row, 'counter_s_per_layer', '.3g')} "
            f"| {_cell(row, 'generator_s_per_layer', '.3g')} | {speedup} | "
            f"{'-' if share is None else f'{100 * share:.1f}%'} | {_cell(row, 'counter_normals_per_s', '.3g')} "
            f"| {row['status']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description="GPU readiness: the engine, counter RNG against the generator loop")
    parser.add_argument("out", type=Path, help="folder for gpu.json and gpu.md")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a few tokens and runs (CPU check of the script)")
    parser.add_argument("--budget-gb", type=float, default=None, help="memory per setting [60%% of free GPU, 1 CPU]")
    parser.add_argument("--max-seconds", type=float, default=360.0, help="time for the grid after the peaks")
    parser.add_argument("--scaling-seconds", type=float, default=90.0, help="time for issue 42's parts after it")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():  # this machine: skipped, nothing written
        print(f"gpu benchmark skipped: --device {args.device} but torch sees no CUDA device", file=sys.stderr)
        return {"skipped": "no CUDA device"}
    torch.set_num_threads(1 if device.type == "cpu" else torch.get_num_threads())
    if args.budget_gb is not None:
        budget = args.budget_gb * 2**30
    else:
        budget = 0.6 * torch.cuda.mem_get_info(device)[0] if device.type == "cuda" else 2**30
    before = conditions()
    result = bench_gpu(device, args.tiny, budget, args.max_seconds)
    result["scaling"] = bench_scaling(device, args.tiny, args.scaling_seconds)  # issue 42's items 1-4
    result["conditions"] = {"before": before, "after": conditions(), "pid": os.getpid()}
    write_json(args.out / "gpu.json", result, checksum=True)
    atomic_write_text(args.out / "gpu.md", table(result) + scaling_table(result["scaling"]))
    return result


if __name__ == "__main__":
    main()
