"""Top Lyapunov exponent of the noise-only flow (THEORY section 2): measured against lambda_1.

Two nearby tokens follow the limit SDE without attention (Gaussian field, projected Euler-Maruyama, float64);
after every step their separation is measured and renormalised to ``delta`` (Benettin's method), and
lambda_hat = (1/T) sum log(|y - x| / delta). Theory: lambda_hat -> lambda_1 = (d-3)/2 kappa'(1) - (d-1)/2 kappa(1).
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import torch

from ..diagnostics import renormalise_pair
from ..errors import ConfigError
from ..fields import GaussianField
from ..rng import Streams
from ..sde import LimitSDE, make_solver
from ..sphere import project, tangent, uniform_sphere
from .rates import single_threaded

DELTA = 1e-4  # renormalised separation; the 2x2 kernel matrix stays well resolved in float64 (no jitter)
RATE_STEP = 0.01  # default steps make dt |lambda_1| <= this: the Euler bias of the estimate is O(dt |lambda_1|)
Z95 = 1.959964


@single_threaded
def lyapunov(activation: str = "relu", dim: int = 64, bias_std: float = 0.1, runs: int = 32,
             steps: int | None = None, horizon: float = 10.0, delta: float = DELTA, seed: int = 0,
             rate_step: float = RATE_STEP, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Estimate the top Lyapunov exponent; returns measured, ci (95% half-width), lambda1 and settings.

    ``steps=None`` picks max(1000, T |lambda_1| / rate_step) steps."""
    if not (0 < delta < 0.1):
        raise ConfigError("delta", delta, "must be in (0, 0.1)")
    if int(runs) < 2:
        raise ConfigError("runs", runs, "need at least 2 runs for an interval")
    field = GaussianField(activation, bias_std, bias_std, jitter=0.0)
    theory = field.theory(int(dim))
    if steps is None:
        steps = max(1000, math.ceil(horizon * abs(theory.lambda1) / rate_step))
    solver = make_solver(LimitSDE(field), steps, horizon)
    start = time.perf_counter()
    x = uniform_sphere(1, dim, batch=(runs,), seed=seed, dtype=torch.float64)  # (R, 1, d)
    v = tangent(x, torch.randn(x.shape, generator=torch.Generator().manual_seed(seed + 1), dtype=x.dtype))
    pair = torch.cat([x, project(x + delta * v / v.norm(dim=-1, keepdim=True))], dim=-2)  # (R, 2, d)
    streams = Streams(seed + 2, (runs,))
    total = torch.zeros(runs, dtype=torch.float64)
    for _ in range(solver.steps):
        pair = solver.step(pair, streams)
        y, log_ratio = renormalise_pair(pair[..., 0, :], pair[..., 1, :], delta)
        total += log_ratio
        pair = torch.stack([pair[..., 0, :], y], dim=-2)
        if progress is not None:
            progress(1)
    est = total / solver.horizon  # (R,)
    return {"activation": theory.activation.name, "dim": int(dim), "bias_std": bias_std,
            "label": f"{theory.activation.name} d={dim} sigma={bias_std:g}",
            "measured": float(est.mean()), "ci": Z95 * float(est.std()) / math.sqrt(runs),
            "lambda1": theory.lambda1, "runs": runs, "steps": steps, "horizon": horizon,
            "wall_s": time.perf_counter() - start}


DEFAULT_SETTINGS = [(act, d, 0.1) for act in ("relu", "silu", "sigmoid", "tanh") for d in (5, 64)]


def lyapunov_table(settings=DEFAULT_SETTINGS, quick: bool = False, progress=None, **kw) -> list[dict[str, Any]]:
    """``lyapunov`` for each (activation, d, bias std); quick: fewer runs and steps."""
    if quick:
        kw = {"runs": 8, "horizon": 4.0, "rate_step": 0.04, **kw}
    return [lyapunov(a, d, s, progress=progress, **kw) for a, d, s in settings]
