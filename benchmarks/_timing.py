"""Measuring tools of the benchmarks: contenders timed interleaved over rounds (``interleaved``), the spread
of the rounds (``spread``) and the per-round ratio of two contenders (``ratio``), the conditions of a
measurement (load average, threads: ``conditions``), extra peak memory, the machine, its sampling and matmul
rates.

On a shared machine one run of a comparison is not evidence: the load of the other jobs moves a single
timing by 10-80x. So every benchmark runs its contenders A B C, B C A, C A B, ... (each round
starts with the next one, so no place in a round is favoured), reports min / median / max of each and the
ratio of two contenders within each round (both saw about the same load), and records the 1-minute load
average before every round and torch's thread count.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import torch

from sdeformer.core._threads import usable_cores

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
        "usable_cores": usable_cores(),
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


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; the platform's processor string elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def conditions() -> dict:
    """The machine and load a measurement ran under: the instruction set torch dispatches to
    (``get_cpu_capability``: DEFAULT, AVX2, AVX512; ``ATEN_CPU_CAPABILITY`` forces it), the CPU model, the 1, 5,
    15-minute load averages, torch's intra-op threads, the cores this process may use."""
    return {
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_model": cpu_model(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "torch_threads": torch.get_num_threads(),
        "usable_cores": usable_cores(),
    }


def spread(values: Sequence[float]) -> dict:
    """min / median / max of a benchmark's rounds."""
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def interleaved(
    contenders: Mapping[str, Callable[[], Any]], device: torch.device, rounds: int = 3, warmup: bool = False
) -> tuple[dict, dict[str, Any]]:
    """Time every contender once per round, interleaved: round i runs them in the order of ``contenders``
    rotated by i (A B C, B C A, ...). Returns (record, last result of each contender); record: ``rounds``,
    ``order`` (per round), ``seconds`` (per contender, per round), ``load_average`` (1-minute, before each
    round), ``torch_threads``, and with ``warmup`` the seconds of one untimed-for-the-result call of each
    contender made first (``warmup_seconds``: the first call in a process pays allocations and lazy imports)."""
    if rounds < 1:
        raise ValueError(f"rounds={rounds}: need at least one round")
    first = {name: _once(fn, device)[0] for name, fn in contenders.items()} if warmup else None
    names = list(contenders)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    last: dict[str, Any] = {}
    order, loads = [], []
    for i in range(rounds):
        turn = names[i % len(names) :] + names[: i % len(names)]
        order.append(turn)
        loads.append(round(os.getloadavg()[0], 2))
        for name in turn:
            s, last[name] = _once(contenders[name], device)
            seconds[name].append(s)
    record = {
        "rounds": rounds,
        "order": order,
        "seconds": seconds,
        "load_average": loads,
        "torch_threads": torch.get_num_threads(),
        **({"warmup_seconds": first} if first is not None else {}),
    }
    return record, last


def ratio(top: Sequence[float], bottom: Sequence[float] | float) -> dict:
    """The ratio of two contenders' seconds within each round of an ``interleaved`` record (``bottom`` may be
    a constant, e.g. a floor in seconds): ``per_round`` and its ``spread``."""
    below = [bottom] * len(top) if isinstance(bottom, (int, float)) else bottom
    per_round = [a / b for a, b in zip(top, below, strict=True)]
    return {"per_round": per_round, **spread(per_round)}


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
    tall = torch.randn(6, 2048, 64, generator=g, device=device)  # the conditional MLP's QR root (N = 64, m = 2048)
    seconds, _ = timed(lambda: torch.linalg.qr(tall, mode="r"), device, repeat=5)
    rates["qr_fp32_flops"] = 6 * qr_flops(2048, 64) / seconds
    return rates


def qr_flops(rows: int, cols: int) -> float:
    """Flops of a Householder QR (R only) of a rows x cols matrix, rows >= cols: 2 rows cols^2 - 2 cols^3 / 3."""
    return 2.0 * rows * cols * cols - 2.0 * cols**3 / 3


def floor_seconds(normals: float, flops: float, rates: dict, qr: float = 0.0) -> float:
    """The floor of a workload: drawing its normals, its matmul flops and its QR flops (``qr``) at this machine's
    fp32 rates (LAPACK's QR of a tall matrix runs at a fraction of the matmul rate: it is priced at its own)."""
    return normals / rates["randn_fp32_per_s"] + flops / rates["matmul_fp32_flops"] + qr / rates["qr_fp32_flops"]


def finish(result: dict, out: Path | None) -> None:
    """A benchmark module's last step: print the load it ran under, and write ``result`` as JSON to ``out``
    (atomically, with its sha256 in ``_checksums/`` like every result: ``io._formats.read_json`` verifies it;
    None: not written)."""
    print(f"load average before: {result['conditions']['load_average']}, torch threads {torch.get_num_threads()}")
    if out is not None:
        from sdeformer.io._atomic import atomic_write_text

        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out, json.dumps(result, indent=1), checksum=True)
