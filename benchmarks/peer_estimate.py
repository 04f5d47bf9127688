"""``sdeformer peer``'s up-front estimates against the run (docs/peers.md, "Sizes and refusals"; issue 41 item 8):
for three or more cases of every preset, its plan (``peers._estimate.plan``), the time estimate from two
calibrated runs of the preset's own loop (``peers._estimate.estimate``), then the run itself; each case in its own
process, so that its peak resident memory is its own. Prints per case the steps, the estimate, the run's seconds,
their ratio, the calibration's cost, the memory estimate against the peak resident memory the run added (measured
from after the calibrated runs, which import and warm up what it uses), and the load average before and after;
then the CPU capability.

    PYTHONPATH=src python benchmarks/peer_estimate.py            # every case (about 3 min at load 3)
    PYTHONPATH=src python benchmarks/peer_estimate.py --case 4   # one case, in this process
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

CASES = [
    ("litm", None, {"part": "particles"}),  # rk4, the peer's step: 4000 steps
    ("litm", None, {"part": "particles", "scheme": "geodesic"}),
    ("litm", None, {"part": "particles", "scheme": "projected"}),
    ("dotm", None, {"part": "kinetic"}),  # kinetic.py: 4000 steps of 5 tokens
    ("dotm", [8.0], {"part": "kinetic"}),
    ("dotm", [500.0, 1000.0, 2000.0], {}),  # the staircase: at most PATH_BOUND / ds steps a beta
    ("bruno", [20.0], {}),  # particles: 100 steps of 1000 tokens a beta
    ("bruno", [5.0, 10.0], {}),
    ("bruno", None, {"part": "pde", "as_published": True, "points": 1001, "maxtime": 0.05}),  # published PDE
    ("bruno", [5.0], {"part": "pde", "as_published": True, "points": 2001, "maxtime": 0.1}),  # 1,591 rows
    ("bruno", None, {"part": "pde"}),  # the density solver
    ("glpr", None, {"batch": 64, "betas": 3, "maxtime": 0.3}),  # small steps: glpr's shrink with beta
    ("glpr", None, {"use_softmax": True, "betas": 4, "maxtime": 3.0}),  # glpr's default shapes, softmax
    ("glpr", None, {"batch": 256, "tokens": 16, "betas": 2, "maxtime": 0.2}),
    ("simuformer", None, {"batch": 64, "betas": 3, "maxtime": 5.0}),
    ("simuformer", None, {"betas": 2, "maxtime": 5.0}),  # simuformer's default shapes
    ("simuformer", None, {"batch": 128, "tokens": 32, "heads": 2, "betas": 2, "maxtime": 10.0}),
]


def _rss(field: str) -> int:
    """``VmRSS`` (now) or ``VmHWM`` (the peak since the last ``_reset``) of this process, bytes (Linux)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))


def _reset() -> None:
    """The peak resident memory back to the current one (Linux >= 4.0: ``clear_refs`` 5)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def one(index: int) -> dict:
    """Case ``index``: plan, estimate, run, in this process."""
    from sdeformer.experiments._commands.bounds import peer_bytes
    from sdeformer.peers import module, run
    from sdeformer.peers._estimate import estimate, plan

    name, beta, options = CASES[index]
    load = os.getloadavg()[0]
    began = time.perf_counter()
    p = plan(name, beta, options)
    seconds = estimate(p)
    calibration = time.perf_counter() - began
    _reset()  # the run's own peak: the calibrated runs have imported and warmed up what it uses
    before = _rss("VmRSS")
    began = time.perf_counter()
    run(name, beta=beta, **options)
    took = time.perf_counter() - began
    peak = _rss("VmHWM") - before
    if name in ("simuformer", "glpr"):
        sizes = {k: v for k, v in options.items() if k != "seed"}
        memory = peer_bytes(name, {**module(name).settings(**sizes), **({"betas": len(beta)} if beta else {})})
    else:
        memory = p.memory
    row = {"peer": name, "beta": beta, "options": options, "steps": sum(p.runs), "exact": p.exact}
    row |= {"estimate_s": round(seconds, 2), "run_s": round(took, 2), "ratio": round(seconds / took, 2)}
    row |= {"calibration_s": round(calibration, 2), "memory_MiB": round(memory / 2**20, 2)}
    row |= {"peak_added_MiB": round(peak / 2**20, 2), "load": [load, os.getloadavg()[0]]}
    return row


def main() -> None:
    if "--case" in sys.argv:
        print(json.dumps(one(int(sys.argv[sys.argv.index("--case") + 1]))), flush=True)
        return
    for index in range(len(CASES)):
        out = subprocess.run([sys.executable, __file__, "--case", str(index)], capture_output=True, text=True)
        print(out.stdout.strip() or out.stderr.strip().splitlines()[-1], flush=True)
    import torch

    print("cpu capability", torch.backends.cpu.get_cpu_capability())


if __name__ == "__main__":
    main()
