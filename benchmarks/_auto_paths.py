"""Every path the library chooses by itself from a size, each against the path it replaces, at sizes where it is
chosen (docs/benchmarks.md, "Paths chosen automatically"): a path chosen automatically must be faster under
every instruction set torch dispatches to, so run this once per ``ATEN_CPU_CAPABILITY`` (default, avx2, avx512).

- ``attention._softmax.SMALL_RUN``: a run of at most 16 keys (scores no larger than its tokens) takes three plain
  operations (bmm, softmax, bmm) on the runs stacked as (B, N, .) instead of the fused kernel
  (``scaled_dot_product_attention``): one run, and a batch of 4,096 runs, of N = 4 and 16, d = 4;
- ``noise._mlp.root_pays`` (only with ``sampling: conditional``): a stage drawn through the N x N QR root where it
  saves normals, against the direct product: N = 4, d + 1 = 65 columns of width m = 2,048, a batch of 64.

Reported per case: seconds of each (min / median / max over interleaved rounds) and chosen / replaced per round.

    python -m benchmarks auto_paths [--rounds 7] [--out FILE]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

from sdeformer.attention._softmax import _small, _stacked
from sdeformer.core._splitmix import SplitMixStreams
from sdeformer.noise._mlp import MLPNoise, root_pays

from ._timing import conditions, finish, interleaved, ratio, spread

REPEAT = 20  # calls per timed contender: each call is microseconds


def _repeat(fn: Callable[[], object]) -> Callable[[], object]:
    return lambda: [fn() for _ in range(REPEAT)]


def _fused(q: torch.Tensor) -> torch.Tensor:
    """The fused kernel on the runs as (B, 1, N, d): what ``softmax_attention`` does above ``SMALL_RUN``."""
    q4 = q.reshape(-1, 1, *q.shape[-2:])
    return F.scaled_dot_product_attention(q4, q4, q4, scale=1.0).reshape(q.shape)


def small_run_cases() -> dict[str, dict[str, Callable[[], object]]]:
    cases = {}
    for runs, n in ((1, 4), (1, 16), (4096, 4), (4096, 16)):
        x = torch.randn(runs, n, 4, generator=torch.Generator().manual_seed(0))
        assert _small(n, 4, 4)  # the sizes where the small-run path is taken
        cases[f"SMALL_RUN: {runs} run(s) of N {n}, d 4"] = {
            "chosen": _repeat(lambda x=x: _stacked(x, x, x)),
            "replaced": _repeat(lambda x=x: _fused(x)),
        }
    return cases


def root_cases() -> dict[str, dict[str, Callable[[], object]]]:
    n, d, m, runs = 4, 64, 2048, 64
    assert root_pays(n, d + 1, m)
    y = torch.nn.functional.normalize(torch.randn(runs, n, d, generator=torch.Generator().manual_seed(0)), dim=-1)
    mlp = MLPNoise("relu", m, 0.1, 0.1, sampling="conditional")
    f = torch.cat([y / d**0.5, torch.full((runs, n, 1), 0.1)], dim=-1)  # (B, N, d + 1)

    def direct() -> torch.Tensor:
        return f @ SplitMixStreams(list(range(runs)), (runs,)).randn((d + 1, m))

    def root() -> torch.Tensor:
        return mlp._gaussian_columns(f, m, SplitMixStreams(list(range(runs)), (runs,)))

    return {f"root_pays: {runs} runs, N {n}, d + 1 = {d + 1}, m {m}": {"chosen": root, "replaced": direct}}


def bench_auto_paths(rounds: int = 7) -> dict:
    """Each case's contenders interleaved; chosen / replaced per round."""
    out: dict = {"conditions": conditions(), "rounds": rounds, "repeat": REPEAT, "cases": {}}
    for name, pair in {**small_run_cases(), **root_cases()}.items():
        record, _ = interleaved(pair, torch.device("cpu"), rounds, warmup=True)
        seconds = record["seconds"]
        out["cases"][name] = {
            "seconds": {k: spread(v) for k, v in seconds.items()},
            "chosen_over_replaced": ratio(seconds["chosen"], seconds["replaced"]),
            "record": record,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    result = bench_auto_paths(args.rounds)
    print(result["conditions"])
    for name, case in result["cases"].items():
        r = case["chosen_over_replaced"]
        s = case["seconds"]
        print(
            f"{name}: chosen {s['chosen']['median']:.2e} s, replaced {s['replaced']['median']:.2e} s; "
            f"chosen / replaced {r['min']:.3g} / {r['median']:.3g} / {r['max']:.3g}"
        )
    finish(result, args.out)


if __name__ == "__main__":
    main()
