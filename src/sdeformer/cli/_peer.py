"""The command ``peer``: a peer's published experiment, its conventions built in (docs/peers.md); its options are
the peers' declared ones (``peers._options``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from ..peers._options import OPTIONS, PEER_OPTIONS
from ._common import app, cli_errors, emit_json, err_console, json_option
from ._generate import declared_options
from ._peer_checks import check_beta, check_phase, sizes as size_line


@app.command()
@cli_errors
@declared_options("options", OPTIONS)  # --part, --scheme, --seed, --batch, ... (peers._options)
def peer(
    name: str = typer.Argument(..., help="litm, dotm, bruno, simuformer or glpr"),
    beta: list[float] | None = typer.Option(None, "--beta", help="beta (repeat for several) [the peer's own]"),
    out: Path | None = typer.Option(None, help="write the peer's table layout into this folder"),
    compare: Path | None = typer.Option(None, help="the file the peer's script wrote: cells equal / total"),
    json: bool = json_option(),
    options: dict[str, Any] | None = None,
) -> None:
    """Run a peer's experiment at its default settings; with --compare, count the cells equal to the peer's
    (docs/peers.md; the peer's own script is run by the repository tool tools/run_peer.py, not by this command)."""
    from .. import peers
    from ..core._errors import ConfigError

    given = {k: v for k, v in (options or {}).items() if v is not False}  # the flags given as --no-X: unset
    allowed = PEER_OPTIONS.get(name)
    if allowed is None:
        raise ConfigError("peer", name, f"one of {list(PEER_OPTIONS)}")
    for key in given:
        if key not in allowed:
            raise ConfigError(key, given[key], f"not an option of {name}")
    seed = given.get("seed")
    if seed is not None and not 0 <= seed < 2**64:  # torch's generator seeds
        raise ConfigError("seed", seed, "an integer in [0, 2^64)")
    check_beta(name, beta)
    if name in ("simuformer", "glpr"):  # the two whose options size their arrays: bounded before any draw
        from ..experiments._commands.bounds import bound, peer_bytes

        sizes = {k: v for k, v in given.items() if k not in ("seed", "as_published")}
        s = {**peers.module(name).settings(**sizes), **({"betas": len(beta)} if beta else {})}
        steps = check_phase(name, s, beta)
        memory = bound(
            "batch/tokens/dim/heads",
            tuple(s.get(k, 1) for k in ("batch", "tokens", "dim", "heads")),
            peer_bytes(name, s),
        )
        err_console.print(size_line(name, s, beta, steps, memory), highlight=False, soft_wrap=True)  # before it runs
    result = peers.run(name, beta=beta or None, **given)
    if out is not None:
        result["files"] = [str(p) for p in peers.write(name, result, out)]
    if compare is not None:
        result["compare"] = peers.compare(name, result, compare)
    result = peers.printable(result)
    if json:
        emit_json(result)
        return
    console = Console()
    for key in ("t_crit", "runs"):
        for row in result.get(key, []):
            console.print({k: v for k, v in row.items() if k not in ("plateau_tau",)})
    if "density" in result:
        for b, row in zip(result["betas"], result["density"], strict=True):
            console.print(f"beta {b:.4g}: " + " ".join(f"{v:.3f}" for v in row))
    if "angles" in result:  # litm's particles: the angles at its snapshot times (--out writes them, --json prints)
        first, last = result["angles"][0], result["angles"][-1]
        console.print(
            f"angles of {len(first)} tokens at {len(result['angles'])} times t = 0 .. {result['times'][-1]:g}"
        )
        console.print(f"t = 0: {min(first):.4f} .. {max(first):.4f}; t = {result['times'][-1]:g}: {min(last):.4f} .. "
                      f"{max(last):.4f} (--json for all, --out for angles.npy)", highlight=False)  # fmt: skip
    if "z" in result:  # dotm's kinetic trajectory
        shape = (len(result["z"]), len(result["z"][0]), len(result["z"][0][0]))
        console.print(f"trajectory z {shape}; clusters at the end: {result['final_clusters']}")
    if "compare" in result:
        c = result["compare"]
        console.print(f"cells equal: {c['equal']} / {c['total']}, largest difference {c['max_diff']:.3g}")
        if name in ("simuformer", "glpr") and c["equal"] < c["total"]:  # the peer's script never seeds torch
            console.print(
                f"hint: {name}'s script never seeds torch, so its file matches only a run seeded as this one "
                "(--seed; `python tools/run_peer.py` seeds it; docs/peers.md)", highlight=False,
            )  # fmt: skip
