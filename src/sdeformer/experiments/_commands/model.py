"""The commands of the model itself: ``kernel`` (THEORY section 2's constants), ``simulate`` (one run of the
discrete model, THEORY section 1) and ``spde`` (the density solver of THEORY section 4, docs/spde.md); their
settings are the config fields (``params.FIELDS``) and the declared ``SpdeSettings``."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

from ...core._errors import ConfigError
from ...params import Param, params_of
from .._spde.settings import SpdeSettings
from .options import fields

KERNEL_FIELDS = ("activation", "dim", "su", "sw", "beta")
KERNEL = (*fields(KERNEL_FIELDS), Param("bias_std", float, None, doc="sU = sW = this (exclusive with --su/--sw)"))
SIMULATE = (
    *fields(),
    Param("config", Path, None, doc="TOML or YAML file with model parameters; flags override it"),
    Param("bias_std", float, None, doc="sU = sW = this"),
    Param("param", list[str], None, doc="a parameter a part declares (repeatable), e.g. noise.fraction=0.3"),
    Param("out", Path, None, doc="run directory (resumable; tied to the config)"),
    Param("force", bool, False, doc="overwrite a run directory that holds another config's run"),
    Param("device", str, "cpu", doc="cpu, cuda, cuda:K or mps; meta: a dry run (shapes and memory, nothing run)"),
)
SPDE = (
    *params_of(SpdeSettings),
    Param("out", Path, None, doc="run directory (resumable; tied to the settings): npz, json, png"),
    Param("force", bool, False, doc="overwrite a run directory that holds other settings"),
    Param("max_memory", str, None, doc="refuse a run whose memory estimate exceeds this (e.g. 8G) [the memory "
          "available now]"),
)  # fmt: skip


def kernel(s: dict[str, Any]) -> dict:
    from ...core._kernel import kernel_theory
    from ...params import FIELDS

    given = {k: s[k] for k in KERNEL_FIELDS if s[k] is not None}
    given = {"activation": FIELDS["activation"].default, "dim": FIELDS["dim"].default, **given}
    return kernel_theory(**given, bias_std=s["bias_std"]).summary()


def show_kernel(summary: dict, s: dict[str, Any]) -> None:
    from ...params import FIELDS
    from .options import table

    rows = [[k, f"{v:.6g}" if isinstance(v, float) else str(v)] for k, v in summary.items()]
    dim = FIELDS["dim"].default if s["dim"] is None else s["dim"]
    table(f"kernel theory: {summary['activation']}, d = {dim}", ("quantity", "value"), rows, left=1)


def simulate(s: dict[str, Any]) -> Any:
    from rich.console import Console

    from ...config import ModelConfig, load_config_file
    from ...core._config_files import parse_assignments
    from ...core._validate import nonneg_float
    from ...io._progress import progress_bar
    from ...params import FIELDS
    from .._device import dry_run, notice, run_device
    from .._simulate import FIGURE, check_fits, simulate as run

    flags = {k: s[k] for k in FIELDS if s[k] is not None}  # the config fields given as options
    bias_std, out = s["bias_std"], s["out"]
    if bias_std is not None and ("su" in flags or "sw" in flags):
        raise ConfigError("bias_std", bias_std, "give either --bias-std or --su/--sw, not both")
    base = load_config_file(s["config"]) if s["config"] is not None else {}
    if bias_std is not None:
        base.pop("bias_std", None)
        flags["su"] = flags["sw"] = nonneg_float("bias_std", bias_std, "bias std")
    declared = parse_assignments(s["param"] or ())
    given = [key for key in declared if key in base]
    if given:
        raise ConfigError(given[0], declared[given[0]], "given in --config and --param; give it once")
    cfg = ModelConfig.from_mapping({**base, **declared}, **flags)
    changed = (("noise", cfg.noise != "mlp"), ("share", cfg.share != 1.0), ("cross_noise", cfg.cross_noise != "shared"))
    ignored = [name for name, off in changed if off]
    if not cfg.mlp and ignored:  # mlp = false turns every noise model off: its options would be ignored
        raise ConfigError(ignored[0], getattr(cfg, ignored[0]), "has no effect with --no-mlp (the noise is off)")
    device = run_device("--device", s["device"], dry_run=True)
    if device.type == "meta":  # the dry run: nothing allocated, nothing written
        return dry_run(cfg)
    check_fits(cfg)  # before the progress bar starts
    if device.type != "cpu":
        Console(stderr=True).print(notice("simulate", device), highlight=False, soft_wrap=True)
    with progress_bar(cfg.layers, "simulate", enabled=not s["json"]) as advance:
        result = run(cfg, out, progress=advance, force=s["force"], device=device)
    if out is not None:  # the experiment computes, the plots draw its result
        from ...plots._paper import energy_plot

        energy_plot(result, Path(out) / FIGURE)
    return result


def spde(s: dict[str, Any]) -> Any:
    from ...io._lock import folder_lock
    from ...io._progress import progress_bar
    from .._spde.run import claim, run_spde

    settings, out = SpdeSettings(**{p.name: s[p.name] for p in params_of(SpdeSettings)}), s["out"]
    settings.solver(s["max_memory"])  # bad kernels, sizes or choices fail here, before a folder or a progress bar
    with nullcontext() if out is None else folder_lock(out, "spde run"):  # one writer per run folder
        if out is not None:
            claim(settings, out, s["force"])  # another run's folder is refused before any work
        with progress_bar(settings.steps, "spde", enabled=not s["json"]) as advance:
            run = run_spde(settings, out, progress=advance, force=s["force"])
        if out is not None:
            from ...plots._spde import run_figure

            run_figure(run, out / "spde.png")
    return run


def summary(result: Any, s: dict[str, Any]) -> None:
    """The run's summary line on stdout (simulate, spde)."""
    from rich.console import Console

    Console().print(result.summary() + (f"; written to {s['out']}" if s["out"] else ""))
