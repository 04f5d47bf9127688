"""A tiny sweep at 10^4 - 10^6 runs on two loopback Dask workers, then its no-op resume (issue 42 item 6).

For each ``--runs`` R (8 points in beta x R / 8 seeds of a tiny run: N = 4 tokens, d = 2, m = 8, 2 layers, energy
at the final layer, ``batch: auto`` unless ``--batch``), into a fresh folder under ``--tmp``:

1. the sweep on a ``DaskExecutor`` with ``--workers`` single-threaded workers bound to 127.0.0.1 (started before
   the clock; its start-up reported apart): wall, runs/s, tasks, parts; from the tasks' summaries the share of a
   task's time spent after its runs and observables (the table rows built and the part written:
   ``1 - wall_s / total_s`` summed over tasks) and the same share per task (median, max);
2. the same command again, every run recorded (a no-op resume, on the same executor): wall and the driver's CPU
   time (on a loaded machine the wall is mostly waiting for a core), each per run and per part;
3. ``sweep read`` of the folder is not timed (it is the user's, not the sweep's).

Each size's record (with the load before and after, ``get_cpu_capability()``, the driver's peak RSS and the
folder's size on disk) is appended to ``--json`` (default ``benchmarks/results/sweep_scale.jsonl``) as soon as it
is measured. The folder is removed afterwards unless ``--keep``. Run it niced on a shared machine and say the load.

    python -m benchmarks.sweep_scale --runs 10000 100000
    nice -n 10 python -m benchmarks.sweep_scale --runs 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from sdeformer.sweeps import DaskExecutor, parse_spec, run
from sdeformer.sweeps._table import parts

from ._timing import conditions

RESULTS = Path("benchmarks") / "results" / "sweep_scale.jsonl"
BASE = {"tokens": 4, "dim": 2, "width": 8, "layers": 2, "horizon": 1.0}
POINTS = 8


def tiny_spec(runs: int, batch: int | str = "auto") -> Any:
    """``runs`` tiny runs: 8 beta values x runs / 8 seeds, ``batch`` runs per task (auto: ``task.batch_size``)."""
    return parse_spec(
        {
            "name": f"tiny_{runs}",
            "base": BASE,
            "axes": {"beta": {"linspace": [0.5, 4.0, POINTS]}},
            "seeds": runs // POINTS,
            "observables": ["energy"],
            "times": "final",
            "batch": batch,
        },
        max_runs=None,
    )


class Recording:
    """An executor that keeps the summaries of the tasks it ran (``task.execute``: ``wall_s``, ``total_s``)."""

    def __init__(self, inner: Any):
        self.inner, self.summaries = inner, []

    def map(self, tasks: Sequence[Any], out: Any, observables: Sequence[Any]) -> Iterator[dict]:
        for summary in self.inner.map(tasks, out, observables):
            self.summaries.append(summary)
            yield summary


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(runs: int, executor: Any, folder: Path, batch: int | str = "auto") -> dict[str, Any]:
    """The sweep of ``runs`` tiny runs, then its no-op resume (see the module docstring)."""
    spec = tiny_spec(runs, batch)
    before = conditions()
    recording = Recording(executor)
    start = time.perf_counter()
    first = run(spec, folder, recording)
    sweep_s = time.perf_counter() - start
    totals = [s["total_s"] for s in recording.summaries]
    after_runs = [1 - s["wall_s"] / s["total_s"] for s in recording.summaries]
    n_parts = len(parts(folder))
    start, cpu = time.perf_counter(), time.process_time()
    again = run(spec, folder, recording)
    resume_s, resume_cpu = time.perf_counter() - start, time.process_time() - cpu
    assert first["done"] == runs and again["skipped"] == runs and again["ran"] == 0, (first, again)
    return {
        "runs": runs,
        "batch": batch,
        "tasks": first["tasks"],
        "runs_per_task": runs / first["tasks"],
        "parts": n_parts,
        "sweep_s": round(sweep_s, 2),
        "runs_per_s": round(runs / sweep_s, 1),
        "task_s_sum": round(sum(totals), 2),
        "writing_share": round(1 - sum(s["wall_s"] for s in recording.summaries) / sum(totals), 4),
        "writing_share_per_task": {
            "median": round(statistics.median(after_runs), 4),
            "max": round(max(after_runs), 4),
        },
        "resume_s": round(resume_s, 3),
        "resume_ms_per_run": round(1e3 * resume_s / runs, 5),
        "resume_ms_per_part": round(1e3 * resume_s / n_parts, 3),
        "resume_cpu_s": round(resume_cpu, 3),  # the driver's: a resume runs in it alone
        "resume_cpu_ms_per_run": round(1e3 * resume_cpu / runs, 5),
        "resume_cpu_ms_per_part": round(1e3 * resume_cpu / n_parts, 3),
        "sweep_and_resume_s": round(sweep_s + resume_s, 2),
        "folder_bytes": folder_bytes(folder),
        "driver_max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "before": before,
        "after": conditions(),
        "nice": os.nice(0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", default="auto", help="runs per task: auto (default) or a count (1: a part per run)")
    parser.add_argument("--tmp", type=Path, default=Path("/tmp") / "sdeformer_sweep_scale")
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument("--keep", action="store_true", help="keep the sweep folders")
    args = parser.parse_args()
    batch = args.batch if args.batch == "auto" else int(args.batch)
    start = time.perf_counter()
    with DaskExecutor(workers=args.workers) as executor:
        startup = time.perf_counter() - start
        for runs in args.runs:
            folder = args.tmp / f"runs_{runs}_batch_{batch}"
            shutil.rmtree(folder, ignore_errors=True)
            record = {
                "workers": args.workers,
                "cluster_startup_s": round(startup, 2),
                **measure(runs, executor, folder, batch),
            }
            print(json.dumps(record), flush=True)
            args.json.parent.mkdir(parents=True, exist_ok=True)
            with args.json.open("a") as f:
                f.write(json.dumps(record) + "\n")
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
