"""The noise-free limit: the discrete model without noise against the limit ODE (THEORY section 3 with k = 0).

With the noise off, the layer x <- LN(x + dt Attn(x)) of THEORY section 1 is a first-order scheme for the ODE
dx/dt = P_x Attn(x): its error at the horizon T is O(dt). The experiment runs the discrete model of one config
(``mlp: false``) at depths L = L0, 2 L0, ..., and the ODE from the same config (``solver: projected``, noise
None) at ``REFERENCE`` x the largest depth as the reference, and fits the slope of log error against log dt.
The check holds when the slope lies in [1 - SLOPE_TOL, 1 + SLOPE_TOL]; its power: the discrete model with the
attention off by 10 % and 20 % (``attention_scale`` 1.1, 1.2) against the same ODE plateaus (slope near 0)
and is rejected. A depth whose step saturates (dt beta |s| > 1, ``dynamics._step_guard``: the first-order
expansion the order-1 prediction rests on does not hold there), or a saturated reference, leaves the check
"not resolved": no verdict and no power claim.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..checks._power import deterministic
from ..core._validate import fits_in_memory
from ..io._report import Figure, Section, Table
from ..plots._names import FIGURES
from ._ode_settings import OdeSettings
from ._registry import Context
from ._results import Result, read_cached_json, write_cached_json

SLOPE_TOL = 0.15  # the fitted order must be 1 within this (the reference's own O(dt_ref) error biases it < 0.05)
REFERENCE = 16  # the ODE reference takes this many times the largest depth's steps
WRONG = (1.1, 1.2, 0.9, 0.8)  # the wrong models: the attention scaled by these factors (both signs)
FIGURE = FIGURES["ode"]["order"]  # the plots own the name


@dataclass(frozen=True)
class OdeResult(Result):
    """Per depth L: dt and the largest token error at T against the ODE reference, for the model and for each
    wrong model; the fitted slopes and the verdicts."""

    layers: list[int]
    dt: list[float]
    error: list[float]
    wrong_errors: dict[str, list[float]]
    slope: float
    wrong_slopes: dict[str, float]
    holds: bool
    smallest_error_caught: float | None
    catch_rate: dict[str, float] = dataclasses.field(default_factory=dict)  # deterministic: 0 or 1 per size
    size_80: float | None = None
    figure: str = FIGURE
    saturated: list[int] = dataclasses.field(default_factory=list)  # the depths whose step saturates

    @property
    def verdict(self) -> str:
        """ "holds", "fails", or "not resolved" when a step saturates."""
        return "not resolved" if self.saturated else "holds" if self.holds else "fails"


def _slope(dt: list[float], error: list[float]) -> float:
    return float(np.polyfit(np.log(dt), np.log(error), 1)[0])


def _accepts(slope: float) -> bool:
    return abs(slope - 1.0) <= SLOPE_TOL


def run(settings: OdeSettings, advance=lambda _n: None) -> OdeResult:
    """The experiment (module docstring): ``advance(1)`` after each depth."""
    layers = [settings.first * 2**k for k in range(settings.depths)]
    x0 = torch.stack([settings.config(1, seed=s).initial_tokens() for s in range(settings.starts)])  # (B, N, d)
    reference = settings.config(REFERENCE * layers[-1], solver="projected").build().run(x0, saveat=10**9).final
    errors: dict[float, list[float]] = {1.0: [], **{w: [] for w in WRONG}}
    for L in layers:
        for factor in errors:
            final = settings.config(L, attention_scale=factor).build().run(x0, saveat=L).final  # (B, N, d)
            errors[factor].append(float((final - reference).norm(dim=-1).max()))
        advance(1)
    dt = [settings.horizon / L for L in layers]
    saturated = [L for L in [*layers, REFERENCE * layers[-1]] if _saturates(settings, settings.horizon / L)]
    slope = _slope(dt, errors[1.0])
    wrong = {f"attention x{w:g}": _slope(dt, errors[w]) for w in WRONG}
    slopes = dict(zip(WRONG, wrong.values()))
    catch = deterministic(lambda s: not _accepts(slopes[round(1 + s, 6)]), "attention x (1 + size), re-run")
    return OdeResult(
        layers, dt, errors[1.0], {f"attention x{w:g}": errors[w] for w in WRONG}, slope, wrong,
        _accepts(slope) and not saturated, None if saturated else catch.smallest_error_caught,
        {} if saturated else catch.fields()["catch_rate"], None if saturated else catch.size_80, saturated=saturated,
    )  # fmt: skip


def _saturates(settings: OdeSettings, dt: float) -> bool:
    """The step dt outside the explicit schemes' range for the largest attention tried (``WRONG``'s scale)."""
    from ..attention._softmax import SoftmaxAttention
    from ..dynamics._step_guard import ATTENTION_LIMIT, step_ratios

    return step_ratios(settings.dim, 0.0, dt, SoftmaxAttention(settings.beta, max(WRONG)))[1] > ATTENTION_LIMIT


def settings_for(quick: bool, changes: dict[str, object] | None = None) -> OdeSettings:
    """The report's (or the quick) size with ``changes`` (declared settings, ``SETTINGS``); ConfigError naming
    tokens/dim/starts when the run's memory estimate exceeds the limit (``core._validate.fits_in_memory``)."""
    base = OdeSettings.quick() if quick else OdeSettings()
    settings = dataclasses.replace(base, **(changes or {}))  # type: ignore[arg-type]
    sizes = (settings.tokens, settings.dim, settings.starts)
    fits_in_memory("tokens/dim/starts", sizes, memory_estimate(settings))
    return settings


