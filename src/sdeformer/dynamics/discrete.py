"""The stochastic transformer of THEORY section 1.

One layer = attention drift (scaled by dt) then common-noise diffusion (scaled by sqrt(dt)):

    Y_i      = LN( X_i + dt * Attn_X(X_i) )
    X_i(new) = LN( Y_i + dW_l(Y_i) ),    dW_l = sqrt(dt) G_l for the MLP noise

Tokens are ``(..., N, d)``; every leading index is an independent run with its own random stream.
"""

from __future__ import annotations

import torch

from ..attention.softmax import NoAttention
from ..contracts import AttentionDrift, NoiseField, RandomSource, require
from ..core.sphere import project
from .loop import TokenDynamics


class StochasticTransformer(TokenDynamics):
    """Deep transformer with a common-noise block per layer (THEORY section 1; any noise of BEYOND section 0).

    Args:
        layers: L >= 1. horizon: T > 0 (dt = T / L).
        noise: a NoiseField (e.g. ``MLPNoise``, the paper's) or None for no noise.
        attention: an AttentionDrift (e.g. ``SoftmaxAttention``) or None for attention off.
    ``run(x0, seed, saveat)`` runs it (``loop.TokenDynamics.run``). Raises ConfigError for a bad ``layers`` or
    ``horizon`` and for a noise or attention that lacks its contract's methods.
    """

    def __init__(
        self,
        layers: int,
        horizon: float,
        noise: NoiseField | None = None,
        attention: AttentionDrift | None = None,
    ):
        super().__init__(layers, horizon, "layers")
        if noise is not None:
            require(noise, NoiseField, "noise")
        if attention is not None:
            require(attention, AttentionDrift, "attention")
        self.noise = noise
        self.attention = attention if attention is not None else NoAttention()

    @property
    def layers(self) -> int:
        return self.total

    def step(self, x: torch.Tensor, streams: RandomSource) -> torch.Tensor:
        """One layer. ``(..., N, d) -> (..., N, d)``."""
        dt = self.dt
        attn = self.attention
        y = x if isinstance(attn, NoAttention) else project(x + dt * attn.drift(x, streams))
        return y if self.noise is None else project(y + self.noise.increment(y, dt, streams))
