"""The limit SDE of THEORY section 3 and its solvers.

    dX_i = [ P_{X_i} Attn(mu_t^N, X_i) - (d-1)/2 k(X_i, X_i) X_i ] dt + P_{X_i} dW(t, X_i)

with W the common Brownian field (a ``LimitField``: ``GaussianField``, k = kappa(1); ``RandomFeatureField``,
its own variance; ``ReplayedNoise`` of either) and the attention drift always taken from
``attention.drift(x)``, so any Attention plugs in. The radial term is the Ito correction that keeps |X| = 1
in mean.

``LimitSDE`` exposes the pieces (attention drift, Ito correction, field increment and variance); a scheme
combines them in ``step`` and declares its strong and weak order; the ``Solver`` base owns the time loop,
saving and observing (torchsde style). Schemes: ``ProjectedEulerMaruyama`` (step, then LN) and
``EulerMaruyama`` (plain).
"""

from __future__ import annotations

import torch

from ..attention.softmax import NoAttention
from ..contracts import AttentionDrift, LimitField, RandomSource, require
from ..core.sphere import project, tangent
from ..registry import SOLVERS
from .loop import TokenDynamics


class LimitSDE:
    """Drift and diffusion of THEORY section 3 for a ``LimitField`` and an attention (None: off)."""

    def __init__(self, field: LimitField, attention: AttentionDrift | None = None):
        require(field, LimitField, "field")
        if attention is not None:
            require(attention, AttentionDrift, "attention")
        self.field = field
        self.attention = attention if attention is not None else NoAttention()

    @staticmethod
    def ito_correction(x: torch.Tensor, variance: torch.Tensor | float) -> torch.Tensor:
        """-(d-1)/2 k(x, x) x, the radial Ito term that keeps |X| = 1 in mean (THEORY section 3)."""
        return -(x.shape[-1] - 1) / 2 * variance * x  # (..., N, d)

    def attention_drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor | None:
        """Attn(x) before the tangent projection, or None when attention is off; a block that draws random numbers
        (random-batch attention) draws them from the run's ``source``. ``(..., N, d) -> (..., N, d)``."""
        return None if isinstance(self.attention, NoAttention) else self.attention.drift(x, source)

    def drift(self, x: torch.Tensor) -> torch.Tensor:
        """b(x) = P_x Attn(x) - (d-1)/2 k(x, x) x. ``(..., N, d) -> (..., N, d)``."""
        ito = self.ito_correction(x, self.field.variance(x))  # (..., N, d)
        attn = self.attention_drift(x)
        return ito if attn is None else tangent(x, attn) + ito

    def diffusion(self, x: torch.Tensor, dt: float, streams: RandomSource) -> torch.Tensor:
        """P_x dW(t, x) over one step. ``(..., N, d) -> (..., N, d)``."""
        return tangent(x, self.field.increment(x, dt, streams))


class Solver(TokenDynamics):
    """Base solver: ``steps`` equal steps on [0, horizon]; a scheme defines ``step`` and declares its
    ``strong_order`` and ``weak_order``; ``run(x0, seed, saveat)`` integrates (``loop.TokenDynamics.run``, the
    discrete model's verb). Raises ConfigError for steps < 1 or a horizon that is not finite > 0."""

    strong_order: float
    weak_order: float

    def __init__(self, sde: LimitSDE, steps: int, horizon: float):
        super().__init__(steps, horizon)
        self.sde = sde

    @property
    def steps(self) -> int:
        return self.total

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(steps={self.steps}, horizon={self.horizon}, "
            f"strong_order={self.strong_order}, weak_order={self.weak_order})"
        )


class EulerMaruyama(Solver):
    """X + b(X) dt + P_X dW(X) (THEORY section 3): plain Euler-Maruyama, strong order 1/2, weak order 1
    (|X| = 1 only in mean).

    The attention drift and the noise share one tangent projection, P_X (dW + dt Attn(X)), and the field gives
    its increment and variance from one evaluation (``increment_and_variance``)."""

    strong_order = 0.5
    weak_order = 1.0

    def step(self, x: torch.Tensor, source: RandomSource) -> torch.Tensor:
        """One step. ``(..., N, d) -> (..., N, d)``."""
        dt, sde = self.dt, self.sde
        dw, var = sde.field.increment_and_variance(x, dt, source)  # (..., N, d), (..., N, 1) or ()
        attn = sde.attention_drift(x, source)  # (..., N, d) or None
        if attn is not None:
            dw = dw + dt * attn
        return x + (tangent(x, dw) + dt * sde.ito_correction(x, var))


class ProjectedEulerMaruyama(EulerMaruyama):
    """LN(X + b(X) dt + P_X dW(X)): the Euler-Maruyama step, then renormalisation (stays on the sphere);
    strong order 1/2, weak order 1."""

    def step(self, x: torch.Tensor, source: RandomSource) -> torch.Tensor:
        """One step. ``(..., N, d) -> (..., N, d)``."""
        return project(super().step(x, source))


def make_solver(sde: LimitSDE, steps: int, horizon: float, scheme: str = "projected") -> Solver:
    """The solver named ``scheme`` in ``registry.SOLVERS``. Raises ConfigError for an unknown name, bad steps or
    horizon."""
    return SOLVERS.check(SOLVERS[scheme])(sde, steps, horizon)
