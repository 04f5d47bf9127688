"""``simulate``'s memory estimate against the peak resident memory it estimates (issue 42, item 3).

    python -m benchmarks.memory --tokens 2048 8192 32768 --saved 2 16 [--dim 3 --width 1024]
                                [--allocator fixed|default] [--repeats R]

Each run is a fresh process: its peak resident memory (VmHWM) above the state after imports, against
``memory_estimate`` of the same config. Prints one JSON line per configuration: the estimate, the peaks of its
``R`` runs, their median and the ratio estimate / median. ``fixed`` (the default) runs under glibc's
``MALLOC_MMAP_THRESHOLD_`` = ``FIXED_MMAP_THRESHOLD``: every allocation above it is its own mapping, returned when
freed, and identical runs peak within 1.5 % of each other; under glibc's default the threshold moves with the
frees, the heap keeps what it fragments, and identical runs peak up to 2.6x apart (docs/scaling.md, "Memory estimate").

    python -m benchmarks.memory --octree 131072 262144

The S^2 mean |cosine| octree (``_abscos``) alone, and ``simulate``'s observables of one saved state (d = 3), on
spread and clustered tokens (``benchmarks.observables``' clouds): peak above the state before the call (the
tokens made), in a fresh process each, against ``_abscos.working_bytes`` and the observables' share of
``run_bytes``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

PEAK = """
def peak():  # the process's peak resident memory (VmHWM), bytes
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
"""

SCRIPT = (
    PEAK
    + """
import torch
from sdeformer.config import ModelConfig
from sdeformer.experiments._simulate import memory_estimate, simulate
torch.set_num_threads(1)
cfg = ModelConfig(tokens={n}, dim={d}, width={m}, layers={layers}, save_every={every}, attention_method="{method}")
torch.zeros(1)
base = peak()
simulate(cfg)
print(memory_estimate(cfg), peak() - base)
"""
)


OCTREE = (
    PEAK
    + """
import sys, torch
sys.path.insert(0, ".")
from benchmarks.observables import _cloud
from sdeformer import _abscos
from sdeformer.experiments._simulate import _observables
torch.set_num_threads(1)
u = _cloud({n}, "{cloud}")
xs = torch.from_numpy(u)[None]
_observables(xs[:, :4096], 1.0)
_abscos.abs_cosine_sum(u[:4096])
base = peak()
_abscos.abs_cosine_sum(u) if "{what}" == "octree" else _observables(xs, 1.0)
print(peak() - base)
"""
)


def measure_octree(n: int, cloud: str, what: str, allocator: str = "fixed") -> int:
    """Peak bytes above the start of the octree alone or of one state's observables, in a fresh process."""
    code = OCTREE.format(n=n, cloud=cloud, what=what)
    cmd = [sys.executable, "-W", "ignore", "-c", code]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=allocator_env(allocator))
    return int(out.stdout.split()[-1])


FIXED_MMAP_THRESHOLD = 131072  # glibc's starting threshold, held fixed


def allocator_env(allocator: str) -> dict[str, str]:
    """The environment of a measured run: glibc's allocator with its mmap threshold held fixed, or as it comes."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}
    return env | {"MALLOC_MMAP_THRESHOLD_": str(FIXED_MMAP_THRESHOLD)} if allocator == "fixed" else env


def measure(
    n: int, d: int, m: int, layers: int, every: int, allocator: str = "fixed", method: str = "exact"
) -> tuple[int, int]:
    """(estimate, measured peak above the start) of one ``simulate`` run (``attention_method`` ``method``) in a
    fresh process."""
    code = SCRIPT.format(n=n, d=d, m=m, layers=layers, every=every, method=method)
    cmd = [sys.executable, "-W", "ignore", "-c", code]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=allocator_env(allocator))
    estimate, used = map(int, out.stdout.split()[-2:])
    return estimate, used


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tokens", type=int, nargs="+", default=[2048, 8192, 32768])
    p.add_argument("--saved", type=int, nargs="+", default=[2, 16])
    p.add_argument("--dim", type=int, default=3)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--allocator", choices=("fixed", "default"), default="fixed")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--octree", type=int, nargs="*", default=[])
    a = p.parse_args()
    if a.octree:
        from sdeformer._abscos import working_bytes

        for n in a.octree:
            for cloud in ("spread", "clustered"):
                row = {"tokens": n, "cloud": cloud, "working_bytes": working_bytes(n)}
                for what in ("octree", "observables"):
                    row[f"{what}_peak"] = measure_octree(n, cloud, what, a.allocator)
                print(json.dumps(row), flush=True)
        return
    for n in a.tokens:
        for saved in a.saved:
            runs = [measure(n, a.dim, a.width, saved - 1, 1, a.allocator) for _ in range(a.repeats)]
            estimate, peaks = runs[0][0], [used for _, used in runs]  # layers + 1 saved states (the start)
            row = {"tokens": n, "dim": a.dim, "width": a.width, "saved": saved, "allocator": a.allocator}
            row |= {"estimate": estimate, "peaks": peaks, "median": statistics.median(peaks)}
            print(json.dumps(row | {"ratio": round(estimate / statistics.median(peaks), 3)}), flush=True)


if __name__ == "__main__":
    main()
