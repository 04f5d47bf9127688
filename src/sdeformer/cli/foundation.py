"""Commands of the foundation: kernel, simulate, reproduce."""

from __future__ import annotations

import enum
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table as RichTable

from ..config import ModelConfig, load_config_file
from ..errors import ConfigError
from ..kernel import kernel_theory
from .common import app, cli_errors, emit_json, progress_bar


@app.command()
@cli_errors
def kernel(
    activation: str = typer.Option("relu", help="relu, leaky_relu[:SLOPE], gelu, silu, sigmoid, tanh"),
    dim: int = typer.Option(64, help="token dimension d (>= 2)"),
    bias_std: Optional[float] = typer.Option(None, help="sU = sW = this (exclusive with --su/--sw)"),
    su: Optional[float] = typer.Option(None, help="std of the hidden bias bU"),
    sw: Optional[float] = typer.Option(None, help="std of the output bias bW"),
    beta: float = typer.Option(1.0, help="inverse temperature of E_beta (for lambda_bar_prime)"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Kernel constants of THEORY section 2: kappa(1), kappa'(1), lambda_1, lambda_bar, lambda_bar_prime."""
    summary = kernel_theory(activation, dim, bias_std=bias_std, su=su, sw=sw, beta=beta).summary()
    if json:
        emit_json(summary)
        return
    table = RichTable(title=f"kernel theory: {summary['activation']}, d = {dim}")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        table.add_row(key, f"{value:.6g}" if isinstance(value, float) else str(value))
    Console().print(table)


class AttentionKind(str, enum.Enum):
    softmax = "softmax"
    off = "off"


class DType(str, enum.Enum):
    float32 = "float32"
    float64 = "float64"


@app.command()
@cli_errors
def simulate(
    config: Optional[Path] = typer.Option(None, help="TOML or YAML file with model parameters; flags override it"),
    tokens: Optional[int] = typer.Option(None, help="N tokens [64]"),
    dim: Optional[int] = typer.Option(None, help="d, token dimension [64]"),
    width: Optional[int] = typer.Option(None, help="m, MLP width [2048]"),
    layers: Optional[int] = typer.Option(None, help="L, depth [150]"),
    horizon: Optional[float] = typer.Option(None, help="T, so dt = T / L [5.0]"),
    activation: Optional[str] = typer.Option(None, help="MLP activation [relu]"),
    su: Optional[float] = typer.Option(None, help="hidden bias std [0]"),
    sw: Optional[float] = typer.Option(None, help="output bias std [0]"),
    bias_std: Optional[float] = typer.Option(None, help="sU = sW = this"),
    mlp: Optional[bool] = typer.Option(None, "--mlp/--no-mlp", help="MLP (common noise) on/off [on]"),
    attention: Optional[AttentionKind] = typer.Option(None, help="softmax or off [softmax]"),
    attention_scale: Optional[float] = typer.Option(None, help="s in V = s I [1.0]"),
    beta: Optional[float] = typer.Option(None, help="Q^T K = beta I [1.0]"),
    seed: Optional[int] = typer.Option(None, help="random seed [0]"),
    dtype: Optional[DType] = typer.Option(None, help="float32 or float64 [float32]"),
    sampling: Optional[str] = typer.Option(None, help="MLP field: direct or conditional (same law) [direct]"),
    save_every: Optional[int] = typer.Option(None, help="save every k-th layer [1]"),
    out: Optional[Path] = typer.Option(None, help="run directory (resumable)"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Run the discrete stochastic transformer (THEORY section 1) and report E_beta per saved layer."""
    from ..experiments.simulate import simulate as run

    if bias_std is not None and (su is not None or sw is not None):
        raise ConfigError("bias_std", bias_std, "give either --bias-std or --su/--sw, not both")
    base = load_config_file(config) if config is not None else {}
    if bias_std is not None:
        base.pop("bias_std", None)
        su = sw = bias_std
    flags = dict(tokens=tokens, dim=dim, width=width, layers=layers, horizon=horizon, activation=activation, su=su,
                 sw=sw, mlp=mlp, attention=attention.value if attention else None, attention_scale=attention_scale,
                 beta=beta, seed=seed, dtype=dtype.value if dtype else None, sampling=sampling,
                 save_every=save_every)
    cfg = ModelConfig.from_mapping(base, **flags)
    with progress_bar(cfg.layers, "simulate", enabled=not json) as advance:
        summary = run(cfg, out, progress=advance)
    if json:
        emit_json({k: summary[k] for k in ("layers", "energy", "final_energy", "final_mean_cos",
                                          "final_mean_abs_cos", "config")})
        return
    Console().print(f"E_beta: {summary['energy'][0]:.4g} (layer 0) -> {summary['final_energy']:.4g} "
                    f"(layer {cfg.layers}); final mean cosine {summary['final_mean_cos']:.4f}, mean |cosine| "
                    f"{summary['final_mean_abs_cos']:.4f}, clusters {summary['final_clusters']}"
                    + (f"; written to {out}" if out else ""))


class Part(str, enum.Enum):
    all = "all"
    table1 = "table1"
    figure1 = "figure1"
    grid = "grid"
    theorems = "theorems"


@app.command()
@cli_errors
def reproduce(
    part: Part = typer.Argument(Part.all, help="all, table1, figure1, grid or theorems"),
    out: Path = typer.Option(Path("results"), help="output folder (cached parts are reused: resumable)"),
    seed: int = typer.Option(0, help="seed of the simulated runs"),
    quick: bool = typer.Option(False, help="smaller theorem checks (the paper's figures keep their scale)"),
) -> None:
    """Reproduce the paper's Table 1 and Figures 1-6 (part 1) and check its theorems (part 2) into OUT/index.html."""
    from ..experiments.reproduce import reproduce as run

    started = time.perf_counter()
    path = run(part.value, out, seed=seed, quick=quick)
    Console(stderr=True).print(f"report written to {path} in {time.perf_counter() - started:.1f} s")
