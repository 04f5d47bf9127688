"""Top Lyapunov exponent of the noise-only flow (THEORY section 2): measured against lambda_1.

Two nearby tokens follow the limit SDE without attention (Gaussian field, projected Euler-Maruyama, float64);
after every step their separation is measured and renormalised to ``delta`` (Benettin's method), and
lambda_hat = (1/T) sum log(|y - x| / delta). Theory: lambda_hat -> lambda_1 = (d-3)/2 kappa'(1) - (d-1)/2 kappa(1).
``run_and_write`` measures a list of settings into ``lyapunov.json`` (``{"rows": [...]}``); its caller draws
``FIGURE`` from the result (``plots._checks.lyapunov_figure``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..core._errors import ConfigError
from ..core._rng import GENERATOR_BYTES, Streams, derive_seeds
from ..core._sphere import project, tangent, uniform_sphere
from ..core._threads import single_threaded
from ..core._validate import finite_float, fits_in_memory, positive_float, positive_int, seed as check_seed
from ..dynamics._sde import LimitSDE, make_solver
from ..noise._fields import GaussianField
from ..observables import renormalise_pair
from ..plots._names import FIGURES
from ._lyapunov_options import DEFAULTS
from ._results import Result, read_cached_json, write_cached_json

DELTA = 1e-4  # renormalised separation; the 2x2 kernel matrix stays well resolved in float64 (no jitter)
RATE_STEP = 0.01  # default steps make dt |lambda_1| <= this: the Euler bias of the estimate is O(dt |lambda_1|)
Z95 = 1.959964
QUICK = {"runs": 8, "horizon": 4.0, "rate_step": 0.04}  # fewer runs and steps for the quick report
FIGURE = FIGURES["theorems"]["lyapunov"]  # the plots own the name


@dataclass(frozen=True)
class LyapunovRow(Result):
    """One setting: the measured exponent with its 95% half-width ``ci`` against lambda_1 (THEORY section 2)."""

    activation: str
    dim: int
    bias_std: float
    label: str
    measured: float
    ci: float
    lambda1: float
    runs: int
    steps: int
    horizon: float
    wall_s: float


@dataclass(frozen=True)
class LyapunovResult(Result):
    """The rows of all settings measured."""

    rows: tuple[LyapunovRow, ...]


@single_threaded
def check_memory(runs: int, dim: int) -> int:
    """ConfigError (one line, the estimate and the limit) unless ``runs`` pairs in dimension ``dim`` fit: per run
    its generator (``core._rng.GENERATOR_BYTES``) and 32 float64 pairs (2, d) of one step's temporaries."""
    estimate = runs * (GENERATOR_BYTES + 32 * 2 * dim * 8)
    fits_in_memory("runs/dim", (runs, dim), estimate)
    return estimate


def lyapunov(
    activation: str = "relu",
    dim: int = 64,
    bias_std: float = DEFAULTS["bias_std"],
    runs: int = DEFAULTS["runs"],
    steps: int | None = None,
    horizon: float = DEFAULTS["horizon"],
    delta: float = DELTA,
    seed: int = 0,
    rate_step: float = RATE_STEP,
    progress: Callable[[int], None] | None = None,
) -> LyapunovRow:
    """Estimate the top Lyapunov exponent of one setting; ``progress(1)`` after every step.

    ``steps=None`` picks max(1000, T |lambda_1| / rate_step) steps."""
    if not (0 < finite_float("delta", delta) < 0.1):
        raise ConfigError("delta", delta, "must be in (0, 0.1)")
    if positive_int("runs", runs) < 2:
        raise ConfigError("runs", runs, "need at least 2 runs for an interval")
    horizon, rate_step, seed = (
        positive_float("horizon", horizon),
        positive_float("rate_step", rate_step),
        check_seed("seed", seed),
    )
    if steps is not None:
        positive_int("steps", steps)
    field = GaussianField(activation, bias_std, bias_std, jitter=0.0)
    theory = field.theory(int(dim))
    check_memory(runs, int(dim))
    if steps is None:
        steps = max(1000, math.ceil(horizon * abs(theory.lambda1) / rate_step))
    solver = make_solver(LimitSDE(field), steps, horizon)
    start = time.perf_counter()
    x_seed, direction_seed, noise_seed = derive_seeds(seed, 3)
    x = uniform_sphere(1, dim, batch=(runs,), seed=x_seed, dtype=torch.float64)  # (R, 1, d)
    v = tangent(x, torch.randn(x.shape, generator=torch.Generator().manual_seed(direction_seed), dtype=x.dtype))
    pair = torch.cat([x, project(x + delta * v / v.norm(dim=-1, keepdim=True))], dim=-2)  # (R, 2, d)
    streams = Streams(noise_seed, (runs,))
    total = torch.zeros(runs, dtype=torch.float64)
    for _ in range(solver.steps):
        pair = solver.step(pair, streams)
        y, log_ratio = renormalise_pair(pair[..., 0, :], pair[..., 1, :], delta)
        total += log_ratio
        pair = torch.stack([pair[..., 0, :], y], dim=-2)
        if progress is not None:
            progress(1)
    est = total / solver.horizon  # (R,)
    return LyapunovRow(
        activation=theory.activation.name,
        dim=int(dim),
        bias_std=bias_std,
        label=f"{theory.activation.name} d={dim} sigma={bias_std:g}",
        measured=float(est.mean()),
        ci=Z95 * float(est.std()) / math.sqrt(runs),
        lambda1=theory.lambda1,
        runs=runs,
        steps=steps,
        horizon=horizon,
        wall_s=time.perf_counter() - start,
    )


DEFAULT_SETTINGS = [(act, d, 0.1) for act in ("relu", "silu", "sigmoid", "tanh") for d in (5, 64)]


def run_and_write(
    out: Path,
    settings: Sequence[tuple[str, int, float]] = DEFAULT_SETTINGS,
    quick: bool = False,
    progress: Callable[[int], None] | None = None,
    **kw: Any,
) -> LyapunovResult:
    """``lyapunov`` for each (activation, d, bias std), ``progress(1)`` after each; writes ``lyapunov.json`` into
    ``out``. ``quick``: the ``QUICK`` runs and steps (``kw`` overrides them)."""
    kw = {**(QUICK if quick else {}), **{k: v for k, v in kw.items() if v is not None}}
    key = {"check": "lyapunov", "settings": [list(s) for s in settings], **kw}
    cached = read_cached_json(Path(out) / "lyapunov.json", key)
    if cached is not None:  # the same check finished earlier: reuse it
        return LyapunovResult(tuple(LyapunovRow(**row) for row in cached["rows"]))
    rows = []
    for a, d, s in settings:
        rows.append(lyapunov(a, d, s, **kw))
        if progress is not None:
            progress(1)
    result = LyapunovResult(tuple(rows))
    write_cached_json(Path(out) / "lyapunov.json", key, result)
    return result
