"""Harmonic softmax attention against the exact path (issue 42, item 1), interleaved rounds.

    python -m benchmarks.harmonic --dim 2 --tokens 1000 10000 100000 --beta 1 4 [--exact-max 100000]

Contenders per (N, beta), one drift of the paper's attention on uniform tokens: ``exact32`` (the library's
default float32 path), ``exact64`` (the same path in float64) and ``harmonic`` (``method="harmonic"``, float64
sums, float32 tokens in and out as a run has them). Errors: the largest entry of the difference to exact float64
attention, on 512 query rows drawn at random (each row against all N keys, so N = 10^6 is checked too). Exact
paths are timed only up to ``--exact-max`` tokens. One JSON line per (N, beta) with the load average and
``torch.backends.cpu.get_cpu_capability()`` (set ``ATEN_CPU_CAPABILITY`` to compare kernels).
"""

from __future__ import annotations

import argparse
import json
import os

import torch

from benchmarks._timing import interleaved, spread
from sdeformer.attention._harmonic import degree
from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.core._sphere import uniform_sphere

ROWS = 512


def _reference(x: torch.Tensor, beta: float, rows: torch.Tensor) -> torch.Tensor:
    """Exact float64 attention of the query rows ``rows`` against all tokens ``(len(rows), d)``, 16 rows at a time
    (16 N float64 scores)."""
    xd = x / x.norm(dim=-1, keepdim=True)
    return torch.cat([torch.softmax(beta * (xd[r] @ xd.T), -1) @ xd for r in rows.split(16)])


def _row(n: int, d: int, beta: float, a: argparse.Namespace) -> dict:
    x = uniform_sphere(n, d, seed=n, dtype=torch.float32)
    xd = x.double()
    xd = xd / xd.norm(dim=-1, keepdim=True)  # unit in float64: the reference's tokens
    exact, harmonic = SoftmaxAttention(beta), SoftmaxAttention(beta, method="harmonic")
    contenders = {"harmonic": lambda: harmonic.drift(x)}
    if n <= a.exact_max:
        contenders["exact32"] = lambda: exact.drift(x)
    if n <= a.exact64_max:
        contenders["exact64"] = lambda: exact.drift(xd)
    record, last = interleaved(contenders, torch.device("cpu"), rounds=a.rounds, warmup=True)
    rows = torch.randperm(n, generator=torch.Generator().manual_seed(0))[:ROWS]
    ref = _reference(xd, beta, rows)
    errors = {"harmonic": float((harmonic.drift(xd)[rows] - ref).abs().max())}
    if "exact32" in last:
        errors["exact32"] = float((last["exact32"][rows].double() - ref).abs().max())
    sec = record["seconds"]
    out = {"dim": d, "tokens": n, "beta": beta, "degree": degree(d, beta)}
    out["median_s"] = {k: spread(v)["median"] for k, v in sec.items()}
    if "exact32" in sec:
        out["speedup_vs_exact32"] = spread([e / h for e, h in zip(sec["exact32"], sec["harmonic"])])["median"]
    out |= {"max_error_vs_exact64": errors, "load": record["load_average"], "rounds": a.rounds}
    out |= {"capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads()}
    return out | {"env_cap": os.environ.get("ATEN_CPU_CAPABILITY", "")}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dim", type=int, default=2)
    p.add_argument("--tokens", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--beta", type=float, nargs="+", default=[1.0, 4.0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--exact-max", type=int, default=100_000)
    p.add_argument("--exact64-max", type=int, default=20_000)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    for n in a.tokens:
        for beta in a.beta:
            print(json.dumps(_row(n, a.dim, beta, a)), flush=True)


if __name__ == "__main__":
    main()
