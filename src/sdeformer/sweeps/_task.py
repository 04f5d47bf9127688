"""One task of a sweep: a batch of compatible runs as one batched tensor program, written as one Parquet part.

The same function runs in the driver (local executor) and on Dask workers. The runs of a task share a
``sweep.group_key``, so ``sweep.run_group`` simulates them as one ``StochasticTransformer`` run of batch shape
``(G,)`` (THEORY section 1) with one random stream per run. If the batched run raises, each run is retried
alone so that only the failing ones get ``status=error`` rows; runs whose recorded tokens are not finite are
errors too (no NaN leaves silently). Each row carries ``saturated``: the run's step is outside its scheme's range
(``saturated``), so its numbers are not resolved.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..config import ModelConfig, _batches as engine
from ..core._threads import torch_threads
from ..plugins import run_time_error
from ._memory import run_bytes
from ._observables import SweepObservable, evaluate
from ._points import Run
from ._provenance import stamp, task_id
from ._table import CONFIG_TYPES, write_part

MAX_MESSAGE = 500
AUTO_TASK_BYTES = 256 << 20  # ``batch: auto``: one task's working set (per-run time is flat from 16 runs up)
AUTO_MAX_BATCH = 512  # a tiny run's part writing < 20 % of its task, a part's no-op resume ~2 ms (docs/specs.md)


@dataclass(frozen=True)
class Task:
    """Runs that share a group key. ``id`` hashes their keys: the same runs give the same part name."""

    id: str
    runs: tuple[Run, ...]
    device: str = "cpu"  # where the runs are simulated (the spec's ``device``)
    spec: str = ""  # the hash of the spec it runs for, stamped on its part (``_provenance``)


def batch_size(batch: int | str, cfg: ModelConfig) -> int:
    """Runs per task: ``batch``, or for ``"auto"`` as many runs of ``cfg`` as fit in ``AUTO_TASK_BYTES``
    (``memory.run_bytes`` per run; between 1 and ``AUTO_MAX_BATCH``). Measured on the noise phase
    sweep's runs (N = 32, m = 2048): 11.8 / 9.7 / 9.3 / 9.2 ms per run at 4 / 16 / 48 / 96 runs per task (d = 8),
    21.6 / 19.1 / 18.8 / 19.0 ms (d = 64): past ~16 runs a task gains nothing, so the budget only bounds memory.
    Tiny runs (~0.4 ms each) fill ``AUTO_MAX_BATCH``: building and writing their part took 19 / 13 / 10-14 % of
    a task of 256 / 512 / 1,024 runs, and a no-op resume 1.5 / 2.3 / 3.4-3.8 ms per part (10^5 runs,
    ``benchmarks/sweep_scale.py``, load 5-6): 512 keeps both near their targets (< 20 %, 2 ms)."""
    if batch != "auto":
        return int(batch)
    return max(1, min(AUTO_MAX_BATCH, AUTO_TASK_BYTES // run_bytes(cfg, cosines=True)))


def make_tasks(runs: Sequence[Run], batch: int | str, device: str = "cpu", spec: str = "") -> list[Task]:
    """Cut runs into tasks of at most ``batch_size(batch, ...)`` runs that share a group key, in first-appearance
    order (``spec``: the hash of the spec they run for)."""
    groups: dict[tuple, list[Run]] = {}
    keys: dict[str, tuple] = {}  # per point: its runs differ in the seed only, a batched field of every kind
    for run in runs:
        if run.config_hash not in keys:
            keys[run.config_hash] = engine.group_key(run.config)
        groups.setdefault(keys[run.config_hash], []).append(run)
    tasks = []
    for members in groups.values():
        size = batch_size(batch, members[0].config)
        for i in range(0, len(members), size):
            chunk = tuple(members[i : i + size])
            tasks.append(Task(task_id([r.key for r in chunk]), chunk, device, spec))
    return tasks


def _message(exc: BaseException) -> str:
    """One line for the table's ``error`` column; for an error in a plugin's own code, the plugin, part and call."""
    named = run_time_error(exc)
    text = str(named) if named else f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
    return text[:MAX_MESSAGE]


def saturated(cfg: ModelConfig) -> bool:
    """True when the config's SDE step is outside its scheme's range at the start (``dynamics._step_guard``: the
    rule the solvers warn by, here per run, not per batch). The discrete model (no ``solver``) is the model of
    THEORY section 1 itself, not a scheme for another: False."""
    if not cfg.solver:
        return False
    from ..dynamics._step_guard import ATTENTION_LIMIT, RK4_ATTENTION_LIMIT, check_scheme, check_step

    solver = cfg.build()
    x = solver.start_state(cfg.initial_tokens())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the run itself warns once
        if solver.sde.norm_sde is not None:
            return check_scheme(solver.sde.norm_sde, x, 0.0, solver.dt)
        limit = RK4_ATTENTION_LIMIT if cfg.solver == "rk4" else ATTENTION_LIMIT
        variance = solver.sde.field.variance(x)
        return check_step(x.shape[-1], variance, solver.dt, solver.sde.attention, attention_limit=limit)


def _batched(configs: Sequence[ModelConfig], device: str) -> list[tuple[list[int], torch.Tensor]]:
    """(saved layers, states ``(S, N, d)`` on the CPU) per config of one batched run on ``device``
    (``run_group``: one Trajectory ``(S, G, N, d)``)."""
    result = engine.run_group(configs, device)
    layers, x = result.steps.tolist(), result.x.cpu()
    return [(layers, x[:, k]) for k in range(len(configs))]


def _simulate(runs: Sequence[Run], device: str = "cpu") -> list[Any]:
    """(saved layers, states) or the exception, per run: batched first, each run alone if the batch raises."""
    configs = [r.config for r in runs]
    try:
        return list(_batched(configs, device))
    except Exception as exc:
        if len(configs) == 1:
            return [exc]
    out: list[Any] = []
    for c in configs:
        try:
            out.append(_batched([c], device)[0])
        except Exception as exc:
            out.append(exc)
    return out


def _recorded(run: Run, result: Any) -> Any:
    """The recorded states ``(S, N, d)`` of one run, or the exception that replaces them."""
    if isinstance(result, BaseException):
        return result
    saved, states = result
    x = states[[saved.index(k) for k in run.layers]]  # (S, N, d)
    if not torch.isfinite(x).all():
        bad = [k for k, xs in zip(run.layers, x) if not torch.isfinite(xs).all()]
        return FloatingPointError(f"non-finite tokens (NaN or inf) at layer {bad[0]}")
    return x


def _rows(
    task: Task, states: list[Any], ok: list[int], values: dict[str, Any], wall: float, columns: list[str]
) -> dict:
    """The part's columns (see ``table``): one row per run and recorded layer, run-major. Built a column at a time
    (a run's fields once, repeated over its layers), not a row at a time: the rows of a tiny run cost more than
    the run did (docs/specs.md, "Resuming large sweeps")."""
    runs = task.runs
    counts = [len(r.layers) for r in runs]
    of_row = np.repeat(np.arange(len(runs)), counts)  # the run of each row
    step = np.concatenate([np.arange(n) for n in counts])  # its position among the run's recorded layers
    repeat = (lambda v: v) if max(counts) == 1 else (lambda v: [v[j] for j in of_row])
    failed = [isinstance(s, BaseException) for s in states]
    per_run: dict[str, list[Any]] = {
        "config_hash": [r.config_hash for r in runs],
        "replicate": [r.replicate for r in runs],
    }
    fields = zip(*map(attrgetter(*CONFIG_TYPES), [r.config for r in runs]))  # one C call per run, not per field
    per_run |= {name: list(column) for name, column in zip(CONFIG_TYPES, fields)}  # int / float / str / bool
    own = [dict(r.config.params) for r in runs]  # the parts' own parameters: float, or str / bool as declared
    per_run |= {
        k: [p[k] if isinstance(p[k], (str, bool)) else float(p[k]) for p in own] for k, _ in runs[0].config.params
    }
    rows: dict[str, Any] = {name: repeat(column) for name, column in per_run.items()}
    rows["layer"] = [k for r in runs for k in r.layers]
    rows["t"] = [k * (r.config.horizon / r.config.layers) for r in runs for k in r.layers]
    position = np.full(len(runs), -1)
    position[ok] = np.arange(len(ok))
    done = position[of_row] >= 0
    for c in columns:  # values: (S, G_ok) each, NaN for a failed run
        rows[c] = column = np.full(len(of_row), np.nan)
        if ok:
            column[done] = values[c][step[done], position[of_row[done]]]
    meta = {
        "status": ["error" if f else "done" for f in failed],
        "error": [_message(s) if f else None for s, f in zip(states, failed)],
        "wall_s": [wall / len(runs)] * len(runs),
        "task": [task.id] * len(runs),
        "saturated": [saturated(r.config) for r in runs],
    }
    return rows | {name: repeat(column) for name, column in meta.items()}


def execute(task: Task, out: str | Path, observables: Sequence[SweepObservable], threads: int | None = 1) -> dict:
    """Simulate a task, compute its observables and write its part. Returns a summary: counts, ``wall_s`` (the
    simulation and observables, as in the table) and ``total_s`` (with the table rows and the part written)."""
    observables = tuple(observables)
    own = task.runs[0].config.params  # the parts' own parameters: one column each (float, or str / bool as declared)
    columns = [o.column for o in observables]
    start = time.perf_counter()
    with torch_threads(threads):
        states = [_recorded(r, res) for r, res in zip(task.runs, _simulate(task.runs, task.device))]
        ok = [i for i, s in enumerate(states) if not isinstance(s, BaseException)]
        values: dict[str, Any] = {}
        if ok:
            x = torch.stack([states[i] for i in ok], dim=1)  # (S, G_ok, N, d)
            beta = torch.tensor([task.runs[i].config.beta for i in ok])  # (G_ok,)
            values = {c: v.numpy() for c, v in evaluate(observables, x, beta).items()}  # (S, G_ok)
    wall = time.perf_counter() - start
    rows = _rows(task, states, ok, values, wall, columns)
    meta = stamp(task.spec, [r.key for r in task.runs]) if task.spec else {}  # which sweep and runs: its provenance
    write_part(
        out, task.id, rows, [*columns, *((k, type(v)) if isinstance(v, (str, bool)) else k for k, v in own)], meta
    )
    errors = len(task.runs) - len(ok)
    total = time.perf_counter() - start
    return {"task": task.id, "runs": len(task.runs), "done": len(ok), "error": errors, "wall_s": wall, "total_s": total}
