"""The noise-free attention flow stepped by arclength, for the metastable staircase at large beta (BEYOND
section 10).

At beta in the thousands the flow dX_i = P_{X_i} Attn(X)_i dt sits on each saddle for a time e^{beta (1 - cos
theta)}: a fixed step needs ~e^22 steps for the second merge of five tokens at beta = 2000. Stepping by
arclength instead (the metastability paper's own scheme) follows the same path at a speed that does not depend
on |v|,

    X <- LN(X + ds v / |v|),   v = P_X Attn(X)  (|v| over all tokens),

and recovers the time from dt = ds / |v|, accumulated as log t (``logaddexp``) so it never overflows. The
weights are taken in the log domain: the unnormalized attention with e^beta factored out (e^{beta (<x_i, x_j>
- 1)} / N, the metastability paper's normalisation, whose time is e^beta times USA's), or the softmax, each
scaled by its largest weight between distinct clusters (put back into log |v|), so any beta > 0 works.
Tokens closer than ``merge`` (chordal distance) are replaced by their normalised mean, once per step: a
cluster then moves as one token, and the run ends when one cluster is left. Why arclength and not an
error-controlled step: the path has no stiff directions to resolve, only a speed that varies by e^{-beta}; the
arclength step is exact in that speed (the time is an integral along the path, not a step of the integrator),
so its cost is the path length over ``ds``, independent of beta.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ..core._errors import ConfigError
from ..core._sphere import project, tangent
from ..core._validate import positive_float, positive_int

KERNELS = ("usa", "softmax")


@dataclass(frozen=True)
class ArclengthRun:
    """One arclength run: ``log_t`` ``(S,)`` (log of the flow's time at each saved step), ``energy`` ``(S,)``
    (the normalized energy (1/N^2) sum e^{beta (cos - 1)}), ``clusters`` ``(S,)``, ``states`` ``(S, N, d)``,
    and whether it ended in one cluster (``done``)."""

    log_t: np.ndarray
    energy: np.ndarray
    clusters: np.ndarray
    states: torch.Tensor
    done: bool
    steps: int


def _velocity(x: torch.Tensor, beta: float, kernel: str, apart: torch.Tensor) -> tuple[torch.Tensor, float]:
    """(v e^{-c}, c): the tangent velocity ``(N, d)`` of the weights e^{beta (<x_i, x_j> - 1)} / N ('usa') or the
    softmax, scaled by e^{-c} (c: the largest log-weight between tokens ``apart`` ``(N, N)``, those not merged),
    finite at any beta. Merged pairs coincide and move nothing; their weights are left out."""
    logits = beta * (x @ x.T - 1)  # (N, N), <= 0 up to rounding
    if kernel == "softmax":
        logits = logits - torch.logsumexp(logits, -1, keepdim=True)  # log softmax
    else:
        logits = logits - math.log(x.shape[0])
    logits = logits.masked_fill(~apart, -math.inf)
    c = float(logits.max())
    return tangent(x, torch.exp(logits - c) @ x), c


def _merge(x: torch.Tensor, merge: float) -> torch.Tensor:
    """Tokens within chordal distance ``merge`` of each other replaced by their normalised mean, ``(N, d)``."""
    close = (x @ x.T) > 1 - merge * merge / 2  # (N, N), reflexive
    return project(close.to(x.dtype) @ x) if bool(close.sum() > x.shape[0]) else x


def arclength_flow(
    x0: torch.Tensor,
    beta: float,
    *,
    kernel: str = "usa",
    ds: float = 1e-3,
    merge: float = 1e-2,
    max_steps: int = 1_000_000,
    save_every: int = 1,
    progress: Callable[[int], None] | None = None,
) -> ArclengthRun:
    """The flow of ``kernel`` attention (``"usa"``: unnormalized, ``"softmax"``) with V = I from the unit tokens
    ``x0`` ``(N, d)`` (float64), stepped by arclength ``ds`` (module docstring) until one cluster is left or
    ``max_steps``; ``progress(k)`` after each step. Raises ConfigError for a bad kernel, step, merge distance or
    token array."""
    beta, ds, merge = positive_float("beta", beta), positive_float("ds", ds), positive_float("merge", merge)
    if kernel not in KERNELS:
        raise ConfigError("kernel", kernel, f"one of {list(KERNELS)}")
    if not (isinstance(x0, torch.Tensor) and x0.ndim == 2 and x0.shape[0] >= 2 and torch.isfinite(x0).all()):
        raise ConfigError("x0", getattr(x0, "shape", x0), "finite tokens (N >= 2, d)")
    max_steps, save_every = positive_int("max_steps", max_steps), positive_int("save_every", save_every)
    x = _merge(project(x0.to(torch.float64)), merge)
    log_t, logs, energies, counts, states = -math.inf, [], [], [], []
    steps = 0
    while True:
        cos = x @ x.T  # (N, N)
        ones = cos > 1 - merge * merge / 2
        done = bool(ones.all())
        if logs and logs[-1] == log_t:  # no time passed in float64: keep the latest state of that time
            for saved in (logs, energies, counts, states):
                saved.pop()
        if steps % save_every == 0 or done or steps == max_steps or logs and logs[-1] == log_t:
            logs.append(log_t)
            energies.append(float(torch.exp(beta * (cos.clamp(max=1) - 1)).mean()))
            counts.append(int(torch.unique(ones.to(torch.int8), dim=0).shape[0]))
            states.append(x)
        if done or steps == max_steps:
            break
        v, log_scale = _velocity(x, beta, kernel, ~ones)
        speed = float(torch.linalg.vector_norm(v))
        if speed == 0.0:  # an exact saddle (e.g. antipodal clusters): no path to follow
            break
        log_t = float(np.logaddexp(log_t, math.log(ds) - math.log(speed) - log_scale))
        x = _merge(project(x + (ds / speed) * v), merge)
        steps += 1
        if progress is not None:
            progress(steps)
    return ArclengthRun(np.array(logs), np.array(energies), np.array(counts), torch.stack(states), done, steps)
