"""The ``reproduce`` command: the paper's Table 1 and Figures 1-6 and the theorem checks in one report (THEORY 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from ..experiments._registry import EXPERIMENTS
from ._common import app, cli_errors, job_options, plugin_option

# the choices: the groups, then every registered experiment (torch-free: ``--help`` stays fast); a plugin's
# experiment is known once ``--plugin`` has loaded it, so the name is checked then (``EXPERIMENTS.select``)
_GROUPS = "; ".join(f"{g} = {', '.join(names)}" for g, names in EXPERIMENTS.groups().items())
_HELP = f"a group ({_GROUPS}) or one experiment: " + "; ".join(f"{e.name}: {e.doc}" for e in EXPERIMENTS.reports())


@app.command()
@cli_errors
@job_options(
    "local (this process) or dask (the grid's panels, the theorem checks' jobs and a group's other experiments on"
    " workers; implied by --scheduler)"
)
def reproduce(
    part: str = typer.Argument("all", help=_HELP),
    out: Path = typer.Option(Path("results"), help="output folder (cached parts are reused: resumable)"),
    seed: int = typer.Option(0, help="seed of the simulated runs"),
    quick: bool = typer.Option(False, help="smaller theorem checks (the paper's figures keep their scale)"),
    force: bool = typer.Option(False, help="write into a folder that holds another seed's reproduction"),
    plugin: list[str] | None = plugin_option(),
    jobs: dict[str, Any] | None = None,
) -> None:
    """Run registered experiments into OUT/index.html: the paper's Table 1 and Figures 1-6 and the theorem checks
    by default; --plugin FILE registers experiments of your own (docs/extending.md).
    Damaged cached parts are moved into a damaged/ folder beside them, recomputed and listed at the end."""
    from ..plugins import load_plugins

    load_plugins(plugin or ())  # before the name is looked up: a plugin's experiment is registered at its import
    from ..experiments._commands.options import executor

    jobs = jobs or {}
    run_part(
        part, out, seed, quick, executor({**jobs, "executor": "dask" if jobs["scheduler"] else jobs["executor"]}), force
    )


def run_part(
    part: str, out: Path, seed: int, quick: bool, jobs: Any, force: bool, settings: dict | None = None
) -> None:
    """Run ``part`` into ``out`` on the executor context ``jobs`` (its closing line says where the report went, in
    the wall time of its header); print the damaged parts kept."""
    from ..core._validate import seed as check_seed
    from ..experiments._reproduce import reproduce as run
    from ..io._damage import damaged_files
    from ..io._progress import clock_start

    check_seed("seed", seed)  # before the folder is claimed for it
    with jobs as ex:  # its closing line gives the wall time since the command started, as the report's header
        run(part, out, seed=seed, quick=quick, executor=ex, force=force, settings=settings, started=clock_start())
    console = Console(stderr=True)
    for kept in damaged_files(out):
        console.print(
            f"damaged part kept for inspection (its result was recomputed): {kept}", highlight=False, soft_wrap=True
        )


def print_summary(path: Path) -> None:
    """The result JSON at ``path`` on stdout (its cache hash left out)."""
    import json as json_module

    from ..io._formats import read_json

    data = read_json(path)
    data.pop("config_hash", None)
    print(json_module.dumps(data, indent=1))
