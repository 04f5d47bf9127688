"""What a time limit on every plugin call costs the time loop (docs/extending.md, "What sdeformer checks at run
time"): the paper's discrete model (THEORY section 1) with a plugin's noise part (an ``increment`` drawing
Gaussian increments, one call per layer), N = 8 tokens in d = 3, float32, a small run so that the per-call cost is
as large a share of a step as it gets. Three contenders, timed interleaved (``_timing.interleaved``):

- ``none``: no limit on the calls (the watchdog not armed; the part's first call is still checked);
- ``watchdog``: the default, ``_plugin_watchdog`` armed (a SIGALRM tick every second, no wrapper on the calls);
- ``per_call_alarm``: the alternative, each ``increment`` call run under ``plugins.limited``'s own one-shot SIGALRM
  (set and cleared around every call, ``os._exit`` swapped).

    PYTHONPATH=src python benchmarks/plugin_time_limit.py [--layers 4000] [--rounds 7] [--out FILE.json]

Reports seconds per round, the per-round ratios to ``none``, the cost per call in microseconds, and the cost of
one watchdog tick (its handler on a 40-frame stack) as a share of the second between two ticks.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
from _timing import conditions, interleaved, ratio, spread

PLUGIN = """
from sdeformer.registry import NOISES


class Gauss:
    @classmethod
    def from_config(cls, p):
        return cls()

    def increment(self, y, dt, source):
        return source.randn(y.shape[-2:], y.dtype) * dt ** 0.5


NOISES.register("bench_gauss", Gauss, random=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--layers", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(1)

    import sdeformer as sdf
    from sdeformer import _plugin_watchdog as watchdog, plugins

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench_gauss.py"
        path.write_text(PLUGIN)
        plugins.load_plugins([str(path)])
        cfg = sdf.ModelConfig(tokens=8, dim=3, layers=args.layers, noise="bench_gauss", seed=0)

        def build(per_call: bool):
            model, x0 = cfg.build(), cfg.initial_tokens()
            model.run(x0, seed=0, saveat=args.layers, stop=1)  # the first (checked) call, outside the timing
            if per_call:
                noise = _noise(model)
                plain = type(noise).increment

                def limited_increment(*a, **k):
                    with plugins.limited(str(path), "increment()"):
                        return plain(noise, *a, **k)

                noise.increment = limited_increment

            def go():
                model.run(x0, seed=0, saveat=args.layers)

            return go

        contenders = {
            "none": build(per_call=False),
            "watchdog": build(per_call=False),
            "per_call_alarm": build(per_call=True),
        }
        contenders = {name: _armed_for(name, fn, watchdog) for name, fn in contenders.items()}
        record, _ = interleaved(contenders, torch.device("cpu"), rounds=args.rounds, warmup=True)
    seconds = record["seconds"]
    tick_us = _tick_cost(watchdog, model_stack_depth=40)
    result = {
        "tick_us": tick_us,
        "tick_share_of_time": tick_us["median"] * 1e-6 / 1.0,  # one tick a second at the default TIMEOUT_S
        "conditions": conditions(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "layers": args.layers,
        "record": record,
        "per_step_us": {n: spread([s / args.layers * 1e6 for s in v]) for n, v in seconds.items()},
        "ratio_to_none": {n: ratio(seconds[n], seconds["none"]) for n in ("watchdog", "per_call_alarm")},
        "extra_us_per_call": {
            n: spread([(a - b) / args.layers * 1e6 for a, b in zip(seconds[n], seconds["none"], strict=True)])
            for n in ("watchdog", "per_call_alarm")
        },
    }
    import json

    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text)
    keys = ("cpu_capability", "per_step_us", "ratio_to_none", "extra_us_per_call", "tick_us", "tick_share_of_time")
    print(json.dumps({k: result[k] for k in keys}))
    print("load", result["conditions"])


def _tick_cost(watchdog, model_stack_depth: int, calls: int = 2000) -> dict:
    """Microseconds of one watchdog tick (its SIGALRM handler, called directly) interrupting a stack of
    ``model_stack_depth`` frames of sdeformer-like code with no plugin call in it (the common case), ``spread`` of 5."""
    import sys
    import time

    def deep(n: int) -> dict:
        if n:
            return deep(n - 1)
        frame, out = sys._getframe(), []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(calls):
                watchdog._tick(14, frame)
            out.append((time.perf_counter() - t0) / calls * 1e6)
        return spread(out)

    return deep(model_stack_depth)


def _noise(model):
    """The model's noise part (the one plugin part the run calls each layer)."""
    return model.noise


def _armed_for(name: str, fn, watchdog):
    """``fn`` run with the watchdog armed only for the ``watchdog`` contender (one process holds all three)."""

    def go():
        if name == "watchdog":
            watchdog._arm()
        else:
            watchdog._disarm()
        try:
            fn()
        finally:
            watchdog._disarm()

    return go


if __name__ == "__main__":
    main()
