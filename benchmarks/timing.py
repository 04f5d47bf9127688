"""Measuring tools of the benchmarks: wall time, extra peak memory, the machine, its sampling and matmul rates."""

from __future__ import annotations

import os
import platform
import resource
import time
from collections.abc import Callable
from typing import TypeVar

import torch

T = TypeVar("T")


def machine(device: torch.device) -> dict:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "device": str(device),
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "load_average_1min": os.getloadavg()[0],
    }


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _once(fn: Callable[[], T], device: torch.device) -> tuple[float, T]:
    _sync(device)
    start = time.perf_counter()
    out = fn()
    _sync(device)
    return time.perf_counter() - start, out


def timed(fn: Callable[[], T], device: torch.device, repeat: int = 1) -> tuple[float, T]:
    """Best wall time of ``repeat`` >= 1 calls (seconds) and the last result."""
    best, out = _once(fn, device)
    for _ in range(repeat - 1):
        seconds, out = _once(fn, device)
        best = min(best, seconds)
    return best, out


def _rss_mb(field: str) -> float:
    with open("/proc/self/status", encoding="utf-8") as fh:
        return next(float(line.split()[1]) / 1024 for line in fh if line.startswith(field))


def peak_memory(fn: Callable[[], T], device: torch.device) -> tuple[float, float, T]:
    """(seconds, extra peak memory in MB, result) of one call. CUDA: allocator peak; CPU: the rise of the
    resident-set high-water mark, reset before the call through /proc/self/clear_refs (Linux)."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
        seconds, out = timed(fn, device)
        return seconds, (torch.cuda.max_memory_allocated(device) - base) / 2**20, out
    try:
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as fh:
            fh.write("5")
        base = _rss_mb("VmRSS")
    except OSError:  # no reset possible: the high-water mark so far is the baseline
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    seconds, out = timed(fn, device)
    return seconds, max(0.0, _rss_mb("VmHWM") - base), out


def peaks(device: torch.device, quick: bool) -> dict:
    """This machine's sampling and matmul rates, measured now: the denominators of every floor."""
    g = torch.Generator(device=device).manual_seed(0)
    fills = 16  # in-place fills of a cache-sized buffer, as the engine draws: no allocation or page faults
    rates = {}
    for name, dtype in (("randn_fp32_per_s", torch.float32), ("randn_fp64_per_s", torch.float64)):
        buf = torch.empty(2**18, dtype=dtype, device=device)
        seconds, _ = timed(lambda: [buf.normal_(generator=g) for _ in range(fills)], device, repeat=5)
        rates[name] = fills * buf.numel() / seconds
    n = 1024 if quick else 2048
    for name, dtype in (("matmul_fp32_flops", torch.float32), ("matmul_bf16_flops", torch.bfloat16)):
        a = torch.randn(n, n, generator=g, device=device).to(dtype)
        seconds, _ = timed(lambda: a @ a, device, repeat=3)
        rates[name] = 2 * n**3 / seconds
    return rates


def floor_seconds(normals: float, flops: float, rates: dict) -> float:
    """The floor of a workload: drawing its normals plus its matmul flops at this machine's fp32 rates."""
    return normals / rates["randn_fp32_per_s"] + flops / rates["matmul_fp32_flops"]
