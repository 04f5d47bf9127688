"""The command ``peer``: a peer's published experiment, its conventions built in (docs/peers.md)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ._common import app, cli_errors, emit_json, err_console
from ._peer_checks import check_beta, check_phase, sizes as size_line

# the options each peer takes beyond --beta, --out, --compare, --json (others are refused naming the option)
PHASE = ("seed", "random_kq", "random_v", "noanneal", "batch", "tokens", "dim", "betas", "betamin", "betamax")
PHASE += ("maxtime", "step")  # the two phase-diagram peers' common options
PEER_OPTIONS: dict[str, tuple[str, ...]] = {
    "litm": ("part", "scheme"),
    "dotm": ("part", "as_published"),
    "bruno": ("part", "as_published", "seed", "points", "maxtime"),
    "simuformer": (*PHASE, "as_published", "norm", "heads", "checkpoints", "sequential", "no_softmax", "adjacent")
    + ("analyze_evecs",),
    "glpr": (*PHASE, "use_softmax", "regen_period"),
}
for _peer in ("simuformer", "glpr"):  # the peers' other statistics and their raw step without softmax
    PEER_OPTIONS[_peer] += ("rawstep", "plotdim", "cluster_sizes")
TAKES = sorted({k for options in PEER_OPTIONS.values() for k in options})


@app.command()
@cli_errors
def peer(
    name: str = typer.Argument(..., help="litm, dotm, bruno, simuformer or glpr"),
    beta: list[float] | None = typer.Option(None, "--beta", help="beta (repeat for several) [the peer's own]"),
    part: str | None = typer.Option(
        None, help="dotm: staircase or kinetic; litm: threshold or particles; bruno: particles or pde"
    ),
    scheme: str | None = typer.Option(None, help="litm particles: rk4 (its step), geodesic (angle-Euler) or projected"),
    as_published: bool = typer.Option(False, "--as-published", help="the peer's published behaviour, defects kept"),
    seed: int | None = typer.Option(None, help="simuformer, glpr, bruno: torch's generator seed the peer ran with"),
    points: int | None = typer.Option(None, help="bruno pde: the notebook's n_points (grid of n_points - 1) [10000]"),
    norm: str | None = typer.Option(None, help="simuformer: postln, preln, periln or ngpt [preln]"),
    heads: int | None = typer.Option(None, help="simuformer: attention heads (averaged) [8]"),
    sequential: bool = typer.Option(False, "--sequential", help="simuformer: causal mask"),
    random_kq: int | None = typer.Option(None, "--random-kq", help="simuformer 0..5 [1], glpr 0..3 [0]: --randomKQ"),
    random_v: int | None = typer.Option(None, "--random-v", help="simuformer 0..5, glpr 0..3: --randomV [0]"),
    noanneal: int | None = typer.Option(None, help="simuformer, glpr: 0 matrices per run, 1 per beta, 2 per sweep"),
    batch: int | None = typer.Option(None, help="simuformer [512], glpr [2048]: runs per beta"),
    tokens: int | None = typer.Option(None, help="simuformer [64], glpr [32]: tokens"),
    dim: int | None = typer.Option(None, help="simuformer [16], glpr [2]: dimension"),
    betas: int | None = typer.Option(None, help="simuformer [20], glpr [90]: betas in the grid"),
    betamin: float | None = typer.Option(None, help="smallest beta of the grid [0.1]"),
    betamax: float | None = typer.Option(None, help="simuformer [15], glpr [9]: largest beta of the grid"),
    maxtime: float | None = typer.Option(
        None, help="simuformer [50], glpr [30 softmax, 1 without], bruno pde --as-published [0.5, 0.08]: horizon"
    ),
    step: float | None = typer.Option(None, help="time step [0.1]"),
    checkpoints: int | None = typer.Option(None, help="simuformer: time checkpoints [200]"),
    use_softmax: bool = typer.Option(False, "--use-softmax", help="glpr: softmax (its default: exp(.) / N)"),
    regen_period: float | None = typer.Option(None, "--regen-period", help="glpr: redraw matrices every P [0: no]"),
    no_softmax: bool = typer.Option(False, "--no-softmax", help="simuformer: weights exp(.) (no normalization)"),
    rawstep: bool = typer.Option(False, "--rawstep", help="simuformer, glpr without softmax: the step not divided"),
    adjacent: bool = typer.Option(False, "--adjacent", help="simuformer: the pairs (i, i + 1) only"),
    plotdim: bool = typer.Option(False, "--plotdim", help="simuformer, glpr: the mean dimension of the span"),
    cluster_sizes: bool = typer.Option(False, "--cluster-sizes", help="simuformer, glpr: median cluster count"),
    analyze_evecs: bool = typer.Option(
        False, "--analyze-evecs", help="simuformer: the cosines of its V matrices' main eigenvectors, per beta"
    ),
    out: Path | None = typer.Option(None, help="write the peer's table layout into this folder"),
    compare: Path | None = typer.Option(None, help="the file the peer's script wrote: cells equal / total"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Run a peer's experiment at its default settings; with --compare, count the cells equal to the peer's
    (docs/peers.md; the peer's own script is run by the repository tool tools/run_peer.py, not by this command)."""
    from .. import peers
    from ..core._errors import ConfigError

    given = {k: v for k, v in locals().items() if k in TAKES}
    given = {k: v for k, v in given.items() if v is not None and v is not False}
    allowed = PEER_OPTIONS.get(name)
    if allowed is None:
        raise ConfigError("peer", name, f"one of {list(PEER_OPTIONS)}")
    for key in given:
        if key not in allowed:
            raise ConfigError(key, given[key], f"not an option of {name}")
    if seed is not None and not 0 <= seed < 2**64:  # torch's generator seeds
        raise ConfigError("seed", seed, "an integer in [0, 2^64)")
    check_beta(name, beta)
    if name in ("simuformer", "glpr"):  # the two whose options size their arrays: bounded before any draw
        from ._bounds import bound, peer_bytes

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
