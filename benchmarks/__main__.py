"""``python -m benchmarks PROGRAM [ARGS]`` (from the repository root): one benchmark program, run with its own
arguments (``python -m benchmarks peers --rounds 5``; ``python -m benchmarks PROGRAM --help``). ``suite`` runs the
parts of ``benchmarks._run`` in one go (``make bench``); the others time what the suite does not
(docs/benchmarks.md)."""

from __future__ import annotations

import runpy
import sys

PROGRAMS = {
    "suite": "the parts in one run: grid, phase, sde, attention, throughput, precision, rng, spde (make bench)",
    "auto_paths": "every path chosen automatically by size, against the path it replaces (docs/benchmarks.md)",
    "gpu": "GPU readiness: the engine from 64 to 65,536 tokens beside the device's peaks (benchmarks/gpu.sh)",
    "peers": "sdeformer against the peers' public scripts, interleaved rounds (docs/peers.md)",
    "real": "sdeformer real: the hooks' cost and the default run's time (docs/real.md)",
    "small_runs": "many small runs in one batch against the randn floor of their normals (docs/benchmarks.md)",
    "spde": "the density solver against particle clouds at matched error (docs/spde.md)",
    "sweeps": "the sweep executors, local against Dask (docs/scaling.md)",
}


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in PROGRAMS:
        listing = "\n".join(f"  {name:<11} {doc}" for name, doc in PROGRAMS.items())
        print(f"usage: python -m benchmarks PROGRAM [ARGS]\nprograms:\n{listing}", file=sys.stderr)
        raise SystemExit(0 if argv[:1] in (["-h"], ["--help"]) else 2)
    sys.argv = [f"python -m benchmarks {argv[0]}", *argv[1:]]
    runpy.run_module(f"benchmarks._{argv[0]}", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
