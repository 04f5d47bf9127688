"""Commands of the model itself: ``kernel`` (THEORY section 2 constants) and ``simulate`` (one run, THEORY 1)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table as RichTable

from ..core._errors import ConfigError
from ..io._progress import progress_bar
from ..params import FIELDS
from ._common import app, cli_errors, emit_json, json_option, param_option, plugin_option
from ._fields import field_options, model_options


@app.command()
@cli_errors
@field_options("given", ("activation", "dim", "su", "sw", "beta"))  # the config fields' declarations (params.FIELDS)
def kernel(
    bias_std: float | None = typer.Option(None, help="sU = sW = this (exclusive with --su/--sw)"),
    json: bool = json_option(),
    given: dict | None = None,
) -> None:
    """Kernel constants of THEORY section 2: kappa(1), kappa'(1), lambda_1, lambda_bar, lambda_bar_prime."""
    from ..core._kernel import kernel_theory

    given = {"activation": FIELDS["activation"].default, "dim": FIELDS["dim"].default, **(given or {})}
    summary = kernel_theory(**given, bias_std=bias_std).summary()
    if json:
        emit_json(summary)
        return
    table = RichTable(title=f"kernel theory: {summary['activation']}, d = {given['dim']}")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        table.add_row(key, f"{value:.6g}" if isinstance(value, float) else str(value))
    Console().print(table)


@app.command()
@cli_errors
@model_options()
def simulate(
    flags: dict,
    config: Path | None = typer.Option(None, help="TOML or YAML file with model parameters; flags override it"),
    bias_std: float | None = typer.Option(None, help="sU = sW = this"),
    plugin: list[str] | None = plugin_option(),
    param: list[str] | None = param_option(),
    out: Path | None = typer.Option(None, help="run directory (resumable; tied to the config)"),
    force: bool = typer.Option(False, "--force", help="overwrite a run directory that holds another config's run"),
    json: bool = json_option(),
) -> None:
    """Run the discrete stochastic transformer (THEORY section 1) and report E_beta per saved layer."""
    flags = dict(flags)  # the config fields given as options (params.FIELDS, cli._fields)
    from ..config import ModelConfig, load_config_file
    from ..core._config_files import parse_assignments
    from ..core._validate import nonneg_float
    from ..experiments._simulate import check_fits, simulate as run
    from ..plugins import load_plugins

    load_plugins(plugin or ())
    if bias_std is not None and ("su" in flags or "sw" in flags):
        raise ConfigError("bias_std", bias_std, "give either --bias-std or --su/--sw, not both")
    base = load_config_file(config) if config is not None else {}
    if bias_std is not None:
        base.pop("bias_std", None)
        flags["su"] = flags["sw"] = nonneg_float("bias_std", bias_std, "bias std")
    declared = parse_assignments(param or ())
    given = [key for key in declared if key in base]
    if given:
        raise ConfigError(given[0], declared[given[0]], "given in --config and --param; give it once")
    cfg = ModelConfig.from_mapping({**base, **declared}, **flags)
    changed = (("noise", cfg.noise != "mlp"), ("share", cfg.share != 1.0), ("cross_noise", cfg.cross_noise != "shared"))
    ignored = [name for name, off in changed if off]
    if not cfg.mlp and ignored:  # mlp = false turns every noise model off: its options would be ignored
        raise ConfigError(ignored[0], getattr(cfg, ignored[0]), "has no effect with --no-mlp (the noise is off)")
    check_fits(cfg)  # before the progress bar starts
    with progress_bar(cfg.layers, "simulate", enabled=not json) as advance:
        result = run(cfg, out, progress=advance, force=force)
    if out is not None:  # the experiment computes, the plots draw its result
        from ..experiments._simulate import FIGURE
        from ..plots._paper import energy_plot

        energy_plot(result, Path(out) / FIGURE)
    if json:
        emit_json(result.to_json())
        return
    Console().print(result.summary() + (f"; written to {out}" if out else ""))
