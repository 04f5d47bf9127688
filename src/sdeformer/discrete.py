"""The stochastic transformer of THEORY section 1.

One layer = attention drift (scaled by dt) then common-noise diffusion (scaled by sqrt(dt)):

    Y_i      = LN( X_i + dt * Attn_X(X_i) )
    X_i(new) = LN( Y_i + dW_l(Y_i) ),    dW_l = sqrt(dt) G_l for the MLP noise

Tokens are ``(..., N, d)``; every leading index is an independent run with its own random stream.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from .attention import Attention, NoAttention, attention_drift
from .errors import ConfigError
from .loop import Observer, Trajectory, integrate
from .protocols import NoiseField, RandomSource
from .rng import Seeds
from .sphere import project
from .validate import positive_float, positive_int


class StochasticTransformer:
    """Deep transformer with random MLP blocks (THEORY section 1).

    Args:
        layers: L >= 1. horizon: T > 0 (dt = T / L).
        mlp: a NoiseField (e.g. ``MLPNoise``) or None for no MLP.
        attention: an Attention (e.g. ``SoftmaxAttention``) or None for attention off.
    Raises ConfigError for a bad ``layers`` or ``horizon``.
    """

    def __init__(self, layers: int, horizon: float, mlp: NoiseField | None = None, attention: Attention | None = None):
        self.layers, self.horizon = positive_int("layers", layers), positive_float("horizon", horizon)
        self.mlp = mlp
        self.attention = attention if attention is not None else NoAttention()

    @property
    def dt(self) -> float:
        return self.horizon / self.layers

    def step(self, x: torch.Tensor, streams: RandomSource) -> torch.Tensor:
        """One layer. ``(..., N, d) -> (..., N, d)``."""
        dt = self.dt
        attn = self.attention
        y = x if isinstance(attn, NoAttention) else project(x + dt * attention_drift(attn, x, streams))
        return y if self.mlp is None else project(y + self.mlp.increment(y, dt, streams))

    def run(
        self,
        x0: torch.Tensor,
        seed: Seeds = 0,
        save_every: int = 1,
        *,
        streams: RandomSource | None = None,
        progress: Callable[[int], None] | None = None,
        start_layer: int = 0,
        stop_layer: int | None = None,
        save_at: Sequence[int] | None = None,
        observer: Observer | None = None,
    ) -> Trajectory:
        """Run layers ``start_layer+1 .. stop_layer`` (default: all L) from ``x0`` ``(..., N, d)`` (see
        ``loop.integrate``).

        ``x0`` is projected to the sphere first. ``seed``: int or one int per batch element (see
        :mod:`sdeformer.rng`); ``streams`` overrides it (pass the same Streams to continue a run in
        segments). Saves the start state, every layer divisible by ``save_every`` and the last one of
        the model, or, when ``save_at`` (sorted unique layers in [start_layer, stop_layer]) is given, the
        start state and exactly those layers. ``observer(l, l dt, x)`` and then ``progress(l)`` are called
        after each layer. Raises ConfigError for bad tokens, layer range, save_every or save_at.
        """
        stop = self.layers if stop_layer is None else int(stop_layer)
        if not 0 <= start_layer <= stop <= self.layers:
            raise ConfigError("stop_layer", stop_layer, f"need 0 <= start_layer <= stop_layer <= {self.layers}")
        return integrate(
            self.step,
            x0,
            self.dt,
            stop,
            seed=seed,
            streams=streams,
            save_every=save_every,
            save_at=save_at,
            observer=observer,
            progress=progress,
            start=start_layer,
            final=self.layers,
        )
