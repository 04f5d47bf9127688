"""Commands of the model itself: ``kernel`` (THEORY section 2 constants) and ``simulate`` (one run, THEORY 1)."""

from __future__ import annotations

import enum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table as RichTable

from ..core.errors import ConfigError
from ..io.progress import progress_bar
from .common import app, cli_errors, emit_json


@app.command()
@cli_errors
def kernel(
    activation: str = typer.Option("relu", help="relu, leaky_relu[:SLOPE], gelu, silu, sigmoid, tanh"),
    dim: int = typer.Option(64, help="token dimension d (>= 2)"),
    bias_std: float | None = typer.Option(None, help="sU = sW = this (exclusive with --su/--sw)"),
    su: float | None = typer.Option(None, help="std of the hidden bias bU"),
    sw: float | None = typer.Option(None, help="std of the output bias bW"),
    beta: float = typer.Option(1.0, help="inverse temperature of E_beta (for lambda_bar_prime)"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Kernel constants of THEORY section 2: kappa(1), kappa'(1), lambda_1, lambda_bar, lambda_bar_prime."""
    from ..core.kernel import kernel_theory

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
    usa = "usa"
    l2 = "l2"
    sinkhorn = "sinkhorn"
    random = "random"


class DType(str, enum.Enum):
    float32 = "float32"
    float64 = "float64"
    bfloat16 = "bfloat16"


@app.command()
@cli_errors
def simulate(
    config: Path | None = typer.Option(None, help="TOML or YAML file with model parameters; flags override it"),
    tokens: int | None = typer.Option(None, help="N tokens [64]"),
    dim: int | None = typer.Option(None, help="d, token dimension [64]"),
    width: int | None = typer.Option(None, help="m, MLP width [2048]"),
    layers: int | None = typer.Option(None, help="L, depth [150]"),
    horizon: float | None = typer.Option(None, help="T, so dt = T / L [5.0]"),
    activation: str | None = typer.Option(None, help="MLP activation [relu]"),
    su: float | None = typer.Option(None, help="hidden bias std [0]"),
    sw: float | None = typer.Option(None, help="output bias std [0]"),
    bias_std: float | None = typer.Option(None, help="sU = sW = this"),
    mlp: bool | None = typer.Option(None, "--mlp/--no-mlp", help="MLP (common noise) on/off [on]"),
    attention: AttentionKind | None = typer.Option(None, help="softmax, off, usa, l2, sinkhorn or random [softmax]"),
    causal: bool | None = typer.Option(None, "--causal/--no-causal", help="causal attention mask [off]"),
    noise: str | None = typer.Option(None, help="noise model: mlp, gaussian, value, heads or quadratic [mlp]"),
    share: float | None = typer.Option(None, help="rho in [0, 1], the noise's shared fraction (1: common) [1.0]"),
    attention_scale: float | None = typer.Option(None, help="s in V = s I [1.0]"),
    beta: float | None = typer.Option(None, help="Q^T K = beta I [1.0]"),
    seed: int | None = typer.Option(None, help="random seed [0]"),
    dtype: DType | None = typer.Option(None, help="float32, float64 or bfloat16 [float32]"),
    sampling: str | None = typer.Option(None, help="MLP field: direct or conditional (same law) [direct]"),
    save_every: int | None = typer.Option(None, help="save every k-th layer [1]"),
    out: Path | None = typer.Option(None, help="run directory (resumable; tied to the config)"),
    force: bool = typer.Option(False, "--force", help="overwrite a run directory that holds another config's run"),
    json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Run the discrete stochastic transformer (THEORY section 1) and report E_beta per saved layer."""
    from ..config import ModelConfig, load_config_file
    from ..experiments.simulate import check_fits
    from ..experiments.simulate import simulate as run

    if bias_std is not None and (su is not None or sw is not None):
        raise ConfigError("bias_std", bias_std, "give either --bias-std or --su/--sw, not both")
    base = load_config_file(config) if config is not None else {}
    if bias_std is not None:
        base.pop("bias_std", None)
        su = sw = bias_std
    flags = dict(
        tokens=tokens,
        dim=dim,
        width=width,
        layers=layers,
        horizon=horizon,
        activation=activation,
        su=su,
        sw=sw,
        mlp=mlp,
        attention=attention.value if attention else None,
        attention_scale=attention_scale,
        beta=beta,
        seed=seed,
        dtype=dtype.value if dtype else None,
        sampling=sampling,
        save_every=save_every,
        causal=causal,
        noise=noise,
        share=share,
    )
    cfg = ModelConfig.from_mapping(base, **flags)
    check_fits(cfg)  # before the progress bar starts
    with progress_bar(cfg.layers, "simulate", enabled=not json) as advance:
        result = run(cfg, out, progress=advance, force=force)
    if json:
        emit_json(result.to_json())
        return
    Console().print(result.summary() + (f"; written to {out}" if out else ""))
