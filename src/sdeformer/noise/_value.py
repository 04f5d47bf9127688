"""Value-matrix noise (BEYOND section 2, in the spirit of Fedorov, Sander, Elie, Marion, Lauriere 2026).

The randomness sits in the value matrix of the attention layer, fresh per layer and shared by all tokens:

    x_i <- LN( x_i + sqrt(h) Z_l y_i(X) ),   y_i(X) = sum_j softmax_j(beta <x_i, x_j>) x_j,
    Z_l: d x d with i.i.d. N(0, sigma^2 / d) entries

so C_ij = (sigma^2 / d) <y_i, y_j> I: the noise itself interacts through attention. The optional deterministic
part V = v0 I + Z is the usual attention drift: combine this field with ``SoftmaxAttention(beta, scale=v0)``
in the model. Two tokens, sigma = 1 (p = 1/(1 + e^{-beta(1-u)}), q = 1 - p, s = p^2 + q^2, r = 2pq):
du = ((1 - u^2)/d)((d - 2) r - s u) dt + sqrt(2/d)(1 - u^2) sqrt(s) dB; the antipodal state attracts with
positive probability iff beta > beta_c(d) = arccosh(sqrt((d - 1)/2)) (``quadrature.value_noise_beta_c``).
"""

from __future__ import annotations

import math

import torch

from ..attention._softmax import softmax_attention
from ..contracts import RandomSource
from ..core._errors import ConfigError


def attention_average(x: torch.Tensor, beta: float) -> torch.Tensor:
    """y_i = sum_j softmax_j(beta <x_i, x_j>) x_j, ``(..., N, d) -> (..., N, d)`` (``softmax_attention``: the
    attention's own paths; a plain softmax below 2^16 scores was 1.5-1.7x slower, docs/benchmarks.md)."""
    return softmax_attention(beta * x, x, x)


class ValueNoise:
    """Random value matrices Z ~ N(0, sigma^2 / d) per layer, shared by all tokens (BEYOND section 2).

    ``increment(y, dt, source)``: sqrt(dt) Z y_i(Y) ``(..., N, d) -> (..., N, d)``, d^2 normals per batch
    element. Raises ConfigError for beta < 0 or sigma <= 0 (or non-finite).
    """

    def __init__(self, beta: float = 1.0, sigma: float = 1.0):
        if not math.isfinite(beta) or beta < 0:
            raise ConfigError("beta", beta, "inverse temperature must be finite and >= 0")
        if not math.isfinite(sigma) or sigma <= 0:
            raise ConfigError("sigma", sigma, "value-noise std must be finite and > 0")
        self.beta, self.sigma = float(beta), float(sigma)

    @classmethod
    def from_config(cls, p) -> ValueNoise:
        """The field of a config (``registry.Params``)."""
        return cls(beta=p.beta)

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        d = y.shape[-1]
        z = source.randn((d, d), y.dtype) * (self.sigma * math.sqrt(dt / d))  # (..., d, d)
        return attention_average(y, self.beta) @ z.transpose(-1, -2)  # (..., N, d): (Z y_i)^T

    def one_point(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        """An independent Z_i per token: sqrt(dt) sigma / sqrt(d) |y_i| z_i. ``(..., N, d) -> (..., N, d)``."""
        n, d = y.shape[-2:]
        norm = torch.linalg.vector_norm(attention_average(y, self.beta), dim=-1, keepdim=True)  # (..., N, 1)
        return source.randn((n, d), y.dtype) * norm * (self.sigma * math.sqrt(dt / d))

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        """tr(P C_ii) / (d - 1) = (sigma^2 / d) |y_i|^2, ``(..., N, 1)``."""
        avg = attention_average(y, self.beta)  # (..., N, d)
        return avg.pow(2).sum(-1, keepdim=True) * (self.sigma**2 / y.shape[-1])

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.increment(y, dt, source), self.variance(y)

    def pair_covariance(self, x: torch.Tensor) -> torch.Tensor:
        """C_ij = (sigma^2 / d) <y_i, y_j> I, ``(..., N, d) -> (..., N, N, d, d)``."""
        avg = attention_average(x, self.beta)  # (..., N, d)
        eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return (avg @ avg.transpose(-1, -2) * (self.sigma**2 / x.shape[-1]))[..., None, None] * eye
