"""A sweep's bookkeeping at 10^6 runs (issue 42 item 6) gives what the per-row code gave: a part's rows built a
column at a time equal the row-at-a-time rows (failures, several recorded times, saturated runs); the resume's index
of key and status columns equals ``run_status`` of the whole table (winners of a run recorded twice, failures,
foreign parts left out and moved aside); the plan runs what the per-run filter ran."""

from __future__ import annotations

import dataclasses
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
import torch

from sdeformer.io._checksums import checksum_path
from sdeformer.sweeps import _runner as runner, _table as table, _task as task_module, expand, run
from sdeformer.sweeps._observables import evaluate
from sdeformer.sweeps._spec import parse_spec
from sdeformer.sweeps._task import CONFIG_TYPES, _message, _recorded, _rows, _simulate, make_tasks, saturated

SPEC = {
    "name": "book",
    "base": {"tokens": 6, "dim": 3, "width": 16, "layers": 4, "horizon": 1.0, "solver": "projected", "mlp": False},
    "axes": {"attention_scale": [0.5, 8.0]},  # dt beta s = 0.125 (resolved), 2 (saturated): one task
    "seeds": 3,
    "observables": ["energy", "mean_cos"],
    "times": [0.0, 0.5, 1.0],
    "batch": 16,
}


def _former_rows(task, states, ok, values, wall, columns) -> dict[str, list]:
    """The former builder (sweeps._task.execute before issue 42 item 6): a Python loop per row."""
    names = ["config_hash", "replicate", *CONFIG_TYPES, "layer", "t", *columns]
    names += [k for k, _ in task.runs[0].config.params] + ["status", "error", "wall_s", "task", "saturated"]
    rows: dict[str, list] = {name: [] for name in names}
    position = {i: j for j, i in enumerate(ok)}
    for i, r in enumerate(task.runs):
        cfg = dataclasses.asdict(r.config)
        failed, unresolved = isinstance(states[i], BaseException), saturated(r.config)
        for s, k in enumerate(r.layers):
            rows["config_hash"].append(r.config_hash)
            rows["replicate"].append(r.replicate)
            for name in CONFIG_TYPES:
                rows[name].append(cfg[name])
            rows["layer"].append(k)
            rows["t"].append(k * (r.config.horizon / r.config.layers))
            for c in columns:
                rows[c].append(float("nan") if failed else float(values[c][s, position[i]]))
            for key, value in r.config.params:
                rows[key].append(value if isinstance(value, (str, bool)) else float(value))
            rows["status"].append("error" if failed else "done")
            rows["error"].append(_message(states[i]) if failed else None)
            rows["wall_s"].append(wall / len(task.runs))
            rows["task"].append(task.id)
            rows["saturated"].append(unresolved)
    return rows


