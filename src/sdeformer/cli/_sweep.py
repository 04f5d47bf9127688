"""``sdeformer sweep``: run a sweep spec into a Parquet table (locally or on Dask), report its state, plot it.

``sdeformer sweep SPEC --out DIR`` is short for ``sdeformer sweep run SPEC --out DIR`` (its usage line says so);
``status DIR`` and ``plot DIR`` read the folder. ``run`` holds the folder's writer lock, claims it for the spec
(``--force`` to add another spec's runs) and refuses a spec over ``--max-runs`` runs or the memory available,
before anything is expanded. See :mod:`sdeformer.sweeps`.
"""

from __future__ import annotations

from pathlib import Path

import typer
from typer.core import TyperGroup

from ..core._errors import ConfigError
from ._common import (
    DEFAULT_JOBS,
    JobOptions,
    app,
    cli_errors,
    emit_json,
    err_console,
    job_options,
    json_option,
    plugin_option,
    progress_bar,
)


class DefaultRunGroup(TyperGroup):
    """A group whose first argument, when it names no subcommand, is the spec of ``run``; its usage shows that
    bare form first."""

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx, formatter):  # type: ignore[no-untyped-def]
        formatter.write_usage(ctx.command_path, "SPEC --out DIR [OPTIONS]")
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="       ")


sweep_app = typer.Typer(
    cls=DefaultRunGroup,
    no_args_is_help=True,
    add_completion=False,
    help="Sweeps: SPEC (YAML/TOML) -> tidy Parquet table, resumable, local or on Dask. `sweep SPEC --out DIR` is "
    "short for `sweep run SPEC --out DIR`; `sweep status DIR` and `sweep plot DIR` read the folder.",
)
app.add_typer(sweep_app, name="sweep")


@sweep_app.command("run")
@cli_errors
@job_options("local (one process, batched) or dask")
def run_cmd(
    spec: Path = typer.Argument(..., help="sweep spec (.yaml, .yml or .toml)"),
    out: Path = typer.Option(..., "--out", help="sweep folder: sweep.json and table/part-*.parquet"),
    threads: int | None = typer.Option(None, help="torch threads of the local executor (default 1)"),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="rerun the runs recorded with status=error"),
    max_runs: int | None = typer.Option(
        None, "--max-runs", help="refuse a spec of more runs (points x seeds) [1000000, sweeps._limits.MAX_RUNS]"
    ),
    force: bool = typer.Option(
        False, "--force", help="write into OUT when it holds a sweep of another spec (its runs are kept) or other files"
    ),
    plugin: list[str] | None = plugin_option(),
    json: bool = json_option(),
    jobs: JobOptions = DEFAULT_JOBS,
) -> None:
    """Run every run of SPEC not yet recorded in OUT (resumes after a crash; failed runs are kept as errors;
    damaged parts are moved into OUT/damaged and rerun). One sweep at a time writes into OUT. Exit code 1 when
    every run that ran failed."""
    from ..core._validate import positive_int
    from ..plugins import load_plugins
    from ..sweeps import _runner as runner, load_spec, make_executor
    from ..sweeps._limits import MAX_RUNS
    from ..sweeps._lock import writer

    load_plugins(plugin or ())  # before the spec names the plugin's parts; the executors' workers load them too

    parsed = load_spec(spec, MAX_RUNS if max_runs is None else positive_int("max_runs", max_runs))
    runner.check_fits(parsed)  # before the folder is made
    with writer(out):
        planned = runner.plan(parsed, out, retry_failed, force)
        with (
            make_executor(jobs.executor, jobs.workers, jobs.scheduler, threads) as ex,
            progress_bar(len(planned.todo), f"sweep {parsed.name}", enabled=not json) as advance,
        ):
            result = runner.run(parsed, out, ex, progress=advance, planned=planned)
    all_failed = result["ran"] > 0 and result["done"] == 0  # nothing computed: the command failed (exit 1)
    if json:
        emit_json(result)
        if all_failed:
            raise typer.Exit(code=1)
        return
    err_console.print(
        f"{result['runs']} runs: {result['skipped']} already recorded, {result['done']} done, "
        f"{result['error']} failed, in {result['wall_s']:.1f} s -> {out / 'table'}",
        highlight=False,
    )
    if result["error"]:
        err_console.print(f"see `sdeformer sweep status {out}`; rerun with --retry-failed", highlight=False)
    if all_failed:
        err_console.print(f"error: every one of the {result['ran']} runs that ran failed", highlight=False)
        raise typer.Exit(code=1)


@sweep_app.command("status")
@cli_errors
def status_cmd(
    out: Path = typer.Argument(..., help="sweep folder"),
    plugin: list[str] | None = plugin_option(),
    json: bool = json_option(),
) -> None:
    """Done / failed / pending runs of the folder's spec."""
    from ..plugins import load_plugins
    from ..sweeps import status

    load_plugins(plugin or ())

    result = status(out)
    if json:
        emit_json(result)
        return
    typer.echo(
        f"{result['name']}: {result['runs']} runs: done {result['done']}, failed {result['failed']}, "
        f"pending {result['pending']} ({result['parts']} parts)"
    )
    for message in result["errors"]:
        typer.echo(f"  error: {message}")
    for part in result["damaged"]:
        typer.echo(f"  damaged (left out; the next `sweep run` moves it aside and reruns it): {part}")
    for path in result["moved_aside"]:
        typer.echo(f"  damaged, moved aside (kept for inspection; its runs were rerun or are pending): {path}")


def _where(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ConfigError("where", item, "FIELD=VALUE")
        out[name.strip()] = value.strip()
    return out


@sweep_app.command("plot")
@cli_errors
def plot_cmd(
    folder: Path = typer.Argument(..., help="sweep folder"),
    x: str = typer.Option(..., "--x", help="config field (or t) on the x axis"),
    y: str = typer.Option(..., "--y", help="config field (heat map) or observable (curves)"),
    color: str | None = typer.Option(None, "--color", help="heat map: observable; curves: field, one curve each"),
    time: float | None = typer.Option(None, "--time", help="time t of the rows (default: each run's last)"),
    below: float | None = typer.Option(None, "--below", help="plot P(observable < BELOW) instead of the mean"),
    where: list[str] = typer.Option([], "--where", help="FIELD=VALUE filter (repeatable)"),
    out: Path | None = typer.Option(None, "--out", help="PNG path (default FOLDER/plots/<x>-<y>-<color>.png)"),
    plugin: list[str] | None = plugin_option(),
    json: bool = json_option(),
) -> None:
    """Heat map or curves from the folder's table."""
    from ..plugins import load_plugins
    from ..sweeps import read

    load_plugins(plugin or ())
    from ..plots._sweep import plot
    from ..sweeps._runner import load_saved_spec

    spec = load_saved_spec(folder)
    path = out or folder / "plots" / f"{'-'.join(p for p in (x, y, color) if p)}.png"
    result = plot(read(folder), path, x, y, color, time=time, below=below, where=_where(where), title=spec.name)
    if json:
        emit_json(result)
    else:
        typer.echo(f"{result['kind']} of {result['runs']} runs -> {result['path']}")
