"""The command ``peer``: a peer's published experiment, its conventions built in (docs/peers.md)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from .common import app, cli_errors, emit_json


@app.command()
@cli_errors
def peer(
    name: str = typer.Argument(..., help="litm, dotm or bruno"),
    beta: list[float] | None = typer.Option(None, "--beta", help="beta (repeat for several) [the peer's own]"),
    part: str | None = typer.Option(None, help="dotm: staircase or kinetic [staircase]"),
    as_published: bool = typer.Option(False, "--as-published", help="the peer's published behaviour, defects kept"),
    out: Path | None = typer.Option(None, help="write the peer's table layout into this folder"),
    compare: Path | None = typer.Option(None, help="the file the peer's script wrote: cells equal / total"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Run a peer's experiment at its default settings; with --compare, count the cells equal to the peer's."""
    from .. import peers
    from ..core.errors import ConfigError

    options: dict = {"beta": beta or None}
    if name in ("dotm", "bruno"):
        options["as_published"] = as_published
    elif as_published:
        raise ConfigError("as_published", True, f"not an option of {name}")
    if name == "dotm":
        options["part"] = part
    elif part is not None:
        raise ConfigError("part", part, f"not an option of {name}")
    result = peers.run(name, **options)
    if out is not None:
        result["files"] = [str(p) for p in peers.write(name, result, out)]
    if compare is not None:
        result["compare"] = peers.compare(name, result, compare)
    if json:
        emit_json(result)
        return
    console = Console()
    for key in ("t_crit", "runs"):
        for row in result.get(key, []):
            console.print({k: v for k, v in row.items() if k not in ("plateau_tau",)})
    if "compare" in result:
        c = result["compare"]
        console.print(f"cells equal: {c['equal']} / {c['total']}, largest difference {c['max_diff']:.3g}")
