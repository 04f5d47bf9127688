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
    lines = (tmp_path / "gpu.md").read_text().splitlines()
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
