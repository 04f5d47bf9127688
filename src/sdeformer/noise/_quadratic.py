"""Random linear layer: a random quadratic form shared by all tokens (BEYOND section 4; Engel, Shalova 2026).

Stratonovich SDE ``dX = P_X o dQ_t X + gamma P_X o dW_t``, Q_t = (B_t + B_t^T)/sqrt(2) a symmetric matrix
Brownian motion (off-diagonal variance t, diagonal 2t), W an independent common vector Brownian motion (the
forcing, off at gamma = 0). Discrete chain: ``x <- LN(x + dQ_l x + gamma dW_l)``, increments over h shared by
all tokens. Covariances per unit time: C_ij = <x_i, x_j> I + x_j x_i^T + gamma^2 I, so tr(P_x C_ii) =
(n - 1)(1 + gamma^2) and P_x C_ii x = 0; the Ito form (the limit of the chain) is

    dX = P_X (dQ X + gamma dW) - ((n - 1)/2)(1 + gamma^2) X dt

which ``sde.LimitSDE`` integrates with ``variance`` = |x|^2 + gamma^2. Two tokens without forcing:
du = -2u(1 - u^2) dt + 2(1 - u^2) dB in any dimension, so P(antipodal) = theta_0 / pi, and one token is a
spherical Brownian motion, E<X_t, X_0> = exp(-(n - 1) t / 2). With forcing, the tokens synchronize:
E dist(X_t, attractor) <= pi exp(-lambda t), lambda = 2 gamma^2 (n - 1)/(gamma^2 + 4) (a bound).
"""

from __future__ import annotations

import math

import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError


def forcing_rate_bound(gamma: float, dim: int) -> float:
    """lambda = 2 gamma^2 (n - 1)/(gamma^2 + 4), the synchronization rate bound of BEYOND 4."""
    return 2 * gamma**2 * (dim - 1) / (gamma**2 + 4)


class QuadraticForm:
    """The random quadratic form noise field, with optional forcing ``gamma`` >= 0 (BEYOND section 4).

    ``increment(y, dt, source)``: ``(..., N, d) -> (..., N, d)``, dQ y_i + gamma dW with one symmetric
    Gaussian dQ ``(..., d, d)`` and one dW ``(..., d)`` per batch element (d^2 + d normals).
    Raises ConfigError for a negative or non-finite gamma.
    """

    def __init__(self, forcing: float = 0.0):
        if not math.isfinite(forcing) or forcing < 0:
            raise ConfigError("forcing", forcing, "gamma must be finite and >= 0")
        self.forcing = float(forcing)

    @classmethod
    def from_config(cls, p) -> QuadraticForm:
        """The field of a config (``registry.Params``)."""
        return cls()

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        d = y.shape[-1]
        b = source.randn((d, d), y.dtype)  # (..., d, d)
        dq = (b + b.transpose(-1, -2)) * math.sqrt(dt / 2)  # (..., d, d), symmetric
        out = y @ dq  # (..., N, d): (dQ y_i)^T = y_i^T dQ
        if self.forcing:
            out = out + (self.forcing * math.sqrt(dt)) * source.randn((d,), y.dtype).unsqueeze(-2)
        return out

    def one_point(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        """An independent copy at each token: sqrt(dt) ((|y|^2 + gamma^2)^{1/2} z + y w), covariance
        dt (|y|^2 I + y y^T + gamma^2 I). ``(..., N, d) -> (..., N, d)``."""
        n, d = y.shape[-2:]
        z = source.randn((n, d), y.dtype)  # (..., N, d)
        w = source.randn((n, 1), y.dtype)  # (..., N, 1)
        scale = (y.pow(2).sum(-1, keepdim=True) + self.forcing**2).sqrt()  # (..., N, 1)
        return (z * scale + y * w) * math.sqrt(dt)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        """tr(P C_ii) / (n - 1) = |y|^2 + gamma^2, ``(..., N, 1)``."""
        return y.pow(2).sum(-1, keepdim=True) + self.forcing**2

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.increment(y, dt, source), self.variance(y)

    def pair_covariance(self, x: torch.Tensor) -> torch.Tensor:
        """C_ij = <x_i, x_j> I + x_j x_i^T + gamma^2 I, ``(..., N, d) -> (..., N, N, d, d)``."""
        eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
        gram = x @ x.transpose(-1, -2)  # (..., N, N)
        outer = x.unsqueeze(-3).unsqueeze(-1) * x.unsqueeze(-2).unsqueeze(-2)  # (..., N, N, d, d): x_j x_i^T
        return (gram[..., None, None] + self.forcing**2) * eye + outer
