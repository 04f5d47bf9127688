"""``sdeformer peer``'s up-front time estimate against the run's own time (docs/peers.md, "Sizes and refusals"):
for four phase diagrams, ``peers._progress.estimate`` (two calibrated runs of the peer's own code), then the run
itself, in one process; prints per case the steps, the estimate, the run's seconds, their ratio, the calibration's
cost and the load average before and after.

    PYTHONPATH=src python benchmarks/peer_estimate.py
"""

from __future__ import annotations

import json
import os
import time

import torch

from sdeformer.peers import _progress, run

CASES = [
    ("glpr", {"batch": 64, "betas": 3, "maxtime": 0.3}),  # small steps: glpr's shrink with beta (no softmax)
    ("simuformer", {"batch": 64, "betas": 3, "maxtime": 5.0}),
    ("glpr", {"use_softmax": True, "betas": 4, "maxtime": 3.0}),  # glpr's default shapes, softmax
    ("simuformer", {"betas": 2, "maxtime": 5.0}),  # simuformer's default shapes
]


def main() -> None:
    for name, options in CASES:
        load = os.getloadavg()[0]
        began = time.perf_counter()
        total, estimate = _progress.estimate(name, None, options)
        calibration = time.perf_counter() - began
        began = time.perf_counter()
        run(name, **options)
        seconds = time.perf_counter() - began
        row = {"peer": name, "options": options, "steps": total, "estimate_s": round(estimate, 2)}
        row |= {"run_s": round(seconds, 2), "ratio": round(estimate / seconds, 2)}
        row |= {"calibration_s": round(calibration, 2), "load": [load, os.getloadavg()[0]]}
        print(json.dumps(row), flush=True)
    print("cpu capability", torch.backends.cpu.get_cpu_capability())


if __name__ == "__main__":
    main()
