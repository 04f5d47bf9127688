"""The stochastic transformer of THEORY section 1.

One layer = attention drift (scaled by dt) then common-noise diffusion (scaled by sqrt(dt)):

    Y_i      = LN( X_i + dt * Attn_X(X_i) )
    X_i(new) = LN( Y_i + dW_l(Y_i) ),    dW_l = sqrt(dt) G_l for the MLP noise

Tokens are ``(..., N, d)``; every leading index is an independent run with its own random stream.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..attention.softmax import NoAttention
from ..contracts import AttentionDrift, NoiseField, RandomSource
from ..core.errors import ConfigError
from ..core.rng import Seeds
from ..core.sphere import project
from ..core.validate import positive_float, positive_int
from .loop import SaveAt, Trajectory, run_tokens


class StochasticTransformer:
    """Deep transformer with a common-noise block per layer (THEORY section 1; any noise of BEYOND section 0).

    Args:
        layers: L >= 1. horizon: T > 0 (dt = T / L).
        noise: a NoiseField (e.g. ``MLPNoise``, the paper's) or None for no noise.
        attention: an AttentionDrift (e.g. ``SoftmaxAttention``) or None for attention off.
    Raises ConfigError for a bad ``layers`` or ``horizon``.
    """

    def __init__(
        self,
        layers: int,
        horizon: float,
        noise: NoiseField | None = None,
        attention: AttentionDrift | None = None,
    ):
        self.layers, self.horizon = positive_int("layers", layers), positive_float("horizon", horizon)
        self.noise = noise
        self.attention = attention if attention is not None else NoAttention()

    @property
    def dt(self) -> float:
        return self.horizon / self.layers

    def step(self, x: torch.Tensor, streams: RandomSource) -> torch.Tensor:
        """One layer. ``(..., N, d) -> (..., N, d)``."""
        dt = self.dt
        attn = self.attention
        y = x if isinstance(attn, NoAttention) else project(x + dt * attn.drift(x, streams))
        return y if self.noise is None else project(y + self.noise.increment(y, dt, streams))

    def run(
        self,
        x0: torch.Tensor,
        seed: Seeds = 0,
        saveat: SaveAt | int | None = None,
        *,
        streams: RandomSource | None = None,
        progress: Callable[[int], None] | None = None,
        start: int = 0,
        stop: int | None = None,
    ) -> Trajectory:
        """Run layers ``start+1 .. stop`` (default: all L) from LN(x0) ``(..., N, d)`` (``loop.integrate``).

        ``seed``: int or one int per batch element (see :mod:`sdeformer.core.rng`); ``streams`` overrides it
        (pass the same Streams to continue a run in segments). ``saveat`` (``loop.SaveAt``, or an int k for
        every k-th layer; default every layer): the start state is always saved, and with ``every`` the model's
        last layer too. ``progress(l)`` is called after each layer. Raises ConfigError for bad tokens, layer
        range or saveat."""
        stop = self.layers if stop is None else int(stop)
        if not 0 <= start <= stop <= self.layers:
            raise ConfigError("stop", stop, f"need 0 <= start <= stop <= {self.layers}")
        return run_tokens(
            self.step, x0, self.dt, stop, seed=seed, streams=streams, saveat=saveat, progress=progress,
            start=start, final=self.layers,
        )  # fmt: skip
