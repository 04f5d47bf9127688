"""Sweep engine throughput: runs/s of the local executor vs a loopback Dask LocalCluster with 1 and 2 workers.

Default: one sweep of 1,024 small runs (32 tasks of 32 runs) run four ways, each into a fresh folder: local with
1 and with 2 torch threads, Dask with 1 and with 2 single-threaded workers. Reports
runs/s, Dask overhead per task at 1 worker (against local at 1 thread, the same work per core), the 2-worker
speed-up, cluster start-up time, and checks that all four tables are equal bit for bit.

``--spec FILE --seeds K``: time an example spec cut to its first K seeds (every cell kept, so the mix of
costs is the full spec's) and extrapolate to all its seeds; reports peak memory and table size on disk.

    python -m benchmarks.sweeps            # writes benchmarks/results/sweeps.json
    python -m benchmarks.sweeps --spec examples/sweeps/noise_phase_1e4.yaml --seeds 2 --executor dask
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sdeformer.config import load_config_file
from sdeformer.store import write_json
from sdeformer.sweeps import DaskExecutor, LocalExecutor, parse_spec, read, run

RESULTS = Path(__file__).resolve().parent / "results" / "sweeps.json"
SWEEP = {
    "name": "bench",
    "base": {"tokens": 16, "dim": 8, "width": 256, "layers": 40, "horizon": 2.0, "su": 0.1, "sw": 0.1},
    "axes": {"beta": {"linspace": [0.5, 4.0, 8]}, "attention_scale": [1.0, 0.5, 0.0, -1.0]},
    "seeds": 32,
    "observables": ["energy", "mean_cos", "clusters"],
    "times": [1.0, 2.0],
    "batch": 32,
}


def timed(spec, executor, folder: Path, repeat: int = 1) -> dict[str, Any]:
    """Best of ``repeat`` runs of the whole sweep, each into a fresh folder."""
    walls = []
    for i in range(repeat):
        start = time.perf_counter()
        out = run(spec, folder / str(i), executor)
        walls.append(time.perf_counter() - start)
    wall = min(walls)
    return {
        "runs": out["ran"],
        "tasks": out["tasks"],
        "wall_s": round(wall, 3),
        "runs_per_s": round(out["ran"] / wall, 2),
        "walls_s": [round(w, 3) for w in walls],
    }


def throughput(seeds: int, repeat: int) -> dict[str, Any]:
    """The four executors on the benchmark sweep (best of ``repeat`` each)."""
    spec = parse_spec({**SWEEP, "seeds": seeds})
    results: dict[str, Any] = {}
    tables = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, threads in (("local_1_thread", 1), ("local_2_threads", 2)):
            results[name] = timed(spec, LocalExecutor(threads), Path(tmp) / name, repeat)
            tables.append(read(Path(tmp) / name / "0"))
        for workers in (1, 2):
            start = time.perf_counter()
            with DaskExecutor(workers) as ex:
                startup = time.perf_counter() - start
                name = f"dask_{workers}_worker"
                results[name] = {**timed(spec, ex, Path(tmp) / name, repeat), "startup_s": round(startup, 2)}
            tables.append(read(Path(tmp) / name / "0"))
    cols = [c for c in tables[0].columns if c != "wall_s"]
    results["tables_equal"] = all(t[cols].equals(tables[0][cols]) for t in tables[1:])
    local, one, two = results["local_1_thread"], results["dask_1_worker"], results["dask_2_worker"]
    overhead = (one["wall_s"] - local["wall_s"]) / one["tasks"]
    results["dask_overhead_per_task_s"] = round(overhead, 4)
    results["dask_overhead_fraction_of_local"] = round(overhead * one["tasks"] / local["wall_s"], 4)
    results["speedup_2_vs_1_worker"] = round(one["wall_s"] / two["wall_s"], 3)
    return results


def spec_fraction(path: Path, seeds: int, executor: str, workers: int) -> dict[str, Any]:
    """Time ``path`` cut to its first ``seeds`` seeds; extrapolate linearly in the number of runs."""
    data = load_config_file(path)
    full = parse_spec(data)
    cut = parse_spec({**data, "seeds": list(full.seeds[:seeds])})
    with tempfile.TemporaryDirectory() as tmp:
        if executor == "dask":
            start = time.perf_counter()
            with DaskExecutor(workers) as ex:
                startup = time.perf_counter() - start
                result = timed(cut, ex, Path(tmp))
        else:
            startup, result = 0.0, timed(cut, LocalExecutor(1), Path(tmp))
        size = sum(p.stat().st_size for p in (Path(tmp) / "0" / "table").glob("*.parquet"))
    factor = len(full.seeds) / len(cut.seeds)
    peak = max(resource.getrusage(r).ru_maxrss for r in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024
    return {
        "spec": str(path),
        "executor": executor,
        "workers": workers if executor == "dask" else None,
        "seeds_run": len(cut.seeds),
        "seeds_full": len(full.seeds),
        **result,
        "startup_s": round(startup, 2),
        "extrapolated_full_wall_s": round(result["wall_s"] * factor + startup, 1),
        "table_bytes": size,
        "extrapolated_table_bytes": int(size * factor),
        "peak_rss_mib_largest_process": round(peak, 1),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds (default 32: 1,024 runs; with --spec: 1)")
    parser.add_argument("--spec", type=Path, default=None, help="time this spec cut to --seeds seeds instead")
    parser.add_argument("--executor", choices=("local", "dask"), default="dask")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs per executor")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    if args.spec is not None:
        result = spec_fraction(args.spec, args.seeds or 1, args.executor, args.workers)
        key = f"spec:{args.spec.stem}:{args.executor}"
    else:
        result = throughput(args.seeds or SWEEP["seeds"], args.repeat)
        key = "throughput"
    result["load_average_before_after"] = [round(load[0], 2), round(os.getloadavg()[0], 2)]
    result["cpus"] = os.cpu_count()
    saved = json.loads(args.out.read_text()) if args.out.exists() else {}
    saved[key] = result
    write_json(args.out, saved)
    json.dump({key: result}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return result


if __name__ == "__main__":
    main()
