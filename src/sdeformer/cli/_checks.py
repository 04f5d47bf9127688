"""Commands of the theorem checks: rates, sync-check, lyapunov, phase (THEORY sections 2-5).

Each command resolves and checks its options, ties its ``--out`` folder to them (``io._claims.claim_run_folder``:
the same options resume, others are refused unless ``--force``), runs the check's ``run_and_write`` (the same
call the reproduce report makes) and prints the result's ``to_json()`` (``--json``) or a summary line. rates,
sync-check and phase run their pieces on the sweep executors (``--executor local|dask``, the options that
``job_options`` gives a command), with the same numbers on either. sync-check and phase take simulate's
architecture options (``architecture_options``: --norm, --alibi, --mask, --causal, --cross; BEYOND sections 6-9),
run their models with them, record them in the folder's config, and say "not applicable" with the reason where
they break the theorem's assumptions. The figures are drawn here, from the results (``plots._checks``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from ..core._errors import ConfigError
from ..experiments._lyapunov_options import OPTIONS as LYAPUNOV_OPTIONS
from ..experiments._rates.options import OPTIONS as RATE_OPTIONS
from ..experiments._sync.settings import SyncSettings as SYNC
from ..io._progress import progress_bar
from ..params import params_of
from ._common import (
    DEFAULT_JOBS,
    JobOptions,
    app,
    cli_errors,
    emit_json,
    err_console,
    job_executor,
    job_options,
    json_option,
)
from ._fields import architecture_options
from ._generate import declared_options

FORCE_HELP = "write into OUT even if it holds another config's run"


class RateKind(str, enum.Enum):
    depth = "depth"
    width = "width"
    tokens = "tokens"


def _ints(text: str | None, name: str) -> list[int] | None:
    """A comma-separated option as a sorted list of at least two distinct positive integers (None stays None)."""
    if text is None:
        return None
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(name, text, "a comma-separated list of positive integers") from None
    if len(values) < 2 or min(values) < 1 or len(set(values)) != len(values):
        raise ConfigError(name, text, "at least two distinct positive integers, comma-separated")
    return sorted(values)


@contextmanager
def _claimed(out: Path, config: dict[str, Any], force: bool) -> Iterator[None]:
    """Tie ``out`` to ``config`` (``io._claims.claim_run_folder``) before the check runs. When the check then refuses
    its input (ConfigError), the folder's marker is put back as it was, and folders this command made are removed
    while empty: a bad input does not tie a folder to a config that never ran."""
    from ..io._atomic import atomic_write_bytes
    from ..io._claims import RUN_MARKER, claim_run_folder
    from ..io._lock import folder_lock

    out = Path(out)
    marker = out / RUN_MARKER
    created = [p for p in (out, *out.parents) if not p.exists()]  # deepest first
    try:
        with folder_lock(out, "check"):  # one writer at a time
            held = marker.read_bytes() if marker.is_file() else None
            claim_run_folder(out, config, force=force)
            try:
                yield
            except ConfigError:
                atomic_write_bytes(marker, held) if held is not None else marker.unlink(missing_ok=True)
                raise
    except ConfigError:
        for folder in created:  # only folders this command made, and only while empty
            try:
                folder.rmdir()
            except OSError:
                break
        raise


@app.command()
@cli_errors
@job_options()
@declared_options("settings", RATE_OPTIONS)  # --runs, --x, --dim, --activation, --bias-std, --seed
def rates(
    kind: RateKind = typer.Argument(..., help="depth (error vs L), width (vs m) or tokens (W_2 vs N)"),
    quick: bool = typer.Option(False, "--quick", help="small, fast settings"),
    out: Path = typer.Option(
        Path("results/rates"),
        help="folder for rates_<kind>.json/.npz/.png and the runs' parts/ (one folder for the three kinds)",
    ),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    json: bool = json_option(),
    settings: dict[str, Any] | None = None,
    jobs: JobOptions = DEFAULT_JOBS,
) -> None:
    """Measured convergence rate with log-log slope, bootstrap interval and the theory's slope (THEORY 5).
    The runs go in chunks, jobs on the executor; an interrupted measurement resumes with the chunks it lacks."""
    from ..experiments._rates import measure as exp
    from ..plots._checks import rate_figure

    given = {p.name: (settings or {}).get(p.name) for p in RATE_OPTIONS}  # the claim's config: every name
    overrides = {**given, "x": _ints(given["x"], "x")}
    units = exp.progress_units(kind.value, exp.settings_for(kind.value, quick, **overrides))  # checks them
    config = {"command": "rates", "quick": quick, **overrides}  # not the kind: the three share a folder
    with (
        job_executor(jobs.executor, jobs.workers, jobs.scheduler) as ex,
        _claimed(out, config, force),
        progress_bar(units, f"rates {kind.value}", enabled=not json) as advance,
    ):
        result = exp.run_and_write(out, kind.value, quick, progress=advance, executor=ex, **overrides)
    rate_figure(result, out / result.figure)
    if json:
        emit_json(result.to_json())
    else:
        err_console.print(result.summary() + f"; written to {out}")


@app.command("sync-check")
@cli_errors
@job_options()
@architecture_options()
@declared_options("settings", params_of(SYNC))
def sync_check(
    out: Path = typer.Option(
        Path("results/sync"), help="folder for parts/ (one per chunk of runs), energies.npz, sync.json, sync.png"
    ),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    json: bool = json_option(),
    settings: dict[str, Any] | None = None,
    parts: dict[str, Any] | None = None,
    jobs: JobOptions = DEFAULT_JOBS,
) -> None:
    """Check E E_beta(t) <= exp((eps + lambda_bar_prime) t) E E_beta(0) on an SDE and a discrete ensemble, with
    the power record (the SDE with the noise covariance cut --power-factor times must fail); verdict: holds, not
    resolved, fails, below resolution or not applicable (with the reason: a kernel condition, or an architecture
    part that breaks the theorem's assumptions; the energies are simulated all the same). The chunks of runs are
    jobs on the executor; a rerun into OUT computes only the chunks it lacks."""
    from ..experiments._sync import check as exp
    from ..plots._checks import energy_figure

    checked = SYNC.of({**(settings or {}), **(parts or {})}).check()
    with (
        job_executor(jobs.executor, jobs.workers, jobs.scheduler) as ex,
        _claimed(out, {"command": "sync-check", **checked.numbers()}, force),
        progress_bar(exp.settings_units(checked), "sync-check", enabled=not json) as advance,
    ):
        result = exp.run_and_write(out, checked, progress=advance, executor=ex)
    energy_figure([result], out / "sync.png")
    if json:
        emit_json(result.to_json())
    else:
        err_console.print(result.summary() + f"; written to {out}")


@app.command()
@cli_errors
@declared_options("settings", LYAPUNOV_OPTIONS)  # --activation, --dim, --bias-std, --runs, --steps, --horizon
def lyapunov(
    out: Path = typer.Option(Path("results/lyapunov"), help="folder for lyapunov.json and .png"),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    json: bool = json_option(),
    settings: dict[str, Any] | None = None,
) -> None:
    """Top Lyapunov exponent of the noise-only flow from two nearby tokens, against lambda_1 (THEORY 2)."""
    from ..core._kernel import kernel_theory
    from ..core._validate import positive_float, positive_int
    from ..experiments import _lyapunov as exp
    from ..plots._checks import lyapunov_figure

    s = {p.name: p.default for p in LYAPUNOV_OPTIONS} | (settings or {})
    runs, steps, horizon = s["runs"], s["steps"], s["horizon"]
    acts = [s["activation"]] if s["activation"] else sorted({a for a, _, _ in exp.DEFAULT_SETTINGS})
    dims = [s["dim"]] if s["dim"] else sorted({d for _, d, _ in exp.DEFAULT_SETTINGS})
    cells = [(a, d, s["bias_std"]) for a in acts for d in dims]  # (activation, d, bias std)
    if positive_int("runs", runs) < 2:  # the checks of exp.lyapunov, before the folder is claimed
        raise ConfigError("runs", runs, "need at least 2 runs for an interval")
    positive_float("horizon", horizon)
    if steps is not None:
        positive_int("steps", steps)
    for a, d, b in cells:
        kernel_theory(a, d, bias_std=b)
        exp.check_memory(runs, d)
    config = {"command": "lyapunov", "settings": [list(x) for x in cells], "runs": runs, "steps": steps}
    with (
        _claimed(out, {**config, "horizon": horizon}, force),
        progress_bar(len(cells), "lyapunov", enabled=not json) as advance,
    ):
        result = exp.run_and_write(out, cells, progress=advance, runs=runs, steps=steps, horizon=horizon)
    lyapunov_figure(result.rows, out / exp.FIGURE)
    if json:
        emit_json(result.to_json())
        return
    for r in result.rows:
        err_console.print(f"{r.label}: measured {r.measured:.4f} +- {r.ci:.4f}, lambda_1 {r.lambda1:.4f}")


@app.command()
@cli_errors
@job_options("local (one process, batched) or dask")
@architecture_options()
def phase(
    quick: bool = typer.Option(False, "--quick", help="a 2 x 3 x 3 x 2 grid with 2 seeds"),
    seeds: int | None = typer.Option(None, help="seeds per cell"),
    out: Path = typer.Option(Path("results/phase"), help="folder for phase.json/.npz/.png and the sweep in sweep/"),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    json: bool = json_option(),
    parts: dict[str, Any] | None = None,
    jobs: JobOptions = DEFAULT_JOBS,
) -> None:
    """P(sync) over activation x d x bias std x attention scale, heat maps with lambda_bar = 0 (THEORY 5), and
    each cell's theorem verdict ("not applicable" where an architecture part breaks its assumptions). The
    ensemble is a resumable sweep in OUT/sweep (draw it with `sdeformer sweep plot OUT/sweep`)."""
    from ..experiments import _phase as exp
    from ..plots._checks import phase_figure
    from ..sweeps import make_executor  # phase's tasks are batched sweeps: one torch thread each

    settings = exp.settings_for(quick, seeds=seeds, **(parts or {}))
    exp.check_settings(**settings)  # bad settings (a grid too large for memory) before any folder or progress
    cells = exp.progress_units(settings)
    with (
        make_executor(jobs.executor, jobs.workers, jobs.scheduler) as ex,
        _claimed(out, {"command": "phase", **settings}, force),
        progress_bar(cells, "phase", enabled=not json) as advance,
    ):
        result = exp.run_and_write(out, settings, progress=advance, executor=ex)
    phase_figure(result, out / exp.FIGURE)
    if json:
        emit_json(result.to_json())
        return
    why = "; ".join(f"{k}: {v}" for k, v in result.not_applicable.items())
    agreement = f"{result.agreement:.2f} (sign), {result.agreement_finite_t:.2f} (finite T)"
    said = f"theorem not applicable ({why})" if why else f"noise-only agreement with the kernel verdict {agreement}"
    err_console.print(
        f"phase diagram: {cells // int(settings['seeds'])} cells x {settings['seeds']} seeds = {cells} runs; {said}"
        + f", {result.wall_s:.1f} s; written to {out}"
    )
