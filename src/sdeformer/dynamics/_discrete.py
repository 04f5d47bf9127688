"""The stochastic transformer of THEORY section 1, with any normalization scheme (BEYOND section 6).

One layer = attention drift (scaled by dt) then common-noise diffusion (scaled by sqrt(dt)); with the paper's
Post-LN (the default):

    Y_i      = LN( X_i + dt * Attn_X(X_i) )
    X_i(new) = LN( Y_i + dW_l(Y_i) ),    dW_l = sqrt(dt) G_l for the MLP noise

Another scheme (``norms.schemes``: Pre-LN, Mix-LN, Peri-LN, nGPT, sqrt-scaling) places the normalizations
elsewhere around the same two sub-steps. Tokens are ``(..., N, d)``; every leading index is an independent run
with its own random stream.
"""

from __future__ import annotations

import torch

from ..attention._softmax import NoAttention
from ..contracts import AttentionDrift, NoiseField, NormScheme, RandomSource, require
from ._loop import TokenDynamics
from ._norms.schemes import PostLN


class StochasticTransformer(TokenDynamics):
    """Deep transformer with a common-noise block per layer (THEORY section 1; any noise of BEYOND section 0).

    Args:
        layers: L >= 1. horizon: T > 0 (dt = T / L).
        noise: a NoiseField (e.g. ``MLPNoise``, the paper's) or None for no noise.
        attention: an AttentionDrift (e.g. ``SoftmaxAttention``) or None for attention off.
        norm: a normalization scheme (``norms.schemes``, BEYOND section 6) or None for Post-LN, the paper's.
    ``run(x0, seed, saveat)`` runs it (``loop.TokenDynamics.run``); a scheme on the sphere starts from LN(x0), one
    with a radius (Pre-, Mix-, Peri-LN) from x0 as given. Layer k (1-based) runs at time t = (k - 1) dt, read
    from ``clock`` (layers done): ``run`` sets it to its ``start``, every ``step`` advances it (time-dependent
    schemes, Mix-LN and sqrt-scaling, need it). Raises ConfigError for a bad ``layers`` or ``horizon`` and for a
    noise, attention or norm that lacks its contract's methods.
    """

    def __init__(
        self,
        layers: int,
        horizon: float,
        noise: NoiseField | None = None,
        attention: AttentionDrift | None = None,
        norm: NormScheme | None = None,
    ):
        super().__init__(layers, horizon, "layers")
        for name, part, contract in (("noise", noise, NoiseField), ("attention", attention, AttentionDrift)):
            if part is not None:
                require(part, contract, name)
        if norm is not None:
            require(norm, NormScheme, "norm")
        self.noise = noise
        self.attention = attention
        self.norm = norm if norm is not None else PostLN()
        self.clock = 0

    @property
    def attention(self) -> AttentionDrift:
        """The attention block (``NoAttention`` when off)."""
        return self._part

    @attention.setter
    def attention(self, part: AttentionDrift | None) -> None:
        self._part = part if part is not None else NoAttention()
        self._attention = None if isinstance(self._part, NoAttention) else self._part  # what a layer calls

    @property
    def layers(self) -> int:
        return self.total

    def start_state(self, x0: torch.Tensor) -> torch.Tensor:
        """LN(x0) for a scheme on the sphere; x0 itself for one with a radius (its norm is the radius)."""
        return super().start_state(x0) if self.norm.on_sphere else x0

    def begin(self, start: int) -> None:
        self.clock = start

    def step(self, x: torch.Tensor, source: RandomSource) -> torch.Tensor:
        """One layer at time ``clock * dt`` (the clock then advances). ``(..., N, d) -> (..., N, d)``."""
        dt = self.dt
        t, self.clock = self.clock * dt, self.clock + 1
        return self.norm.layer(x, t, dt, self._attention, self.noise, source)
