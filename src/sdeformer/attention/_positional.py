"""Positional encodings as auxiliary variables (Imaizumi, Koyama, Isobe, Hayashi, arXiv 2605.30229; docs/field.md,
"Auxiliary variables").

Token i carries a fixed auxiliary variable, its position's rotation R_i = R(phi_i) with phi_i = 2 pi f i / N
(``frequency`` f: the turns of the first rotation plane over the N positions). R(phi) turns the coordinate plane
(2k, 2k + 1) by (k + 1) phi, k = 0 .. floor(d/2) - 1 (an odd d's last coordinate stays), like rotary position
encodings. The attention reads every token at its position, y_j = R_j x_j, and returns its update to the token's
own frame:

    Attn_i(x) = R_i^T sum_j softmax_j(beta <R_i x_i, R_j x_j>) s R_j x_j
              = sum_j softmax_j(beta <x_i, R(phi_j - phi_i) x_j>) s R(phi_j - phi_i) x_j,

so the logits and the values depend on the relative position only, and the positions never move (they attend
but are not updated). The model's interaction energy is E(x) = (1 / 2 beta N^2) sum_ij e^{beta <R_i x_i, R_j x_j>}
(the energy of THEORY's softmax model in the frame y = R x; LN commutes with R, so the noise-free layers of
``StochasticTransformer`` are those of the plain model on y). Its maximisers are y_i = c for all i, i.e.
x_i = R_i^T c: the token law is the push-forward of the positions' law under phi -> R(phi)^T c, not a point mass
(``maximiser``). ``frequency = 0`` is the plain softmax attention (every R_i = I: the maximiser collapses).
"""

from __future__ import annotations

import math

import torch

from ..core._validate import nonneg_float
from ._softmax import SoftmaxAttention


def position_angles(n: int, frequency: float, planes: int, like: torch.Tensor) -> torch.Tensor:
    """``(N, planes)`` angles (k + 1) 2 pi f i / N of token i's rotation in plane k."""
    i = torch.arange(n, dtype=like.dtype, device=like.device)
    k = torch.arange(1, planes + 1, dtype=like.dtype, device=like.device)
    return (2 * math.pi * frequency / n) * i[:, None] * k[None, :]


def rotate(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """R x for tokens ``(..., N, d)`` turned plane by plane by ``angles`` ``(N, P)``, P = floor(d/2)."""
    p = angles.shape[-1]
    u, v = x[..., 0 : 2 * p : 2], x[..., 1 : 2 * p : 2]  # (..., N, P) each
    c, s = angles.cos(), angles.sin()
    turned = torch.stack([c * u - s * v, s * u + c * v], -1).flatten(-2)  # (..., N, 2P)
    return torch.cat([turned, x[..., 2 * p :]], -1)


class PositionalAttention:
    """Softmax attention (Q^T K = beta I, V = scale I) on the tokens read at their positions (module docstring).
    ``beta``, ``scale``: numbers or ``(*batch,)`` tensors (a batched run). Raises ConfigError for a negative or
    non-finite ``frequency`` (and as ``SoftmaxAttention`` for beta and scale)."""

    def __init__(self, beta: float | torch.Tensor = 1.0, scale: float | torch.Tensor = 1.0, frequency: float = 1.0):
        self.inner = SoftmaxAttention(beta, scale)
        self.beta = beta
        self.frequency = nonneg_float("attention.frequency", frequency, "turns of the positions' rotation")

    @classmethod
    def from_config(cls, p) -> PositionalAttention:
        """The attention of a config (``registry.Params``): beta, attention_scale, attention.frequency."""
        return cls(p.beta, p.attention_scale, p.frequency)

    def angles(self, x: torch.Tensor) -> torch.Tensor:
        """``(N, floor(d/2))`` rotation angles of the positions of tokens ``x`` ``(..., N, d)``."""
        return position_angles(x.shape[-2], self.frequency, x.shape[-1] // 2, x)

    def frame(self, x: torch.Tensor) -> torch.Tensor:
        """y_i = R_i x_i, the tokens read at their positions ``(..., N, d)``."""
        return rotate(x, self.angles(x))

    def drift(self, x: torch.Tensor, source=None) -> torch.Tensor:
        """Attn_i(x) for every token ``(..., N, d) -> (..., N, d)``."""
        a = self.angles(x)
        return rotate(self.inner.drift(rotate(x, a)), -a)

    def maximiser(self, c: torch.Tensor, n: int) -> torch.Tensor:
        """The energy maximiser's tokens x_i = R_i^T c for a unit vector c ``(..., d)``: ``(..., N, d)``."""
        a = position_angles(n, self.frequency, c.shape[-1] // 2, c)
        return rotate(c.unsqueeze(-2).expand(*c.shape[:-1], n, c.shape[-1]), -a)

    def energy(self, x: torch.Tensor) -> torch.Tensor:
        """E(x) = (1 / 2 beta N^2) sum_ij e^{beta <R_i x_i, R_j x_j>} ``(...)`` (a number beta only)."""
        y = self.frame(x)
        beta = float(self.beta)
        return torch.exp(beta * (y @ y.transpose(-1, -2))).mean((-1, -2)) / (2 * beta)
