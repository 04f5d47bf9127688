"""The stochastic transformer of THEORY section 1.

One layer = attention drift (scaled by dt) then common-noise diffusion (scaled by sqrt(dt)):

    Y_i      = LN( X_i + dt * Attn_X(X_i) )
    X_i(new) = LN( Y_i + dW_l(Y_i) ),    dW_l = sqrt(dt) G_l for the MLP noise

Tokens are ``(..., N, d)``; every leading index is an independent run with its own random stream.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from .attention import Attention, NoAttention
from .errors import ConfigError
from .loop import Trajectory, integrate
from .protocols import NoiseField
from .rng import Seeds, Streams
from .sphere import project


class StochasticTransformer:
    """Deep transformer with random MLP blocks (THEORY section 1).

    Args:
        layers: L >= 1. horizon: T > 0 (dt = T / L).
        mlp: a NoiseField (e.g. ``MLPNoise``) or None for no MLP.
        attention: an Attention (e.g. ``SoftmaxAttention``) or None for attention off.
    """

    def __init__(self, layers: int, horizon: float, mlp: NoiseField | None = None,
                 attention: Attention | None = None):
        if not float(layers) == int(layers) or int(layers) < 1:
            raise ConfigError("layers", layers, "must be a positive integer")
        if not math.isfinite(horizon) or horizon <= 0:
            raise ConfigError("horizon", horizon, "must be finite and > 0")
        self.layers, self.horizon = int(layers), float(horizon)
        self.mlp = mlp
        self.attention = attention if attention is not None else NoAttention()

    @property
    def dt(self) -> float:
        return self.horizon / self.layers

    def step(self, x: torch.Tensor, streams: Streams) -> torch.Tensor:
        """One layer. ``(..., N, d) -> (..., N, d)``."""
        dt = self.dt
        y = x if isinstance(self.attention, NoAttention) else project(x + dt * self.attention.drift(x))
        return y if self.mlp is None else project(y + self.mlp.increment(y, dt, streams))

    def run(self, x0: torch.Tensor, seed: Seeds = 0, save_every: int = 1, *, streams: Streams | None = None,
            progress: Callable[[int], None] | None = None, start_layer: int = 0,
            stop_layer: int | None = None) -> Trajectory:
        """Run layers ``start_layer+1 .. stop_layer`` (default: all L) from ``x0`` ``(..., N, d)``.

        ``x0`` is projected to the sphere first. ``seed``: int or one int per batch element (see
        :mod:`sdeformer.rng`); ``streams`` overrides it (pass the same Streams to continue a run in
        segments). Saves the start state, every layer divisible by ``save_every`` and the last one of
        the model. ``progress(l)`` is called after each layer.
        """
        stop = self.layers if stop_layer is None else int(stop_layer)
        if not 0 <= start_layer <= stop <= self.layers:
            raise ConfigError("stop_layer", stop_layer, f"need 0 <= start_layer <= stop_layer <= {self.layers}")
        return integrate(self.step, x0, self.dt, stop, seed=seed, streams=streams, save_every=save_every,
                         progress=progress, start=start_layer, final=self.layers)
