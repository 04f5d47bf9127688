"""Seconds per model layer against N, exact against harmonic attention (issue 42, item 4).

    python -m benchmarks.layers --dim 2 --tokens 1000 10000 100000 1000000 --layers 3

Each (N, method): ``ModelConfig(tokens=N, dim=d, width=m, attention_method=METHOD)``'s model run for ``--layers``
layers from its initial tokens (saving only the last state: no observables), the wall time divided by the
layers. Exact is timed up to ``--exact-max`` tokens. One JSON line per (N, method) with the load average and
``torch.backends.cpu.get_cpu_capability()``. The runs of a row are one after another (not interleaved: a layer
at N = 10^6 is seconds to minutes), so the load beside each matters.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

from sdeformer.config import ModelConfig


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dim", type=int, default=2)
    p.add_argument("--tokens", type=int, nargs="+", default=[1000, 10000, 100000, 1000000])
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--exact-max", type=int, default=100_000)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    for n in a.tokens:
        for method in ("harmonic", "exact") if n <= a.exact_max else ("harmonic",):
            cfg = ModelConfig(tokens=n, dim=a.dim, width=a.width, layers=a.layers, attention_method=method)
            model, x = cfg.build(), cfg.initial_tokens()
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            model.run(x, seed=1, saveat=a.layers)
            per_layer = (time.perf_counter() - t0) / a.layers
            row = {"dim": a.dim, "tokens": n, "width": a.width, "method": method, "seconds_per_layer": per_layer}
            row |= {"layers": a.layers, "load": load, "capability": torch.backends.cpu.get_cpu_capability()}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