def memory_estimate(settings: OdeSettings) -> float:
    """Bytes of one run at its peak: the float64 attention weights and their softmax temporaries (4 B x N x N)
    and the tokens' states and step temporaries (16 B x N x d) of the 4 initial states together."""
    n, d, b = settings.tokens, settings.dim, settings.starts
    return 8.0 * b * (4 * n * n + 16 * n * d)


def units(_seed: int, quick: bool, changes: dict[str, object]) -> int:
    """Progress units: one per depth (``run`` advances once per depth)."""
    return settings_for(quick, changes).depths


def run_and_write(
    out: Path, quick: bool = False, advance=lambda _n: None, changes: dict[str, object] | None = None
) -> OdeResult:
    """``run`` at the report's (or the quick) size with ``changes`` (declared settings, ``SETTINGS``), cached in
    ``out/ode.json`` for its settings."""
    settings = settings_for(quick, changes)
    path = Path(out) / "ode.json"
    cached = read_cached_json(path, settings.__dict__)
    if cached is not None:
        cached.pop("config_hash")
        return OdeResult(**cached)
    result = run(settings, advance)
    write_cached_json(path, settings.__dict__, result)
    return result


def section(result: OdeResult, folder: str = "ode") -> Section:
    verdict = result.verdict
    caught = "none of" if result.smallest_error_caught is None else f"{result.smallest_error_caught:.0%} and above of"
    power = (
        f"Power: the check rejects {caught} the attention errors tried "
        + ", ".join(f"{k} (order {v:.2f})" for k, v in result.wrong_slopes.items())
        + "."
    )
    if result.saturated:  # no verdict, no power claim: the prediction does not apply at these steps
        power = f"The step saturates (dt beta |s| > 1) at L = {', '.join(map(str, result.saturated))}: use more layers."
    rows = [
        [L, dt, e, *(w[i] for w in result.wrong_errors.values())]
        for i, (L, dt, e) in enumerate(zip(result.layers, result.dt, result.error))
    ]
    return Section(
        "The noise-free limit: discrete model against the ODE",
        [
            "With the noise off the layer x <- LN(x + dt Attn(x)) is a first-order scheme for dx/dt = P_x Attn(x) "
            f"(THEORY section 3 with k = 0). Fitted order {result.slope:.3f} (expected 1 within {SLOPE_TOL}): "
            f"{verdict}. {power}",
        ],
        [
            Table(
                ["L", "dt", "error", *result.wrong_errors],
                rows,
                "largest token error at T against the ODE",
                from_runs=True,
                exact=dict.fromkeys(["dt", "error", *result.wrong_errors], "a deterministic (noise-free) run"),
            )
        ],
        [Figure(Path(folder) / result.figure, "log-log error at T against dt, with the fitted order")],
    )


def report(ctx: Context) -> list[Section]:
    """The registered experiment: computed into ``OUT/ode``, drawn, one section."""
    from ..plots._ode import order_figure

    result = run_and_write(ctx.out / "ode", quick=ctx.quick, advance=ctx.advance, changes=ctx.settings)
    order_figure(result, ctx.out / "ode" / result.figure)
    return [section(result)]
