"""The step-size rule of the explicit schemes (``dynamics._sde``; the density solver ``spde._solver``):
two dimensionless numbers per step, checked before a run (THEORY section 3; docs/spde.md section 12).

- noise: q = (d - 1) k dt, the mean square E|P_x dW|^2 of one step's tangent increment for a field of variance
  k = k(x, x). The Ito correction multiplies the radius by 1 - q / 2 per Euler-Maruyama step, which reaches 0 at
  q = 2 (the token is sent through the origin); the weak order-1 expansion of one step (THEORY section 3) drops
  terms of order q^2, so the step is resolved only for q well below 1.
- attention: a = dt beta |s| (Q^T K = beta I, V = s I), dt times the Lipschitz scale of the softmax drift: its
  Jacobian in x is s beta Cov(y) with |y| = 1, and one step moves a token by at most dt |s|, so its attention
  weights e^{beta <x, y>} change by at most a factor e^a over a step the scheme freezes them on. Explicit Euler
  is stable for dt L < 2 (L the Lipschitz constant); the rule keeps a factor 2 inside.

``step_ratios`` gives (q, a); ``check_step`` warns (one-line RuntimeWarning) when q > NOISE_LIMIT or
a > ATTENTION_LIMIT, and returns whether the step is saturated. The density solver then marks the whole run
below resolution (``spde._diagnostics.resolution``): its numbers are not those of the SPDE.
"""

from __future__ import annotations

import warnings

import torch

NOISE_LIMIT = 1.0  # q: an rms tangent step of one radian; the Ito factor 1 - q/2 vanishes at 2
ATTENTION_LIMIT = 1.0  # a: attention weights change by at most e per step; explicit Euler's bound is 2


def largest(value: object) -> float:
    """The largest |entry| of a number or a tensor (one value per run), 0 for None."""
    if value is None:
        return 0.0
    if isinstance(value, torch.Tensor):
        return float(value.detach().abs().max()) if value.numel() else 0.0
    return abs(float(value))  # pyright: ignore[reportArgumentType]


def step_ratios(dim: int, variance: object, dt: float, attention: object = None) -> tuple[float, float]:
    """(q, a) of the module docstring: the field's ``variance`` k (a number or per-token tensor), the step dt,
    and an attention with ``beta`` and ``scale`` (0 when it has none: no softmax Lipschitz scale to read)."""
    q = (dim - 1) * largest(variance) * dt
    beta, scale = getattr(attention, "beta", None), getattr(attention, "scale", None)
    a = 0.0 if beta is None else dt * largest(beta) * (1.0 if scale is None else largest(scale))
    return q, a


def check_step(dim: int, variance: object, dt: float, attention: object = None, what: str = "dt") -> bool:
    """Warn (RuntimeWarning, one line) and return True when the step is outside the scheme's range."""
    q, a = step_ratios(dim, variance, dt, attention)
    if q <= NOISE_LIMIT and a <= ATTENTION_LIMIT:
        return False
    warnings.warn(
        f"{what}={dt:.3g} saturates the step: (d-1) k dt = {q:.3g} (limit {NOISE_LIMIT:g}), "
        f"dt beta |s| = {a:.3g} (limit {ATTENTION_LIMIT:g}); use more steps",
        RuntimeWarning,
        stacklevel=3,
    )
    return True
