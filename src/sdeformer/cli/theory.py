"""Commands of the theorem checks: rates, sync-check, lyapunov, phase (THEORY sections 2-5)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Optional

import typer

from ..errors import ConfigError
from .common import app, cli_errors, emit_json, err_console, progress_bar


class RateKind(str, enum.Enum):
    depth = "depth"
    width = "width"
    tokens = "tokens"


def _ints(text: Optional[str], name: str) -> Optional[list[int]]:
    if text is None:
        return None
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(name, text, "a comma-separated list of positive integers") from None
    if len(values) < 2 or min(values) < 1 or len(set(values)) != len(values):
        raise ConfigError(name, text, "at least two distinct positive integers, comma-separated")
    return sorted(values)


@app.command()
@cli_errors
def rates(
    kind: RateKind = typer.Argument(..., help="depth (error vs L), width (vs m) or tokens (W_2 vs N)"),
    runs: Optional[int] = typer.Option(None, help="independent coupled runs (>= 2)"),
    values: Optional[str] = typer.Option(None, "--x", help="comma-separated L, m or N values"),
    dim: Optional[int] = typer.Option(None, help="token dimension d"),
    activation: Optional[str] = typer.Option(None, help="MLP activation"),
    bias_std: Optional[float] = typer.Option(None, help="sU = sW"),
    seed: Optional[int] = typer.Option(None, help="root seed"),
    quick: bool = typer.Option(False, "--quick", help="small, fast settings"),
    out: Path = typer.Option(Path("results/rates"), help="folder for <kind>.json/.npz/.png"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Measured convergence rate with log-log slope, bootstrap interval and the theory's slope (THEORY 5)."""
    from ..experiments import rates as exp
    from ..plots_theory import rate_figure
    from ..store import write_json, write_npz

    xs = _ints(values, "x")
    total = len(xs or exp.settings_for(kind.value, quick)["x"]) if kind.value == "tokens" else 1
    with progress_bar(total, f"rates {kind.value}", enabled=not json) as advance:
        result = exp.measure(kind.value, quick, progress=advance, runs=runs, x=xs, dim=dim,
                             activation=activation, bias_std=bias_std, seed=seed)
    write_json(out / f"{kind.value}.json", exp.public(result))
    write_npz(out / f"{kind.value}.npz", x=result["x"], samples=result["samples"])
    rate_figure(result, out / f"{kind.value}.png")
    if json:
        emit_json(exp.public(result))
    else:
        err_console.print(exp.summary_line(result) + f"; written to {out}")


