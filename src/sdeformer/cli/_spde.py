"""The command ``spde``: the density solver of THEORY section 4 on the circle or the 2-sphere (docs/spde.md)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import typer
from rich.console import Console

from ._common import app, cli_errors, emit_json


@app.command()
@cli_errors
def spde(
    dim: int = typer.Option(2, help="2 (the circle, Fourier modes) or 3 (the 2-sphere, spherical harmonics)"),
    activation: str = typer.Option("relu", help="MLP activation of the noise kernel kappa"),
    bias_std: float = typer.Option(0.5, help="sU = sW = this"),
    noise_scale: float = typer.Option(0.5, help="the noise field times this (0: no noise)"),
    noise_modes: int | None = typer.Option(None, help="degree M of the truncated noise [max(2, modes / 8)]"),
    attention: str = typer.Option("softmax", help="softmax, usa or off"),
    beta: float = typer.Option(2.0, help="Q^T K = beta I"),
    attention_scale: float = typer.Option(1.0, help="s in V = s I"),
    modes: int = typer.Option(32, help="resolution: the density's degree L"),
    steps: int = typer.Option(200, help="time steps"),
    horizon: float = typer.Option(2.0, help="final time T"),
    concentration: float = typer.Option(1.0, help="the start: von Mises-Fisher about e_1 (0: uniform)"),
    particles: int = typer.Option(0, help="a coupled cloud of N tokens on the same noise path (0: none)"),
    seed: int = typer.Option(0, help="the noise path (the cloud draws from seed + 1)"),
    save_every: int = typer.Option(4, help="save every k-th step"),
    out: Path | None = typer.Option(None, help="run directory (resumable; tied to the settings): npz, json, png"),
    force: bool = typer.Option(False, "--force", help="overwrite a run directory that holds other settings"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
    max_memory: str | None = typer.Option(
        None, help="refuse a run whose memory estimate exceeds this (e.g. 8G) [the memory available now]"
    ),
) -> None:
    """Solve the common-noise SPDE as a density (and a coupled cloud): mass, positivity, E_beta, mode amplitudes,
    the resolution report and the cloud-density distance."""
    from ..experiments._spde.run import SpdeSettings, claim, run_spde
    from ..io._lock import folder_lock
    from ..io._progress import progress_bar

    settings = SpdeSettings(
        dim,
        activation,
        bias_std,
        noise_scale,
        noise_modes,
        attention,
        beta,
        attention_scale,
        modes,
        steps,
        horizon,
        concentration,
        particles,
        seed,
        save_every,
    )
    settings.solver(max_memory)  # bad kernels, sizes or choices fail here, before a folder or a progress bar
    with nullcontext() if out is None else folder_lock(out, "spde run"):  # one writer per run folder
        if out is not None:
            claim(settings, out, force)  # another run's folder is refused before any work
        with progress_bar(steps, "spde", enabled=not json) as advance:
            run = run_spde(settings, out, progress=advance, force=force)
        if out is not None:
            from ..plots._spde import run_figure

            run_figure(run, out / "spde.png")
    if json:
        emit_json(run.to_json())
        return
    Console().print(run.summary() + (f"; written to {out}" if out else ""))
