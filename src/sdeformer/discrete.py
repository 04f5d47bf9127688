"""The stochastic transformer of THEORY section 1.

One layer = attention drift (scaled by dt) then common-noise diffusion (scaled by sqrt(dt)):

    Y_i      = LN( X_i + dt * Attn_X(X_i) )
    X_i(new) = LN( Y_i + dW_l(Y_i) ),    dW_l = sqrt(dt) G_l for the MLP noise

Tokens are ``(..., N, d)``; every leading index is an independent run with its own random stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

from .attention import Attention, NoAttention
from .errors import ConfigError
from .noise import NoiseField
from .rng import Seeds, Streams
from .sphere import project


@dataclass(frozen=True)
class Trajectory:
    """Saved token states. ``x``: (S, ..., N, d); ``layers``: (S,) layer indices; ``t``: (S,) times l dt."""

    x: torch.Tensor
    layers: torch.Tensor
    t: torch.Tensor

    @property
    def final(self) -> torch.Tensor:
        """The last saved state, ``(..., N, d)``."""
        return self.x[-1]


def check_tokens(x: torch.Tensor, name: str = "x0") -> None:
    """Raise ConfigError unless ``x`` is a finite floating tensor ``(..., N, d)`` with N >= 1, d >= 2."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ConfigError(name, type(x).__name__, "must be a floating-point torch.Tensor of shape (..., N, d)")
    if x.ndim < 2 or x.shape[-1] < 2 or x.shape[-2] < 1:
        raise ConfigError(name, tuple(x.shape), "must have shape (..., N, d) with N >= 1 and d >= 2")
    if not torch.isfinite(x).all():
        raise ConfigError(name, "NaN/inf", "must be finite")
    if (torch.linalg.vector_norm(x, dim=-1) == 0).any():
        raise ConfigError(name, "zero vector", "tokens must be non-zero (they are projected to the sphere)")


def integrate(step: Callable[[torch.Tensor, Streams], torch.Tensor], x0: torch.Tensor, dt: float, stop: int, *,
              seed: Seeds = 0, streams: Streams | None = None, save_every: int = 1,
              progress: Callable[[int], None] | None = None, start: int = 0, final: int | None = None) -> Trajectory:
    """The time loop of the discrete model and the SDE solvers (THEORY sections 1, 3): ``x = step(x, streams)``
    for k = start+1 .. stop from LN(x0) ``(..., N, d)``. Saves the start state, every k divisible by
    ``save_every`` and k = ``final`` (default ``stop``; the last step of the whole run); ``t`` = k dt.
    ``streams`` (default: ``Streams(seed)`` over the batch shape of x0) is passed to every step;
    ``progress(k)`` is called after each. Raises ConfigError for bad tokens or save_every."""
    check_tokens(x0)
    if not float(save_every) == int(save_every) or int(save_every) < 1:
        raise ConfigError("save_every", save_every, "must be a positive integer")
    final = stop if final is None else final
    streams = streams or Streams(seed, tuple(x0.shape[:-2]), x0.device)
    x = project(x0)
    saved, idx = [x], [start]
    for k in range(start + 1, stop + 1):
        x = step(x, streams)
        if k % save_every == 0 or k == final:
            saved.append(x)
            idx.append(k)
        if progress is not None:
            progress(k)
    steps = torch.tensor(idx)
    return Trajectory(torch.stack(saved), steps, steps.to(torch.float64) * dt)


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
