"""The ``reproduce`` command: the paper's Table 1 and Figures 1-6 and the theorem checks in one report (THEORY 6)."""

from __future__ import annotations

import enum
import time
from pathlib import Path

import typer
from rich.console import Console

from .common import app, cli_errors, job_executor


class Part(str, enum.Enum):
    all = "all"
    paper = "paper"
    table1 = "table1"
    figure1 = "figure1"
    grid = "grid"
    theorems = "theorems"
    beyond = "beyond"


@app.command()
@cli_errors
def reproduce(
    part: Part = typer.Argument(
        Part.all,
        help="all (table1, figure1, grid, theorems), paper (table1, figure1, grid), one of those, or beyond "
        "(the stochastic-transformer family)",
    ),
    out: Path = typer.Option(Path("results"), help="output folder (cached parts are reused: resumable)"),
    seed: int = typer.Option(0, help="seed of the simulated runs"),
    quick: bool = typer.Option(False, help="smaller theorem checks (the paper's figures keep their scale)"),
    executor: str = typer.Option("local", help="local (this process) or dask (the grid's groups of panels on workers)"),
    workers: int = typer.Option(2, help="worker processes of the local Dask cluster (one thread each)"),
    scheduler: str | None = typer.Option(None, help="address of an existing Dask scheduler (implies dask)"),
    force: bool = typer.Option(False, help="write into a folder that holds another seed's reproduction"),
) -> None:
    """Reproduce the paper's Table 1 and Figures 1-6 (part 1) and check its theorems (part 2) into OUT/index.html."""
    from ..experiments.reproduce import reproduce as run

    started = time.perf_counter()
    with job_executor("dask" if scheduler else executor, workers, scheduler) as ex:
        path = run(part.value, out, seed=seed, quick=quick, executor=ex, force=force)
    Console(stderr=True).print(f"report written to {path} in {time.perf_counter() - started:.1f} s")
