"""Resampled attention heads (BEYOND section 3; Koubbi, Geshkovski, Rigollet 2026, "Homogenized transformers").

Attention only: H heads per layer with parameters (V_h, A_h = W_h W_h'^T) i.i.d. over layers and heads,
shared by all tokens, ``x_i <- LN(x_i + (eta / H) sum_h B_h(x_i))`` with
``B_h(z) = sum_k softmax_k(beta <A_h z, x_k>) V_h x_k``, V entries N(0, sV^2) (default sV^2 = 1/d), W, W'
entries N(0, sA^2) (default sA^2 = d^{-1/2}, so A has entries of variance 1). The mean drift vanishes; as a
noise field of the generic layer this is ``increment = sqrt(dt / H) sum_h B_h(y_i)``: the layer with step eta
is the field at dt = eta^2 / H, and tau = alpha eta l = sV^2 (d - 1) t with alpha = (eta / H) sV^2 (d - 1).
Covariance C_ij = sV^2 E_A[<y_i, y_j>] I, y_i = sum_k softmax_k(beta <A y_i, y_k>) y_k: exact at beta = 0
(y_i = the token mean), else a Monte Carlo average over ``samples`` draws of A. At beta = 0 the mean
overlap m = N^-2 sum_ij <x_i, x_j> follows the logistic law m' = m(1 - m) in tau, up to O(1/d).
"""

from __future__ import annotations

import math

import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ._sources import BulkSource


class ResampledHeads:
    """H fresh random attention heads per layer as a common noise field (BEYOND section 3).

    Raises ConfigError for heads < 1, beta < 0, or non-positive sV / sA.
    """

    def __init__(
        self, heads: int = 1, beta: float = 0.0, *, sv: float | None = None, sa: float | None = None, samples: int = 256
    ):
        if int(heads) < 1:
            raise ConfigError("heads", heads, "must be a positive integer")
        if not math.isfinite(beta) or beta < 0:
            raise ConfigError("beta", beta, "inverse temperature must be finite and >= 0")
        for name, value in (("sv", sv), ("sa", sa)):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ConfigError(name, value, "must be finite and > 0")
        self.heads, self.beta, self.sv, self.sa, self.samples = int(heads), float(beta), sv, sa, int(samples)

    def _sv(self, d: int) -> float:
        return self.sv if self.sv is not None else 1.0 / math.sqrt(d)

    def averages(self, y: torch.Tensor, source: RandomSource, heads: int) -> torch.Tensor:
        """y_i^h = sum_k softmax_k(beta <A_h y_i, y_k>) y_k for ``heads`` fresh A_h: ``(..., H, N, d)``."""
        d = y.shape[-1]
        if self.beta == 0.0:
            return y.mean(-2, keepdim=True).unsqueeze(-3).expand(y.shape[:-2] + (heads,) + y.shape[-2:])
        sa = self.sa if self.sa is not None else d**-0.25
        w, w2 = source.randn((heads, d, d), y.dtype), source.randn((heads, d, d), y.dtype)  # (..., H, d, d)
        a = (w @ w2.transpose(-1, -2)) * (sa * sa)  # (..., H, d, d)
        yh = y.unsqueeze(-3)  # (..., 1, N, d)
        logits = (yh @ a.transpose(-1, -2)) @ yh.transpose(-1, -2) * self.beta  # (..., H, N, N): <A y_i, y_k>
        return torch.softmax(logits, dim=-1) @ yh  # (..., H, N, d)

    @classmethod
    def from_config(cls, p) -> ResampledHeads:
        """The field of a config (``registry.Params``)."""
        return cls(beta=p.beta)

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        return self.increment_and_variance(y, dt, source)[0]

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The increment and sV^2 mean_h |y_i^h|^2 ``(..., N, 1)`` from the same heads (exact at beta = 0,
        else an unbiased estimate of the variance, what the SDE step needs)."""
        d, h = y.shape[-1], self.heads
        avg = self.averages(y, source, h)  # (..., H, N, d)
        v = source.randn((h, d, d), y.dtype) * self._sv(d)  # (..., H, d, d)
        inc = (avg @ v.transpose(-1, -2)).sum(-3) * math.sqrt(dt / h)  # (..., N, d)
        return inc, avg.pow(2).sum(-1).mean(-2).unsqueeze(-1) * self._sv(d) ** 2

    def one_point(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        """Independent heads per token: sqrt(dt / H) sV (sum_h |y_i^h|^2)^{1/2} z_i, with each token's own A_h."""
        n, d, h = y.shape[-2], y.shape[-1], self.heads
        per_token = torch.stack([self.averages(y, source, h)[..., i, :] for i in range(n)], dim=-2)  # (.., H, N, d)
        norm = per_token.pow(2).sum((-3, -1)).unsqueeze(-1).sqrt()  # (..., N, 1)
        return source.randn((n, d), y.dtype) * norm * (self._sv(d) * math.sqrt(dt / h))

    def pair_covariance(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """C_ij = sV^2 E_A <y_i, y_j> I ``(..., N, N, d, d)`` (beta > 0: mean over ``samples`` draws of A)."""
        src = source or BulkSource.seeded(0, tuple(x.shape[:-2]), x.device)
        avg = self.averages(x, src, self.samples if self.beta else 1)  # (..., S, N, d)
        gram = (avg @ avg.transpose(-1, -2)).mean(-3) * self._sv(x.shape[-1]) ** 2  # (..., N, N)
        return gram[..., None, None] * torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        """tr(P C_ii) / (d - 1) = sV^2 E_A |y_i|^2, ``(..., N, 1)``."""
        c = self.pair_covariance(y)  # (..., N, N, d, d)
        return torch.diagonal(c[..., 0, 0], dim1=-2, dim2=-1).unsqueeze(-1)