@app.command("sync-check")
@cli_errors
def sync_check(
    activation: str = typer.Option("relu", help="MLP activation"),
    dim: int = typer.Option(64, help="token dimension d"),
    bias_std: float = typer.Option(0.1, help="sU = sW"),
    beta: float = typer.Option(1.0, help="inverse temperature (Q^T K = beta I, and E_beta)"),
    attention_scale: float = typer.Option(1.0, help="s in V = s I (+1 attractive, 0 off, -1 repulsive)"),
    runs: int = typer.Option(64, help="ensemble size R"),
    tokens: int = typer.Option(64, help="N tokens"),
    steps: int = typer.Option(2000, help="time steps (= layers of the discrete model)"),
    horizon: float = typer.Option(10.0, help="T"),
    width: Optional[int] = typer.Option(None, help="MLP width of the discrete model (default: infinite)"),
    seed: int = typer.Option(0, help="root seed"),
    out: Path = typer.Option(Path("results/sync"), help="folder for energies.npz (partial), sync.json, PNG"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Check E E_beta(t) <= exp((eps + lambda_bar_prime) t) E E_beta(0) on an SDE and a discrete ensemble."""
    from ..experiments import sync as exp
    from ..plots_theory import energy_figure

    with progress_bar(2 * steps * -(-runs // 32), "sync-check", enabled=not json) as advance:
        r = exp.sync_check(activation, dim, bias_std, beta, attention_scale, runs, tokens, steps, horizon, width,
                           seed, out=out, progress=advance)
    r["label"] = exp.label(r)
    energy_figure([r], out / "sync.png")
    keys = ("lambda_bar", "lambda_bar_prime", "eps", "t", "energy_mean", "energy_ci", "bound", "measured_rate",
            "bound_holds", "predicted_rate", "theorem_applies", "lambda1", "final_energy", "wall_s")
    if json:
        emit_json({k: r[k] for k in keys})
    else:
        err_console.print(exp.summary_line(r) + f"; written to {out}")


@app.command()
@cli_errors
def lyapunov(
    activation: Optional[str] = typer.Option(None, help="one activation (default: relu, silu, sigmoid, tanh)"),
    dim: Optional[int] = typer.Option(None, help="token dimension d (default: 5 and 64)"),
    bias_std: float = typer.Option(0.1, help="sU = sW"),
    runs: int = typer.Option(32, help="independent pairs"),
    steps: Optional[int] = typer.Option(None, help="time steps (default: max(1000, T |lambda_1| / 0.01))"),
    horizon: float = typer.Option(10.0, help="T"),
    out: Path = typer.Option(Path("results/lyapunov"), help="folder for lyapunov.json and .png"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Top Lyapunov exponent of the noise-only flow from two nearby tokens, against lambda_1 (THEORY 2)."""
    from ..experiments.lyapunov import DEFAULT_SETTINGS, lyapunov_table
    from ..plots_theory import lyapunov_figure
    from ..store import write_json

    acts = [activation] if activation else sorted({a for a, _, _ in DEFAULT_SETTINGS})
    dims = [dim] if dim else sorted({d for _, d, _ in DEFAULT_SETTINGS})
    settings = [(a, d, bias_std) for a in acts for d in dims]
    with progress_bar(len(settings), "lyapunov", enabled=not json) as advance:
        rows = []
        for setting in settings:
            rows += lyapunov_table([setting], runs=runs, steps=steps, horizon=horizon)
            advance(1)
    write_json(out / "lyapunov.json", {"rows": rows})
    lyapunov_figure(rows, out / "lyapunov.png")
    if json:
        emit_json({"rows": rows})
        return
    for r in rows:
        err_console.print(f"{r['label']}: measured {r['measured']:.4f} +- {r['ci']:.4f}, lambda_1 {r['lambda1']:.4f}")


@app.command()
@cli_errors
def phase(
    quick: bool = typer.Option(False, "--quick", help="a 2 x 3 x 3 x 2 grid with 3 seeds"),
    seeds: Optional[int] = typer.Option(None, help="seeds per cell"),
    out: Path = typer.Option(Path("results/phase"), help="folder for phase.json/.npz/.png"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """P(sync) over activation x d x bias std x attention scale, heat maps with lambda_bar = 0 (THEORY 5)."""
    from ..experiments import phase as exp
    from ..plots_theory import phase_figure
    from ..store import write_json, write_npz

    grid = dict(exp.QUICK if quick else exp.FULL)
    if seeds is not None:
        grid["seeds"] = seeds
    cells = len(grid["activations"]) * len(grid["dims"]) * len(grid["bias_stds"])
    with progress_bar(cells, "phase", enabled=not json) as advance:
        r = exp.phase(**grid, progress=advance)
    r["agreement"] = exp.agreement(r)
    r["agreement_finite_t"] = exp.agreement(r, finite_time=True)
    keys = ("activations", "dims", "bias_stds", "scales", "seeds", "threshold", "probability", "lambda_bar",
            "agreement", "agreement_finite_t", "wall_s")
    write_json(out / "phase.json", {k: r[k] for k in keys})
    write_npz(out / "phase.npz", probability=r["probability"], final_energy=r["final_energy"],
              lambda_bar=r["lambda_bar"])
    phase_figure(r, out / "phase.png")
    if json:
        emit_json({k: r[k] for k in keys})
    else:
        err_console.print(f"phase diagram: {cells} cells; noise-only agreement with the kernel verdict "
                          f"{r['agreement']:.2f} (sign), {r['agreement_finite_t']:.2f} (finite T), "
                          f"{r['wall_s']:.1f} s; written to {out}")
