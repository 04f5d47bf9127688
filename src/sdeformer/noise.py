"""Common noise: where the randomness enters the token update and how tokens share it (THEORY sections 1, 3).

A ``NoiseField`` answers one question per layer: given the token positions ``y`` ``(..., N, d)`` and the
step ``dt``, what is the common increment ``dW(y)`` ``(..., N, d)``? One random function is drawn per
layer and batch element and evaluated at every token, so identical tokens get identical increments.

``MLPNoise`` is the finite-width MLP of THEORY section 1, ``dW(y) = sqrt(dt) G_l(y)`` with

    G_l(y) = m^{-1/2} W_l act(d^{-1/2} U_l y + bU_l) + bW_l,  W, U ~ N(0, 1), bU ~ N(0, sU^2), bW ~ N(0, sW^2)

``su``/``sw`` may be tensors broadcastable to the batch shape (one noise law per batch element).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import torch

from .activations import Activation, get_activation
from .errors import ConfigError
from .rng import Streams


class NoiseField(Protocol):
    """A common-noise source: one fresh field per call, evaluated at all tokens of each batch element."""

    def increment(self, y: torch.Tensor, dt: float, streams: Streams) -> torch.Tensor:  # (..., N, d)
        ...


def _batch_std(value, batch: tuple[int, ...], y: torch.Tensor) -> torch.Tensor:
    """A scalar or batch-shaped standard deviation as ``(*batch, 1)`` for broadcasting."""
    t = torch.as_tensor(value, dtype=y.dtype, device=y.device)
    return t.expand(batch).unsqueeze(-1) if t.ndim else t.reshape(1)


@dataclass(frozen=True)
class MLPParams:
    """One layer's random MLP for every batch element."""

    U: torch.Tensor  # (..., m, d)
    bU: torch.Tensor  # (..., m)
    W: torch.Tensor  # (..., d, m)
    bW: torch.Tensor  # (..., d)


class MLPNoise:
    """The random width-m MLP block, freshly drawn in every layer and shared by all tokens.

    Args: activation (name, Activation or callable), width m >= 1, su, sw >= 0 (floats or batch tensors).
    Raises ConfigError for a bad width or a negative/NaN bias std.
    """

    def __init__(self, activation="relu", width: int = 2048, su=0.0, sw=0.0):
        if not float(width) == int(width) or int(width) < 1:
            raise ConfigError("width", width, "must be a positive integer")
        for name, value in (("su", su), ("sw", sw)):
            v = torch.as_tensor(value, dtype=torch.float64)
            if not torch.isfinite(v).all() or (v < 0).any():
                raise ConfigError(name, value, "bias std must be finite and >= 0")
        self.activation: Activation = get_activation(activation)
        self.width = int(width)
        self.su, self.sw = su, sw

    def sample(self, d: int, streams: Streams, like: torch.Tensor) -> MLPParams:
        """Draw one layer's (U, bU, W, bW) for every batch element of ``streams``."""
        m, dtype, batch = self.width, like.dtype, streams.batch
        U = streams.randn((m, d), dtype)  # (..., m, d)
        bU = streams.randn((m,), dtype) * _batch_std(self.su, batch, like)  # (..., m)
        W = streams.randn((d, m), dtype)  # (..., d, m)
        bW = streams.randn((d,), dtype) * _batch_std(self.sw, batch, like)  # (..., d)
        return MLPParams(U, bU, W, bW)

    def apply(self, p: MLPParams, y: torch.Tensor) -> torch.Tensor:
        """G(y) for one drawn MLP. ``y``: (..., N, d) -> (..., N, d)."""
        d = y.shape[-1]
        pre = y @ p.U.transpose(-1, -2) / math.sqrt(d) + p.bU.unsqueeze(-2)  # (..., N, m)
        return self.activation(pre) @ p.W.transpose(-1, -2) / math.sqrt(self.width) + p.bW.unsqueeze(-2)

    def increment(self, y: torch.Tensor, dt: float, streams: Streams) -> torch.Tensor:
        """sqrt(dt) G_l(y) with a fresh G_l. ``(..., N, d) -> (..., N, d)``."""
        return math.sqrt(dt) * self.apply(self.sample(y.shape[-1], streams, y), y)
