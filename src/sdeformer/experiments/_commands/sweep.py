"""The commands ``sweep run SPEC --out DIR`` (every run of a spec not yet recorded in a folder, locally or on
Dask; ``sdeformer.sweeps``), ``sweep status DIR`` (done, failed and pending runs of a sweep folder) and
``sweep plot DIR`` (a heat map or curves from its table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core._errors import ConfigError
from ...params import Param
from .options import force, jobs

RUN = (
    Param("spec", Path, ..., doc="sweep spec (.yaml, .yml or .toml)"),
    Param("out", Path, ..., doc="sweep folder: sweep.json and table/part-*.parquet"),
    Param("threads", int, None, doc="torch threads of the local executor (default 1)"),
    Param("retry_failed", bool, False, doc="rerun the runs recorded with status=error"),
    Param("max_runs", int, None, doc="refuse a spec of more runs (points x seeds) [1000000, sweeps._limits.MAX_RUNS]"),
    Param("device", str, None, doc="cpu, cuda or cuda:K: where the runs are simulated [the spec's device:, cpu]"),
    force("write into OUT when it holds a sweep of another spec (its runs are kept) or other files"),
    *jobs("local (one process, batched) or dask"),
)
STATUS = (Param("out", Path, ..., doc="sweep folder"),)
PLOT = (
    Param("folder", Path, ..., doc="sweep folder"),
    Param("x", str, ..., doc="config field (or t) on the x axis"),
    Param("y", str, ..., doc="config field (heat map) or observable (curves)"),
    Param("color", str, None, doc="heat map: observable; curves: field, one curve each"),
    Param("time", float, None, doc="time t of the rows (default: each run's last)"),
    Param("below", float, None, doc="plot P(observable < BELOW) instead of the mean"),
    Param("where", list[str], [], doc="FIELD=VALUE filter (repeatable)"),
    Param("out", Path, None, doc="PNG path (default FOLDER/plots/<x>-<y>-<color>.png)"),
)


def status(s: dict[str, Any]) -> dict:
    from ...sweeps import status as read_status

    return read_status(s["out"])


def show_status(result: dict, _s: dict[str, Any]) -> None:
    print(
        f"{result['name']}: {result['runs']} runs: done {result['done']}, failed {result['failed']}, "
        f"pending {result['pending']} ({result['parts']} parts)"
    )
    for message in result["errors"]:
        print(f"  error: {message}")
    for part in result["damaged"]:
        print(f"  damaged (left out; the next `sweep run` moves it aside and reruns it): {part}")
    for path in result["moved_aside"]:
        print(f"  damaged, moved aside (kept for inspection; its runs were rerun or are pending): {path}")


def _where(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ConfigError("where", item, "FIELD=VALUE")
        out[name.strip()] = value.strip()
    return out


def plot(s: dict[str, Any]) -> dict:
    from ...plots._sweep import plot as draw
    from ...sweeps import read
    from ...sweeps._runner import load_saved_spec

    folder, x, y, color = s["folder"], s["x"], s["y"], s["color"]
    spec = load_saved_spec(folder)
    path = s["out"] or folder / "plots" / f"{'-'.join(p for p in (x, y, color) if p)}.png"
    where = _where(s["where"])
    return draw(read(folder), path, x, y, color, time=s["time"], below=s["below"], where=where, title=spec.name)


def show_plot(result: dict, _s: dict[str, Any]) -> None:
    print(f"{result['kind']} of {result['runs']} runs -> {result['path']}")


def run(s: dict[str, Any]) -> dict:
    """The run's counts (``sweeps._runner.run``); the spec is checked and sized before the folder is made, and one
    sweep at a time writes into OUT (its writer lock)."""
    import dataclasses

    from ...core._validate import positive_int
    from ...io._progress import progress_bar
    from ...sweeps import _runner as runner, load_spec, make_executor
    from ...sweeps._limits import MAX_RUNS
    from ...sweeps._lock import writer
    from .._device import SWEEP_TYPES, notice, run_device

    out, max_runs = s["out"], s["max_runs"]
    parsed = load_spec(s["spec"], MAX_RUNS if max_runs is None else positive_int("max_runs", max_runs))
    if s["device"] is not None:  # the option over the spec's device: (docs/scaling.md, "Devices")
        parsed = dataclasses.replace(parsed, device=str(run_device("--device", s["device"], types=SWEEP_TYPES)))
    runner.check_fits(parsed)  # before the folder is made
    if parsed.device != "cpu":
        from rich.console import Console

        Console(stderr=True).print(notice("sweep", parsed.device), highlight=False, soft_wrap=True)
    with writer(out):
        planned = runner.plan(parsed, out, s["retry_failed"], s["force"])
        with (
            make_executor(s["executor"], s["workers"], s["scheduler"], s["threads"]) as ex,
            progress_bar(len(planned.todo), f"sweep {parsed.name}", enabled=not s["json"]) as advance,
        ):
            return runner.run(parsed, out, ex, progress=advance, planned=planned)


def all_failed(result: dict) -> int:
    """Exit code 1 when every run that ran failed (nothing computed), else 0."""
    return int(result["ran"] > 0 and result["done"] == 0)


def show_run(result: dict, s: dict[str, Any]) -> None:
    from rich.console import Console

    err, out = Console(stderr=True), s["out"]
    err.print(f"{result['runs']} runs: {result['skipped']} already recorded, {result['done']} done, "
              f"{result['error']} failed, in {result['wall_s']:.1f} s -> {out / 'table'}", highlight=False)  # fmt: skip
    if result["error"]:
        err.print(f"see `sdeformer sweep status {out}`; rerun with --retry-failed", highlight=False)
    if all_failed(result):
        err.print(f"error: every one of the {result['ran']} runs that ran failed", highlight=False)
