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
    report = "report"
    paper = "paper"
    table1 = "table1"
    figure1 = "figure1"
    grid = "grid"
    theorems = "theorems"
    spde = "spde"
    beyond = "beyond"
    architectures = "architectures"


@app.command()
@cli_errors
def reproduce(
    part: Part = typer.Argument(
        Part.all,
        help="all (table1, figure1, grid, theorems), report (all and spde), paper (table1, figure1, grid), one of "
        "those, spde (the SPDE as a density), beyond "
        "(the stochastic-transformer family) or architectures (normalization, ALiBi, masks, two species)",
    ),
    out: Path = typer.Option(Path("results"), help="output folder (cached parts are reused: resumable)"),
    seed: int = typer.Option(0, help="seed of the simulated runs"),
    quick: bool = typer.Option(False, help="smaller theorem checks (the paper's figures keep their scale)"),
    executor: str = typer.Option("local", help="local (this process) or dask (the grid's groups of panels on workers)"),
    workers: int = typer.Option(2, help="worker processes of the local Dask cluster (one thread each)"),
    scheduler: str | None = typer.Option(None, help="address of an existing Dask scheduler (implies dask)"),
    force: bool = typer.Option(False, help="write into a folder that holds another seed's reproduction"),
) -> None:
    """Reproduce the paper's Table 1 and Figures 1-6 (part 1) and check its theorems (part 2) into OUT/index.html.
    Damaged cached parts are moved into a damaged/ folder beside them, recomputed and listed at the end."""
    from ..core.validate import seed as check_seed
    from ..experiments.reproduce import reproduce as run
    from ..io.store import damaged_files

    check_seed("seed", seed)  # before the folder is claimed for it
    started = time.perf_counter()
    with job_executor("dask" if scheduler else executor, workers, scheduler) as ex:
        path = run(part.value, out, seed=seed, quick=quick, executor=ex, force=force)
    console = Console(stderr=True)
    console.print(f"report written to {path} in {time.perf_counter() - started:.1f} s", highlight=False, soft_wrap=True)
    for kept in damaged_files(out):
        console.print(
            f"damaged part kept for inspection (its result was recomputed): {kept}", highlight=False, soft_wrap=True
        )
