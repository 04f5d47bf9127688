"""The GPU benchmark (``python -m benchmarks gpu``) and benchmarks/gpu.sh end to end on the CPU at tiny
sizes, so the script is known to work before a GPU runs it: every setting of the grid is in the JSON and the
table, timed with both random sources or skipped with its reason (memory over the budget, no time left)."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest
import torch
from benchmarks import _gpu as gpu
from hang_guard import HANG_S

ROOT = Path(__file__).resolve().parents[1]


def _settings() -> int:
    return len(gpu.TINY["tokens"]) * len(gpu.TINY["batches"]) * len(gpu.DTYPES)


def test_the_work_model_counts_flops_normals_and_memory():
    w = gpu.work(tokens=64, batch=2, dim=64, width=256)
    assert w["flops"] == 2 * (4 * 64**2 * 64 + 4 * 64 * 256 * 64)  # attention 4 N^2 d, MLP 4 N m d
    assert w["normals"] == 2 * (2 * 256 * 64 + 256 + 64)  # U, W, bU, bW
    assert w["memory_bytes"] == 4 * 2 * (3 * 256 * 64 + 2 * 64 * 256 + 12 * 64 * 64)


def test_the_tiny_cpu_run_writes_every_setting_with_both_sources_or_a_reason(tmp_path, one_thread):
    budget = gpu.work(16, 4, gpu.TINY["dim"], gpu.TINY["width"])["memory_bytes"] - 1  # the largest is skipped
    result = gpu.main([str(tmp_path), "--device", "cpu", "--tiny", "--budget-gb", str(budget / 2**30)])
    rows = json.loads((tmp_path / "gpu.json").read_text())["rows"]
    assert len(rows) == _settings() == len(result["rows"])
    for row in rows:
        big = (row["tokens"], row["batch"]) == (16, 4)
        assert row["status"].startswith("skipped: memory") if big else row["status"] == "ok"
        for rng in gpu.RNGS:
            assert (f"{rng}_s_per_layer" in row) is not big
            assert big or math.isfinite(row[f"{rng}_s_per_layer"]) and row[f"{rng}_s_per_layer"] >= 0
    # a time per layer is a difference of two timings: on a loaded machine it may be 0, never asserted positive
    assert all(math.isfinite(v) and v >= 0 for v in result["rates"].values())
    lines = (tmp_path / "gpu.md").read_text().split("## Issue 42")[0].splitlines()  # the engine's table
    table = [line for line in lines if line.startswith("| ") and line[2].isdigit()]
    assert len(table) == _settings() and sum("skipped: memory" in line for line in table) == len(gpu.DTYPES)


def test_no_time_left_skips_every_setting_and_says_so(tmp_path, one_thread):
    result = gpu.main([str(tmp_path), "--device", "cpu", "--tiny", "--max-seconds", "0"])
    assert len(result["rows"]) == _settings()
    assert all(row["status"].startswith("skipped: time") for row in result["rows"])


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "python").exists(), reason="gpu.sh runs the checkout's .venv")
def test_the_shell_script_runs_the_module(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [str(ROOT / "benchmarks" / "gpu.sh"), str(tmp_path), "--device", "cpu", "--tiny", "--max-seconds", "0"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=HANG_S, env=env)
    assert (tmp_path / "gpu.md").read_text().count("skipped: time") == _settings()


def test_issue_42s_parts_run_at_tiny_sizes_and_without_cuda_the_benchmark_skips(tmp_path, one_thread):
    """The harmonic attention (against exact: equal to 1e-12 in float64), the observables against a layer and the
    MLP field, in the JSON and the table; on a machine without CUDA, ``--device cuda`` writes nothing and exits 0
    (issue 42 item 7). Wrong models it fails: a part missing from the run, a traceback without a GPU."""
    from benchmarks import _gpu_scaling as scaling

    result = scaling.bench_scaling(torch.device("cpu"), tiny=True, seconds=60)
    assert len(result["attention"]) == 2 * 2 * len(scaling.TINY["attention"])
    assert all(r["status"] == "ok" and r["max_abs_diff"] < 1e-12 for r in result["attention"])
    assert {"layer_s", "clusters_s", "mean_cos_s", "energy_s"} <= set(result["observables"][0])
    assert result["mlp"]["status"] == "ok" and "## Issue 42 on the device" in scaling.table(result)
    if not torch.cuda.is_available():
        assert gpu.main([str(tmp_path / "out"), "--device", "cuda"]) == {"skipped": "no CUDA device"}
        assert not (tmp_path / "out").exists()
