"""The limit SDE of THEORY section 3 and its solvers.

    dX_i = [ P_{X_i} Attn(mu_t^N, X_i) - (d-1)/2 k(X_i, X_i) X_i ] dt + P_{X_i} dW(t, X_i)

with W the common Brownian field (``GaussianField``: k = kappa(1); ``RandomFeatureField``: its own variance)
and the attention drift always taken from ``attention.drift(x)``, so any Attention plugs in. The radial term
is the Ito correction that keeps |X| = 1 in mean.

A ``Solver`` owns the time loop, saving and progress; a scheme only defines ``step`` and declares its strong
order (torchsde style). Schemes: ``ProjectedEulerMaruyama`` (step, then LN) and ``EulerMaruyama`` (plain).
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from .attention import Attention, NoAttention
from .loop import Trajectory, integrate
from .errors import ConfigError
from .rng import Seeds, Streams
from .sphere import project, tangent


class LimitSDE:
    """Drift and diffusion of THEORY section 3 for a field (``increment``, ``variance``) and an attention."""

    def __init__(self, field, attention: Attention | None = None):
        self.field = field
        self.attention = attention if attention is not None else NoAttention()

    @staticmethod
    def ito_correction(x: torch.Tensor, variance: "torch.Tensor | float") -> torch.Tensor:
        """-(d-1)/2 k(x, x) x, the radial Ito term that keeps |X| = 1 in mean (THEORY section 3)."""
        return -(x.shape[-1] - 1) / 2 * variance * x  # (..., N, d)

    def drift(self, x: torch.Tensor) -> torch.Tensor:
        """P_x Attn(x) - (d-1)/2 k(x, x) x. ``(..., N, d) -> (..., N, d)``."""
        ito = self.ito_correction(x, self.field.variance(x))  # (..., N, d)
        if isinstance(self.attention, NoAttention):
            return ito
        return tangent(x, self.attention.drift(x)) + ito

    def diffusion(self, x: torch.Tensor, dt: float, streams: Streams) -> torch.Tensor:
        """P_x dW(t, x) over one step. ``(..., N, d) -> (..., N, d)``."""
        return tangent(x, self.field.increment(x, dt, streams))

    def euler_increment(self, x: torch.Tensor, dt: float, streams: Streams) -> torch.Tensor:
        """dt b(x) + P_x dW(t, x), the Euler-Maruyama increment, with one tangent projection for both terms;
        a field with ``increment_and_variance`` evaluates its features once for both. ``(..., N, d)``."""
        joint = getattr(self.field, "increment_and_variance", None)
        if joint is not None:
            dw, var = joint(x, dt, streams)  # (..., N, d), (..., N, 1) or ()
        else:
            dw, var = self.field.increment(x, dt, streams), self.field.variance(x)
        if not isinstance(self.attention, NoAttention):
            dw = dw + dt * self.attention.drift(x)
        return tangent(x, dw) + dt * self.ito_correction(x, var)


class Solver:
    """Base solver: ``steps`` equal steps on [0, horizon]; subclasses define ``step`` and ``strong_order``."""

    name = "base"
    strong_order = float("nan")

    def __init__(self, sde: LimitSDE, steps: int, horizon: float):
        if not float(steps) == int(steps) or int(steps) < 1:
            raise ConfigError("steps", steps, "must be a positive integer")
        if not math.isfinite(horizon) or horizon <= 0:
            raise ConfigError("horizon", horizon, "must be finite and > 0")
        self.sde, self.steps, self.horizon = sde, int(steps), float(horizon)

    @property
    def dt(self) -> float:
        return self.horizon / self.steps

    def step(self, x: torch.Tensor, streams: Streams) -> torch.Tensor:  # (..., N, d) -> (..., N, d)
        raise NotImplementedError

    def solve(self, x0: torch.Tensor, seed: Seeds = 0, save_every: int = 1, *, streams: Streams | None = None,
              progress: Callable[[int], None] | None = None) -> Trajectory:
        """Integrate from ``x0`` ``(..., N, d)`` (projected first). Saves step 0, every ``save_every``-th step
        and the last; ``t`` in the Trajectory is step * dt. ``progress(k)`` is called after each step."""
        return integrate(self.step, x0, self.dt, self.steps, seed=seed, streams=streams, save_every=save_every,
                         progress=progress)


class EulerMaruyama(Solver):
    """X + b(X) dt + P_X dW(X): plain Euler-Maruyama, strong order 1/2 (|X| = 1 only in mean)."""

    name = "euler"
    strong_order = 0.5

    def step(self, x: torch.Tensor, streams: Streams) -> torch.Tensor:
        return x + self.sde.euler_increment(x, self.dt, streams)


class ProjectedEulerMaruyama(EulerMaruyama):
    """LN(X + b(X) dt + P_X dW(X)): Euler-Maruyama then renormalisation, strong order 1/2, stays on the sphere."""

    name = "projected"
    strong_order = 0.5

    def step(self, x: torch.Tensor, streams: Streams) -> torch.Tensor:
        return project(super().step(x, streams))


SCHEMES: dict[str, type[Solver]] = {"projected": ProjectedEulerMaruyama, "euler": EulerMaruyama}


def make_solver(sde: LimitSDE, steps: int, horizon: float, scheme: str = "projected") -> Solver:
    """The solver named ``scheme`` (one of SCHEMES). Raises ConfigError for an unknown name."""
    if scheme not in SCHEMES:
        raise ConfigError("scheme", scheme, f"one of {sorted(SCHEMES)}")
    return SCHEMES[scheme](sde, steps, horizon)
