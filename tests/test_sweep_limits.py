"""No spec can exhaust the machine: a sweep counts its runs from the axes before expanding anything
and refuses more than ``--max-runs`` (``limits.MAX_RUNS``); it estimates one task's memory the way ``simulate``
does and refuses what cannot fit; every replicate seed follows the one seed rule. Each refusal is one line, in
well under a second, and leaves no folder behind.

Today's code (the wrong model): ``seeds: 1000000000`` grew to 24 GB, ``linspace`` with 10^9 points and a 3 x
1000 grid raised MemoryError, ``tokens: 1000000`` computed for minutes, ``seeds: [2**63]`` died in pyarrow."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.config import ModelConfig
from sdeformer.core._errors import ConfigError
from sdeformer.experiments._simulate import run_bytes
from sdeformer.sweeps import _limits as limits, parse_spec
from sdeformer.sweeps._values import Grid

BASE = {"tokens": 4, "dim": 3, "width": 8, "layers": 4}
cli = CliRunner()


def refused(tmp_path: Path, spec: dict, param: str, *extra: str) -> str:
    """``sweep run`` of ``spec``: exit 2, one error line naming ``param``, no folder made, and the spec counted,
    never expanded (its peak memory stays small: a time would depend on the machine's load)."""
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    tracemalloc.start()
    result = cli.invoke(app, ["sweep", str(path), "--out", str(tmp_path / "out"), *extra])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and param in errors[0], result.output
    assert peak < 50e6, peak  # counted, never expanded
    assert not (tmp_path / "out").exists()
    return errors[0]


@pytest.mark.parametrize(
    "spec",
    [
        {"base": BASE, "seeds": 1_000_000_000},
        {"base": BASE, "axes": {"beta": {"linspace": [0.5, 4.0, 1_000_000_000]}}},
        {"base": BASE, "axes": {n: {"linspace": [0.5, 4.0, 1000]} for n in ("beta", "horizon", "attention_scale")}},
        {"base": BASE, "zipped": [{"beta": {"logspace": [0.1, 10, 10**9]}, "horizon": {"range": [1, 10**9 + 1]}}]},
    ],
    ids=["seeds", "linspace", "grid3x1000", "zipped"],
)
def test_huge_specs_refused_before_expanding(tmp_path, spec):
    line = refused(tmp_path, spec, "runs")
    assert "--max-runs" in line and f"{limits.MAX_RUNS:,}" in line


def test_max_runs_is_the_stated_limit(tmp_path):
    spec = {"base": BASE, "axes": {"beta": [0.5, 1.0, 2.0]}, "seeds": 2}  # 6 runs
    refused(tmp_path, spec, "runs", "--max-runs", "5")
    result = cli.invoke(app, ["sweep", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out"), "--max-runs", "6"])
    assert result.exit_code == 0, result.output
    help_text = " ".join(cli.invoke(app, ["sweep", "run", "--help"]).output.split())
    assert f"[default: {limits.MAX_RUNS}" in help_text.replace("\u00a0", " ")


@pytest.mark.parametrize("field,value", [("tokens", 1_000_000), ("width", 10**12), ("layers", 10**12)])
def test_sizes_refused_like_simulate(tmp_path, field, value):
    line = refused(tmp_path, {"base": {**BASE, field: value}}, "GiB")
    assert "tokens/dim/width/layers" in line and "available" in line


def test_memory_estimate_is_per_task_and_per_run(monkeypatch):
    """The estimate: the largest sizes of the axes, one simulate estimate per run of a task (batch), plus the
    driver's bookkeeping per run and per recorded row; refused when above the memory available (pretended)."""
    spec = parse_spec({"base": BASE, "axes": {"tokens": [4, 64], "dim": [3, 16]}, "seeds": 40, "batch": 64})
    runs = limits.count_runs(spec.groups, spec.seeds)
    assert runs == 160
    per_run = run_bytes(ModelConfig(tokens=64, dim=16, width=8, layers=4), cosines=True)
    driver = 160 * (limits.RUN_BYTES + limits.ROW_BYTES)  # times: final, one row per run
    monkeypatch.setattr("sdeformer.core._validate.available_bytes", lambda: 2**40)
    assert limits.check_memory(spec.base, spec.groups, runs, 64) == 64 * per_run + driver
    assert limits.check_memory(spec.base, spec.groups, runs, 1) == per_run + driver
    every = limits.check_memory(spec.base, spec.groups, runs, 1, ("every", 2))  # layers 0, 2, 4 (and 4): 4 rows
    assert every == per_run + 160 * (limits.RUN_BYTES + 4 * limits.ROW_BYTES)
    assert limits.rows_per_run("all", 150) == 151 and limits.rows_per_run((0.0, 1.0), 150) == 2
    monkeypatch.setattr("sdeformer.core._validate.available_bytes", lambda: 2**20)
    with pytest.raises(ConfigError, match="GiB"):
        limits.check_memory(spec.base, spec.groups, runs, 64)


@pytest.mark.parametrize(
    "seeds,param",
    [
        ([2**63], "seeds"),
        ([-1], "seeds"),
        ([1.5], "seeds"),
        ({"start": 2**63 - 1, "count": 2}, "2**63"),
        ({"start": 2**63, "count": 1}, "seeds.start"),
        (True, "seeds"),
    ],
)
def test_seeds_follow_the_seed_rule(seeds, param):
    with pytest.raises(ConfigError, match=param.replace("*", r"\*")):
        parse_spec({"base": BASE, "seeds": seeds})


def test_largest_seed_runs_into_the_table(tmp_path):
    """2**63 - 1 is a valid seed: it runs, and the table's int64 replicate column holds it."""
    from sdeformer.sweeps import read, run

    run(parse_spec({"base": BASE, "seeds": [2**63 - 1]}), tmp_path)
    assert read(tmp_path)["replicate"].tolist() == [2**63 - 1]


@pytest.mark.parametrize("kind", ["linspace", "logspace"])
def test_lazy_ranges_give_numpys_values(kind):
    """The values (hence every config hash) are numpy's, rounded as before; the length costs nothing."""
    grid = Grid(kind, 0.1, 4.0, 7)
    expected = np.geomspace(0.1, 4.0, 7) if kind == "logspace" else np.linspace(0.1, 4.0, 7)
    assert list(grid) == [round(float(v), 12) for v in expected]
    assert len(Grid(kind, 0.1, 4.0, 10**12)) == 10**12
    spec = parse_spec({"base": BASE, "axes": {"beta": {kind: [0.1, 4.0, 7]}}, "seeds": {"start": 5, "count": 3}})
    assert spec.seeds == range(5, 8) and spec.groups[0][0][1] == tuple(grid)
    assert parse_spec(spec.to_dict()) == spec  # round trip, seeds as {start, count}
