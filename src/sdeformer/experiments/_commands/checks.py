"""The commands of the theorem checks: rates, sync-check, lyapunov, phase (THEORY sections 2-5).

Each resolves and checks its settings, ties its ``--out`` folder to them (``claimed``: the same settings resume,
others are refused unless ``--force``), runs the check's ``run_and_write`` (the same call the reproduce report
makes), draws its figure (``plots._checks``) and returns the result (printed as its ``to_json()`` with ``--json``,
else as a summary line). rates, sync-check and phase run their pieces on the sweep executors (``--executor
local|dask``), with the same numbers on either; sync-check and phase take simulate's architecture options (BEYOND
sections 6-9) and say "not applicable" with the reason where they break the theorem's assumptions.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...core._errors import ConfigError
from ...params import Param, params_of
from .._lyapunov_options import OPTIONS as LYAPUNOV_OPTIONS
from .._rates.options import OPTIONS as RATE_OPTIONS
from .._sync.settings import SyncSettings
from .options import ARCHITECTURE, fields, force, jobs, out


class RateKind(str, enum.Enum):
    depth = "depth"
    width = "width"
    tokens = "tokens"


RATES = (
    Param("kind", RateKind, ..., doc="depth (error vs L), width (vs m) or tokens (W_2 vs N)"),
    Param("quick", bool, False, doc="small, fast settings"),
    out(Path("results/rates"), "folder for rates_<kind>.json/.npz/.png and the runs' parts/ (one folder for the "
        "three kinds)"),
    force(), *RATE_OPTIONS, *jobs(),
)  # fmt: skip
SYNC = (
    out(Path("results/sync"), "folder for parts/ (one per chunk of runs), energies.npz, sync.json, sync.png"),
    force(), *params_of(SyncSettings), *fields(ARCHITECTURE), *jobs(),
)  # fmt: skip
LYAPUNOV = (out(Path("results/lyapunov"), "folder for lyapunov.json and .png"), force(), *LYAPUNOV_OPTIONS)
PHASE = (
    Param("quick", bool, False, doc="a 2 x 3 x 3 x 2 grid with 2 seeds"),
    Param("seeds", int, None, doc="seeds per cell"),
    out(Path("results/phase"), "folder for phase.json/.npz/.png and the sweep in sweep/"),
    force(), *fields(ARCHITECTURE), *jobs("local (one process, batched) or dask"),
)  # fmt: skip


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
def claimed(out: Path, config: dict[str, Any], force: bool) -> Iterator[None]:
    """Tie ``out`` to ``config`` (``io._claims.claim_run_folder``) before the check runs. When the check then refuses
    its input (ConfigError), the folder's marker is put back as it was, and folders this command made are removed
    while empty: a bad input does not tie a folder to a config that never ran."""
    from ...io._atomic import atomic_write_bytes
    from ...io._claims import RUN_MARKER, claim_run_folder
    from ...io._lock import folder_lock

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


def _given(s: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: s[k] for k in names if s[k] is not None}


def rates(s: dict[str, Any]) -> Any:
    from ...io._progress import progress_bar
    from ...plots._checks import rate_figure
    from .._rates import measure as exp
    from .options import executor

    kind, quick, folder = s["kind"].value, s["quick"], s["out"]
    overrides = {**{p.name: s[p.name] for p in RATE_OPTIONS}, "x": _ints(s["x"], "x")}  # the claim's: every name
    units = exp.progress_units(kind, exp.settings_for(kind, quick, **overrides))  # checks them
    config = {"command": "rates", "quick": quick, **overrides}  # not the kind: the three share a folder
    with (
        executor(s) as ex,
        claimed(folder, config, s["force"]),
        progress_bar(units, f"rates {kind}", enabled=not s["json"]) as advance,
    ):
        result = exp.run_and_write(folder, kind, quick, progress=advance, executor=ex, **overrides)
    rate_figure(result, folder / result.figure)
    return result


def summary(result: Any, s: dict[str, Any]) -> None:
    """The check's summary line on stderr (rates, sync-check)."""
    from rich.console import Console

    Console(stderr=True).print(result.summary() + f"; written to {s['out']}")


def sync_check(s: dict[str, Any]) -> Any:
    from ...io._progress import progress_bar
    from ...plots._checks import energy_figure
    from .._sync import check as exp
    from .options import executor

    checked = SyncSettings.of(_given(s, (*(p.name for p in params_of(SyncSettings)), *ARCHITECTURE))).check()
    with (
        executor(s) as ex,
        claimed(s["out"], {"command": "sync-check", **checked.numbers()}, s["force"]),
        progress_bar(exp.settings_units(checked), "sync-check", enabled=not s["json"]) as advance,
    ):
        result = exp.run_and_write(s["out"], checked, progress=advance, executor=ex)
    energy_figure([result], s["out"] / "sync.png")
    return result


def lyapunov(s: dict[str, Any]) -> Any:
    from ...core._kernel import kernel_theory
    from ...core._validate import positive_float, positive_int
    from ...io._progress import progress_bar
    from ...plots._checks import lyapunov_figure
    from .. import _lyapunov as exp

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
        claimed(s["out"], {**config, "horizon": horizon}, s["force"]),
        progress_bar(len(cells), "lyapunov", enabled=not s["json"]) as advance,
    ):
        result = exp.run_and_write(s["out"], cells, progress=advance, runs=runs, steps=steps, horizon=horizon)
    lyapunov_figure(result.rows, s["out"] / exp.FIGURE)
    return result


def show_lyapunov(result: Any, _s: dict[str, Any]) -> None:
    from rich.console import Console

    for r in result.rows:
        Console(stderr=True).print(f"{r.label}: measured {r.measured:.4f} +- {r.ci:.4f}, lambda_1 {r.lambda1:.4f}")


def phase(s: dict[str, Any]) -> Any:
    from ...io._progress import progress_bar
    from ...plots._checks import phase_figure
    from ...sweeps import make_executor  # phase's tasks are batched sweeps: one torch thread each
    from .. import _phase as exp

    settings = exp.settings_for(s["quick"], seeds=s["seeds"], **_given(s, ARCHITECTURE))
    exp.check_settings(**settings)  # bad settings (a grid too large for memory) before any folder or progress
    cells = exp.progress_units(settings)
    with (
        make_executor(s["executor"], s["workers"], s["scheduler"]) as ex,
        claimed(s["out"], {"command": "phase", **settings}, s["force"]),
        progress_bar(cells, "phase", enabled=not s["json"]) as advance,
    ):
        result = exp.run_and_write(s["out"], settings, progress=advance, executor=ex)
    phase_figure(result, s["out"] / exp.FIGURE)
    return result


def show_phase(result: Any, s: dict[str, Any]) -> None:
    from rich.console import Console

    from .. import _phase as exp

    settings = exp.settings_for(s["quick"], seeds=s["seeds"], **_given(s, ARCHITECTURE))
    cells, seeds = exp.progress_units(settings), int(settings["seeds"])
    why = "; ".join(f"{k}: {v}" for k, v in result.not_applicable.items())
    agreement = f"{result.agreement:.2f} (sign), {result.agreement_finite_t:.2f} (finite T)"
    said = f"theorem not applicable ({why})" if why else f"noise-only agreement with the kernel verdict {agreement}"
    Console(stderr=True).print(
        f"phase diagram: {cells // seeds} cells x {seeds} seeds = {cells} runs; {said}"
        + f", {result.wall_s:.1f} s; written to {s['out']}"
    )
