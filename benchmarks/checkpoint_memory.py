"""Backward-pass peak memory of a deep run with and without ``checkpoint=`` (docs/field.md, "Training through the
model"): the paper's model (THEORY section 1; N = 32 tokens in d = 16, MLP noise of width 64, float64) at
L = 64 and 1,024 layers, the loss the final tokens' sum of squares, ``backward()`` through the whole run.

Two measures, each in a fresh process per case:
- ``torch_peak_mib``: the peak of the bytes held by torch's CPU allocator during forward + backward, from the
  profiler's allocation events (``profile_memory=True``): exact and independent of the machine's load;
- ``rss_growth_mib``: the growth of the process's peak resident set (``ru_maxrss``) in an unprofiled run over a
  warm-up run at L = 8 (includes the allocator's slack and the autograd graph's own nodes; a cross-check).

    PYTHONPATH=src python benchmarks/checkpoint_memory.py [--out FILE.json]

Target (issue 43): with ``checkpoint=True`` (segments of ceil(sqrt(L)) layers) the peak grows at most 5x from
L = 64 to L = 1,024; without it, it grows like L (16x).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys

import torch

LAYERS = (64, 1024)
N, D, WIDTH = 32, 16, 64


def _case(layers: int, checkpoint: bool) -> None:
    import sdeformer as sdf
    from sdeformer.attention._softmax import SoftmaxAttention
    from sdeformer.dynamics._discrete import StochasticTransformer
    from sdeformer.noise._mlp import MLPNoise

    def once(depth: int) -> None:
        x0 = sdf.uniform_sphere(N, D, seed=0, dtype=torch.float64).requires_grad_(True)  # (N, d)
        model = StochasticTransformer(depth, 4.0, MLPNoise("relu", WIDTH, 0.1, 0.1), SoftmaxAttention(2.0))
        traj = model.run(x0, seed=1, saveat=depth, checkpoint=True if checkpoint else None)
        traj.final.pow(2).sum().backward()

    once(8)  # warm-up: imports, allocator pools
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    once(layers)  # unprofiled (the profiler's own event lists would dominate the RSS)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        once(layers)
    kineto = prof.profiler.kineto_results  # pyright: ignore[reportOptionalMemberAccess]
    events = sorted((e.start_ns(), e.nbytes()) for e in kineto.events() if e.name() == "[memory]")  # pyright: ignore
    live = peak = 0
    for _, nbytes in events:
        live += nbytes
        peak = max(peak, live)
    print(json.dumps({"torch_peak_mib": peak / 2**20, "rss_growth_mib": (rss1 - rss0) / 1024}))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--case", nargs=2, help=argparse.SUPPRESS)  # LAYERS 0|1: one case, in this process
    args = parser.parse_args()
    if args.case:
        _case(int(args.case[0]), bool(int(args.case[1])))
        return
    rows = []
    for checkpoint in (False, True):
        for layers in LAYERS:
            cmd = [sys.executable, __file__, "--case", str(layers), str(int(checkpoint))]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            rows.append({"layers": layers, "checkpoint": checkpoint, **json.loads(lines[-1])})
    for checkpoint in (False, True):
        a, b = (r for r in rows if r["checkpoint"] is checkpoint)
        growth = b["torch_peak_mib"] / a["torch_peak_mib"]
        print(f"checkpoint={checkpoint!s:5}: L={a['layers']} {a['torch_peak_mib']:.2f} MiB, L={b['layers']} "
              f"{b['torch_peak_mib']:.2f} MiB (x{growth:.1f}); RSS growth {a['rss_growth_mib']:.1f} / "
              f"{b['rss_growth_mib']:.1f} MiB")  # fmt: skip
    with open("/proc/loadavg", encoding="utf-8") as fh:
        load = fh.read().split()[0]
    meta = {"load": load, "cpu_capability": torch.backends.cpu.get_cpu_capability(), "torch": torch.__version__}
    print(json.dumps(meta))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"rows": rows, **meta, "sizes": {"N": N, "d": D, "width": WIDTH}}, fh, indent=1)


if __name__ == "__main__":
    main()
