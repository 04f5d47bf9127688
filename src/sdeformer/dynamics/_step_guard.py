"""The step-size rule of the explicit schemes (``dynamics._sde``; the density solver ``spde._solver``):
two dimensionless numbers per step, checked before a run (THEORY section 3; BEYOND section 6 for the other
normalization schemes; docs/spde.md section 12).

- noise: q = (d - 1) f^2 k dt, the mean square E|f P_x dW|^2 of one step's tangent increment for a field of
  variance k = k(x, x) moved at the scheme's speed f (1 for Post-LN; 1 / r for Pre- and Peri-LN at radius r,
  alpha for nGPT, 1 / sqrt(1 + t) for sqrt-scaling: ``norms.limit_sde``). The Ito correction multiplies the
  radius by 1 - q / 2 per Euler-Maruyama step, which reaches 0 at q = 2 (the token is sent through the origin);
  the weak order-1 expansion of one step (THEORY section 3) drops terms of order q^2, so the step is resolved
  only for q well below 1.
- attention: a = f dt beta |s| (Q^T K = beta I, V = s I), dt times the Lipschitz scale of the softmax drift: its
  Jacobian in x is s beta Cov(y) with |y| = 1, and one step moves a token by at most f dt |s|, so its attention
  weights e^{beta <x, y>} change by at most a factor e^a over a step the scheme freezes them on. Explicit Euler
  is stable for dt L < 2 (L the Lipschitz constant); the rule keeps a factor 2 inside. Matrices give beta =
  |Q^T K| and |s| = |V| (spectral norms, the largest over runs), heads add (or average), a random-batch or
  stacked wrapper reads its inner attention; a scheme that normalizes the attention's output (Peri-LN, nGPT)
  moves a token by f dt, so a = f dt beta. Unnormalized weights (USA, ``unnormalized``: e^{beta <x, y>} / N, not a
  convex combination) move a token by up to f dt |s| e^beta, so |s| counts as |s| e^beta. An attention that draws
  its matrices itself reads 0. The noise-free
  RK4 step re-evaluates the weights inside the step: its bound is RK4's stability interval, a <= 2.78.

``step_ratios`` gives (q, a); ``check_step`` warns (one-line RuntimeWarning) when q > NOISE_LIMIT or
a > ATTENTION_LIMIT, and returns whether the step is saturated; ``check_scheme`` reads f and k of a scheme's
limit SDE at its state. The density solver then marks the whole run below resolution
(``spde._diagnostics.resolution``): its numbers are not those of the SPDE.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from ._norms.limit_sde import SchemeSDE

NOISE_LIMIT = 1.0  # q: an rms tangent step of one radian; the Ito factor 1 - q/2 vanishes at 2
ATTENTION_LIMIT = 1.0  # a: attention weights change by at most e per step; explicit Euler's bound is 2
RK4_ATTENTION_LIMIT = 2.78  # a for classical Runge-Kutta: its stability interval on the negative axis, [-2.785, 0]


def largest(value: object) -> float:
    """The largest |entry| of a number or a tensor (one value per run), 0 for None."""
    if value is None:
        return 0.0
    if isinstance(value, torch.Tensor):
        return float(value.detach().abs().max()) if value.numel() else 0.0
    return abs(float(value))  # pyright: ignore[reportArgumentType]


def _norm(matrix: object) -> float:
    """The largest spectral norm of a matrix ``(..., d, d)`` (one per run), 1 for None (the identity)."""
    if not isinstance(matrix, torch.Tensor):
        return 1.0
    return float(torch.linalg.matrix_norm(matrix.detach().double(), ord=2).max())


def attention_scales(attention: object) -> tuple[float, float]:
    """(beta, |s|) of the module docstring: the scale of the attention's scores and of its values (times e^beta
    for unnormalized weights)."""
    beta, value = _scales(attention)
    if getattr(attention, "unnormalized", False):
        value *= math.exp(min(beta, 700.0))
    return beta, value


def _scales(attention: object) -> tuple[float, float]:
    if attention is None:
        return 0.0, 0.0
    heads = getattr(attention, "heads", None)
    if isinstance(heads, (list, tuple)) and heads:  # MultiHeadAttention: the drifts add (or average)
        parts = [attention_scales(h) for h in heads]
        share = 1.0 / len(parts) if getattr(attention, "combine", "sum") == "mean" else 1.0
        beta, lipschitz = max(b for b, _ in parts), share * sum(b * v for b, v in parts)  # sum_h beta_h |s_h|
        return beta, lipschitz / beta if beta > 0 else 0.0
    inner = getattr(attention, "inner", None)
    if callable(getattr(inner, "drift", None)):  # random-batch attention, stacked heads: the inner attention's
        return attention_scales(inner)
    q, k = getattr(attention, "Q", None), getattr(attention, "K", None)
    if q is not None or k is not None:
        if isinstance(q, torch.Tensor) and isinstance(k, torch.Tensor):
            qk = _norm(q.mT @ k.to(q))  # |Q^T K|
        else:
            qk = _norm(q if q is not None else k)  # the other is the identity
        value = _norm(getattr(attention, "V", None)) * (largest(getattr(attention, "scale", None)) or 1.0)
        return qk, value
    beta, scale = getattr(attention, "beta", None), getattr(attention, "scale", None)
    try:
        return (0.0, 0.0) if beta is None else (largest(beta), 1.0 if scale is None else largest(scale))
    except (TypeError, ValueError):  # a plugin's own kind of beta or scale: no scale to read
        return 0.0, 0.0


def step_ratios(
    dim: int, variance: object, dt: float, attention: object = None, speed: object = 1.0, normalized: bool = False
) -> tuple[float, float]:
    """(q, a) of the module docstring: the field's ``variance`` k (a number or per-token tensor), the step dt,
    an attention (None or one without scales: a = 0), the scheme's ``speed`` f (a number or per-token tensor)
    and whether it ``normalized`` the attention's output (then the values' scale drops out)."""
    f = largest(speed)
    q = (dim - 1) * f * f * largest(variance) * dt
    beta, value = attention_scales(attention)
    return q, dt * f * beta * (1.0 if normalized else value)


def check_step(
    dim: int,
    variance: object,
    dt: float,
    attention: object = None,
    what: str = "dt",
    speed: object = 1.0,
    normalized: bool = False,
    attention_limit: float = ATTENTION_LIMIT,
) -> bool:
    """Warn (RuntimeWarning, one line) and return True when the step is outside the scheme's range
    (``attention_limit``: the scheme's bound on a, ``RK4_ATTENTION_LIMIT`` for the noise-free RK4 step)."""
    with torch.no_grad():  # a check: no graph (a checkpointed segment's recomputation skips it)
        q, a = step_ratios(dim, variance, dt, attention, speed, normalized)
    if q <= NOISE_LIMIT and a <= attention_limit:
        return False
    warnings.warn(
        f"{what}={dt:.3g} saturates the step: (d-1) f^2 k dt = {q:.3g} (limit {NOISE_LIMIT:g}), "
        f"f dt beta |s| = {a:.3g} (limit {attention_limit:g}); use more steps",
        RuntimeWarning,
        stacklevel=3,
    )
    return True


def check_scheme(scheme: SchemeSDE, state: Any, t: float, dt: float) -> bool:
    """``check_step`` for the limit SDE of a normalization scheme at ``state`` (theta, or (theta, r) for a
    scheme with a radius) and time t: its speed f there and its field's variance (1 / d for the normalized
    field of Peri-LN and nGPT)."""
    theta, r = state if scheme.radius else (state, None)
    d, normalized = theta.shape[-1], scheme.normalized is not None
    k = 1.0 / d if normalized else scheme.field.variance(theta)
    f = scheme.speed(scheme.norm.phase(t), r, t)
    return check_step(d, k, dt, scheme.attention, speed=f, normalized=normalized)
