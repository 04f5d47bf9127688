"""Sweep engine throughput: runs/s of the local executor vs a loopback Dask LocalCluster with 1 and 2 workers.

Default: one sweep of 1,024 small runs (32 tasks of 32 runs), each time into a fresh folder. Both clusters
are started first (start-up time reported) and every executor runs one small warm-up sweep; then the
executors take turns, ``--repeat`` rounds of: local (1 torch thread), Dask 1 worker, Dask 1 worker shipping
one task per call (the executor before it grouped tasks into calls), Dask 2 workers, each round starting
with the next one. Taking turns, rather than one executor's repeats after the other's, exposes all of them
to the same load on a shared machine.

Reported per executor: the best wall time (runs/s) and all of them; the seconds inside the tasks
(simulation, observables, part written: ``total_s`` of their summaries); ``between_tasks_ms_per_task``, the
worker time outside any task per task (median of the rounds: Dask's messages and latency on the worker's
critical path, without the load's noise in the tasks' own time, which moves by 30% between rounds on a busy
machine); the CPU seconds of the driver process and of the cluster's processes (the round with the least).
Then the ratios Dask(1)/local (best walls, and the median of the per-round ratios), Dask's overhead per task
from the best walls and from the time between tasks (as fractions of local), its CPU beyond local's, the
2-worker speed-up Dask(1)/Dask(2), the load average before and after (and ``uptime``), and whether all tables
are equal bit for bit. Local with 2 torch threads runs once, after the rounds (``--no-local-2-threads`` skips
it: on a busy 2-core machine its spin-waiting threads made it 14x slower).

``--spec FILE --seeds K``: time an example spec cut to its first K seeds (every cell kept, so the mix of
costs is the full spec's) and extrapolate to all its seeds; reports peak memory and table size on disk.

    python -m benchmarks sweeps            # writes benchmarks/results/sweeps.json
    python -m benchmarks sweeps --spec examples/sweeps/noise_phase_1e4.yaml --seeds 2 --executor dask
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from sdeformer.config import load_config_file
from sdeformer.io._damage import recover
from sdeformer.io._formats import read_json, write_json
from sdeformer.sweeps import DaskExecutor, LocalExecutor, parse_spec, read, run

from ._timing import conditions, ratio, spread

RESULTS = Path("benchmarks") / "results" / "sweeps.json"  # relative to the working folder (a checkout: its results)
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
    """Best of ``repeat`` >= 1 runs of the whole sweep, each into a fresh folder (with their spread)."""
    walls, out = [], {}
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
        "walls_spread_s": spread(walls),
    }


def _cpu_seconds(processes: list[psutil.Process]) -> float:
    """User + system CPU seconds of ``processes`` so far (one that has exited counts 0)."""
    total = 0.0
    for proc in processes:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def _cluster(workers: int) -> tuple[DaskExecutor, list[psutil.Process], float]:
    """A loopback cluster, its processes (nannies, workers) and its start-up time."""
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    start = time.perf_counter()
    ex = DaskExecutor(workers)
    startup = time.perf_counter() - start
    return ex, [p for p in me.children(recursive=True) if p.pid not in before], startup


class Recording:
    """An executor's ``map`` that also records, per sweep, its wall time and the tasks' own times."""

    def __init__(self, executor: Any, workers: int = 1):
        self.executor, self.workers = executor, workers
        self.map_wall_s, self.in_tasks_s = 0.0, 0.0

    def map(self, tasks, out, observables):
        start, inside = time.perf_counter(), 0.0
        for summary in self.executor.map(tasks, out, observables):
            inside += summary["total_s"]
            yield summary
        self.map_wall_s, self.in_tasks_s = time.perf_counter() - start, inside

    def between_tasks_s(self) -> float:
        """Worker time not spent in a task (Dask's messages, idle workers) during the last ``map``."""
        return self.workers * self.map_wall_s - self.in_tasks_s


def throughput(seeds: int, repeat: int, local_2_threads: bool = True) -> dict[str, Any]:
    """The executors on the benchmark sweep, taking turns ``repeat`` times (see the module docstring)."""
    spec = parse_spec({**SWEEP, "seeds": seeds})
    warm = parse_spec({**SWEEP, "seeds": 2})
    names = ("local_1_thread", "dask_1_worker", "dask_1_worker_one_task_per_call", "dask_2_worker")
    walls: dict[str, list[float]] = {n: [] for n in names}
    cpus: dict[str, list[tuple[float, float]]] = {n: [] for n in names}  # (driver, cluster) CPU seconds
    between: dict[str, list[float]] = {n: [] for n in names}  # worker seconds outside the tasks
    inside: dict[str, list[float]] = {n: [] for n in names}  # seconds in the tasks (simulate, observables, part)
    info: dict[str, Any] = {}
    tables = []
    loads: list[float] = []  # 1-minute load average before each round
    results_2: dict[str, Any] = {}
    one, one_procs, one_startup = _cluster(1)
    two, two_procs, two_startup = _cluster(2)
    executors: dict[str, tuple[Recording, list[psutil.Process], int | None]] = {
        "local_1_thread": (Recording(LocalExecutor(1)), [], None),
        "dask_1_worker": (Recording(one), one_procs, None),
        "dask_1_worker_one_task_per_call": (Recording(one), one_procs, 1),  # the executor before calls grouped tasks
        "dask_2_worker": (Recording(two, 2), two_procs, None),
    }
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(-1, repeat):  # round -1: a small warm-up sweep (first-task costs are not throughput)
                if i >= 0:
                    loads.append(round(os.getloadavg()[0], 2))
                for k in range(len(names)):  # each round starts with the next executor: no place in it is favoured
                    name = names[(k + max(i, 0)) % len(names)]
                    rec, procs, per_call = executors[name]
                    if isinstance(rec.executor, DaskExecutor):
                        rec.executor.per_call = per_call
                    folder = Path(tmp) / name / str(i)
                    driver, cluster, start = time.process_time(), _cpu_seconds(procs), time.perf_counter()
                    out = run(warm if i < 0 else spec, folder, rec)
                    wall = time.perf_counter() - start
                    if i < 0:
                        continue
                    walls[name].append(wall)
                    cpus[name].append((time.process_time() - driver, _cpu_seconds(procs) - cluster))
                    between[name].append(rec.between_tasks_s())
                    inside[name].append(rec.in_tasks_s)
                    info[name] = {"runs": out["ran"], "tasks": out["tasks"]}
                    if i == 0:
                        tables.append(read(folder))  # the first table is local's (round 0 starts with it)
            if local_2_threads:
                results_2 = timed(spec, LocalExecutor(2), Path(tmp) / "local_2_threads")
                tables.append(read(Path(tmp) / "local_2_threads" / "0"))
    finally:
        one.close()
        two.close()
    results: dict[str, Any] = {}
    for name in names:
        best, tasks = min(walls[name]), info[name]["tasks"]
        driver, cluster = min(cpus[name], key=sum)  # the round with the least CPU in all
        results[name] = {
            **info[name],
            "wall_s": round(best, 3),
            "runs_per_s": round(info[name]["runs"] / best, 2),
            "walls_s": [round(w, 3) for w in walls[name]],
            "walls_spread_s": spread(walls[name]),
            "in_tasks_s": [round(c, 3) for c in inside[name]],
            "between_tasks_ms_per_task": round(1000 * statistics.median(between[name]) / tasks, 2),
            "cpu_driver_s": round(driver, 3),
            "cpu_cluster_s": round(cluster, 3),
        }
    results["dask_1_worker"]["startup_s"] = round(one_startup, 2)
    results["dask_2_worker"]["startup_s"] = round(two_startup, 2)
    if local_2_threads:
        results["local_2_threads"] = results_2
    cols = [c for c in tables[0].columns if c != "wall_s"]
    results["tables_equal"] = all(t[cols].equals(tables[0][cols]) for t in tables[1:])
    local, one_r, two_r = results["local_1_thread"], results["dask_1_worker"], results["dask_2_worker"]
    local_per_task_ms = 1000 * local["wall_s"] / local["tasks"]
    overhead = (one_r["wall_s"] - local["wall_s"]) / one_r["tasks"]
    results["dask_1_over_local"] = round(one_r["wall_s"] / local["wall_s"], 3)
    results["dask_1_over_local_median_of_rounds"] = round(
        statistics.median(d / lo for d, lo in zip(walls["dask_1_worker"], walls["local_1_thread"])), 3
    )
    results["dask_1_one_task_per_call_over_local"] = round(
        results["dask_1_worker_one_task_per_call"]["wall_s"] / local["wall_s"], 3
    )
    results["dask_overhead_per_task_s"] = round(overhead, 4)  # from the best walls: includes the load's noise
    results["dask_overhead_fraction_of_local"] = round(overhead * one_r["tasks"] / local["wall_s"], 4)
    for name in ("dask_1_worker", "dask_1_worker_one_task_per_call"):
        r = results[name]  # Dask's own cost on the worker's critical path, and in CPU beyond the runs' own
        extra = r["between_tasks_ms_per_task"] - local["between_tasks_ms_per_task"]
        r["between_tasks_fraction_of_local"] = round(extra / local_per_task_ms, 4)
        cpu_extra = r["cpu_driver_s"] + r["cpu_cluster_s"] - local["cpu_driver_s"]
        r["cpu_overhead_fraction_of_local"] = round(cpu_extra / local["cpu_driver_s"], 4)
    results["speedup_2_vs_1_worker"] = round(one_r["wall_s"] / two_r["wall_s"], 3)
    results["per_round"] = {  # each ratio within a round: both executors saw about the same load
        "dask_1_over_local": ratio(walls["dask_1_worker"], walls["local_1_thread"]),
        "speedup_2_vs_1_worker": ratio(walls["dask_1_worker"], walls["dask_2_worker"]),
        "load_average": loads,
        **conditions(),
    }
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


def _uptime() -> str:
    """``uptime``'s line (load averages over 1, 5, 15 minutes), or the load averages alone without it."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds (default 32: 1,024 runs; with --spec: 1)")
    parser.add_argument("--spec", type=Path, default=None, help="time this spec cut to --seeds seeds instead")
    parser.add_argument("--executor", choices=("local", "dask"), default="dask")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5, help="rounds: best of this many runs per executor")
    parser.add_argument(
        "--no-local-2-threads", action="store_true", help="skip the single run of local with 2 torch threads"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    if args.spec is not None:
        result = spec_fraction(args.spec, args.seeds or 1, args.executor, args.workers)
        key = f"spec:{args.spec.stem}:{args.executor}"
    else:
        result = throughput(args.seeds or SWEEP["seeds"], args.repeat, not args.no_local_2_threads)
        key = "throughput"
    result["load_average_before_after"] = [round(load[0], 2), round(os.getloadavg()[0], 2)]
    result["uptime_after"] = _uptime()
    result["cpus"] = os.cpu_count()
    saved = recover(args.out, read_json) or {}  # verified; a damaged file is moved aside (one line), not merged
    saved[key] = result
    write_json(args.out, saved, checksum=True)
    json.dump({key: result}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return result


if __name__ == "__main__":
    main()