@pytest.mark.parametrize("failing", [(), (1,), (0, 4), tuple(range(6))])
def test_rows_by_column_are_the_former_rows(failing, one_thread):
    spec = parse_spec(SPEC)
    (task,) = make_tasks(expand(spec), spec.batch, "cpu", "x")
    assert len(task.runs) == 6 and {len(r.layers) for r in task.runs} == {3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # s = 8 saturates: the run warns
        states = [_recorded(r, res) for r, res in zip(task.runs, _simulate(task.runs))]
    states: list = [RuntimeError(f"boom {i}\nmore") if i in failing else s for i, s in enumerate(states)]
    ok = [i for i, s in enumerate(states) if not isinstance(s, BaseException)]
    values = {}
    if ok:
        x = torch.stack([states[i] for i in ok], dim=1)
        beta = torch.tensor([task.runs[i].config.beta for i in ok])
        values = {c: v.numpy() for c, v in evaluate(spec.observables, x, beta).items()}
    columns = [o.column for o in spec.observables]
    schema = table.schema(columns)
    new = pa.Table.from_pydict(_rows(task, states, ok, values, 0.25, columns), schema=schema)
    old = pa.Table.from_pydict(_former_rows(task, states, ok, values, 0.25, columns), schema=schema)
    assert new.schema == old.schema
    pd.testing.assert_frame_equal(new.to_pandas(), old.to_pandas())  # NaN where NaN (arrow's equals: NaN != NaN)
    assert new.column("saturated").to_pylist() == [r.config.attention_scale == 8.0 for r in task.runs for _ in range(3)]
    assert set(new.column("status").to_pylist()) == (
        {"error"} if len(ok) == 0 else {"done", "error"} if failing else {"done"}
    )


def _flaky(monkeypatch, beta: float) -> None:
    """Runs at ``beta`` fail (their tasks are retried run by run, each failing)."""
    real = task_module.engine.run_group

    def flaky(configs, device="cpu"):
        if any(c.beta == beta for c in configs):
            raise RuntimeError(f"boom at beta {beta}")
        return real(configs, device)

    monkeypatch.setattr(task_module.engine, "run_group", flaky)


def _former_recorded(out: Path) -> dict:
    """The former bookkeeping of ``plan``: compact on the whole table, then ``run_status`` of the table."""
    table.compact(out)
    return table.run_status(table.load(out, move=True)[0])


def test_the_index_is_the_former_run_status(tmp_path, monkeypatch, one_thread):
    spec = parse_spec({**SPEC, "axes": {"beta": [0.5, 1.0, 2.0]}, "batch": 2})
    other = parse_spec({**SPEC, "name": "other", "axes": {"beta": [3.0]}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _flaky(monkeypatch, 1.0)
        run(spec, tmp_path / "a")
        run(other, tmp_path / "foreign")
        monkeypatch.undo()
        monkeypatch.setattr(table, "compact", lambda out: 0)  # a retry cut in other tasks, not compacted after
        run(parse_spec({**SPEC, "axes": {"beta": [0.5, 1.0, 2.0]}, "batch": 1}), tmp_path / "a", retry_failed=True)
        monkeypatch.undo()
    status, twice = table._index(tmp_path / "a", move=False)
    assert twice  # the retried runs are recorded by their error part and their done part
    foreign = table.parts(tmp_path / "foreign")[0]
    for path in (foreign, checksum_path(foreign)):
        target = tmp_path / "a" / "table" / path.relative_to(tmp_path / "foreign" / "table")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    former = _former_recorded(tmp_path / "b")
    assert len(former) == 9 and set(former.values()) == {"done"}  # the done record wins
    assert table.recorded(tmp_path / "a") == former
    assert not (tmp_path / "a" / "table" / foreign.name).exists()  # moved aside, as the former code did
    assert sorted(p.name for p in table.parts(tmp_path / "a")) == sorted(p.name for p in table.parts(tmp_path / "b"))
    assert table._index(tmp_path / "a", move=False) == (former, False)
    assert table.read(tmp_path / "a").equals(table.read(tmp_path / "b"))


@pytest.mark.parametrize("retry_failed", [False, True])
def test_the_plan_runs_what_the_per_run_filter_ran(tmp_path, monkeypatch, retry_failed, one_thread):
    spec = parse_spec({**SPEC, "axes": {"beta": [0.5, 1.0, 2.0]}, "batch": 2})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _flaky(monkeypatch, 1.0)
        run(spec, tmp_path)
    monkeypatch.undo()
    gone = table.parts(tmp_path)[-1]  # its runs are pending again
    gone.unlink()
    checksum_path(gone).unlink()
    recorded = _former_recorded(tmp_path)
    runs = expand(spec)
    former = [r for r in runs if r.key not in recorded or (retry_failed and recorded[r.key] == "error")]
    planned = runner.plan(spec, tmp_path, retry_failed=retry_failed)
    assert planned.total == len(runs) == 9
    assert planned.todo == former and 0 < len(former) < 9
