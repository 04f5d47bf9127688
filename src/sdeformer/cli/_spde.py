"""The command ``spde``: the density solver of THEORY section 4 on the circle or the 2-sphere (docs/spde.md).
Its options are the settings ``SpdeSettings`` declares (``params.setting``; a torch-free module)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from ..experiments._spde.settings import SpdeSettings
from ..params import params_of
from ._common import app, cli_errors, emit_json, json_option
from ._generate import declared_options


@app.command()
@cli_errors
@declared_options("settings", params_of(SpdeSettings))  # --dim, --activation, --bias-std, ... (one per setting)
def spde(
    out: Path | None = typer.Option(None, help="run directory (resumable; tied to the settings): npz, json, png"),
    force: bool = typer.Option(False, "--force", help="overwrite a run directory that holds other settings"),
    json: bool = json_option(),
    max_memory: str | None = typer.Option(
        None, help="refuse a run whose memory estimate exceeds this (e.g. 8G) [the memory available now]"
    ),
    settings: dict[str, Any] | None = None,
) -> None:
    """Solve the common-noise SPDE as a density (and a coupled cloud): mass, positivity, E_beta, mode amplitudes,
    the resolution report and the cloud-density distance."""
    _run(SpdeSettings(**(settings or {})), out, force, json, max_memory)


def _run(settings: SpdeSettings, out: Path | None, force: bool, json: bool, max_memory: str | None) -> None:
    from ..experiments._spde.run import claim, run_spde
    from ..io._lock import folder_lock
    from ..io._progress import progress_bar

    settings.solver(max_memory)  # bad kernels, sizes or choices fail here, before a folder or a progress bar
    with nullcontext() if out is None else folder_lock(out, "spde run"):  # one writer per run folder
        if out is not None:
            claim(settings, out, force)  # another run's folder is refused before any work
        with progress_bar(settings.steps, "spde", enabled=not json) as advance:
            run = run_spde(settings, out, progress=advance, force=force)
        if out is not None:
            from ..plots._spde import run_figure

            run_figure(run, out / "spde.png")
    if json:
        emit_json(run.to_json())
        return
    Console().print(run.summary() + (f"; written to {out}" if out else ""))
