"""ALiBi attention (BEYOND section 7): softmax attention with the linear positional bias of Press et al.,

    logits_ij = beta <x_i, x_j> - lambda |i - j|,   j <= i when causal (the decoder ALiBi),

on top of the masks of ``attention._masks`` (graph, two species). ``lambda`` (the config's ``alibi``) is the
bias per token of distance; arXiv:2605.09213 writes the bias per unit of rescaled position s = i / N, so its
lambda is N times ours (``retrieval.paper_lambda``). ``lambda = 0`` is the plain (causal) softmax attention.
``PositionalALiBiAttention`` is that paper's own particle model (weights over positions only, strictly causal).
"""

from __future__ import annotations

import math

import torch

from ..core._errors import ConfigError
from ..core._shapes import run_param
from ..core._validate import nonneg_float, per_run, positive_float
from ._masks import MaskedAttention


class ALiBiAttention(MaskedAttention):
    """``MaskedAttention`` with the bias -``slope`` |i - j| on the self-attention logits (the cross-attention of
    two species has no positional bias). ``slope``: a float >= 0 or a ``(*batch,)`` tensor of them (a batched run).
    Raises ConfigError for a negative or non-finite slope (and as ``MaskedAttention``)."""

    def __init__(
        self,
        beta: float | torch.Tensor = 1.0,
        scale: float | torch.Tensor = 1.0,
        slope: float | torch.Tensor = 0.0,
        *,
        mask: str = "",
        causal: bool = True,
        cross: int = 0,
    ):
        super().__init__(beta, scale, mask=mask, causal=causal, cross=cross)
        self.slope = per_run(lambda name, v: nonneg_float(name, v, "ALiBi slope"), "alibi", slope)

    @classmethod
    def from_config(cls, p) -> ALiBiAttention:
        """The attention of a config (``registry.Params``): beta, attention_scale, alibi, mask, causal, cross."""
        return cls(p.beta, p.attention_scale, p.alibi, mask=p.mask, causal=p.causal, cross=p.cross)

    def bias(self, n: int, x: torch.Tensor) -> torch.Tensor:
        """-slope |i - j|, ``(..., N, N)`` (``(N, N)`` for one slope)."""
        idx = torch.arange(n, device=x.device, dtype=x.dtype)
        return -run_param(self.slope, x, 2) * (idx[:, None] - idx[None, :]).abs()


class PositionalALiBiAttention:
    """lost-in-the-middle's particle model (arXiv:2605.09213; BEYOND section 7): weights over positions only,
    strictly causal,

        D_i = beta sum_{j < i} w_ij e^{beta <x_i, x_j>} x_j,
        w_ij = e^{-lam (i - j) / N} / sum_{k < i} e^{-lam (i - k) / N},

    so token 0 does not move (D_0 = 0), and on the circle P_x D_i is its velocity beta sum_j w_ij e^{beta cos}
    sin(theta_j - theta_i) (the gradient of e^{beta cos}, not a softmax over tokens). ``lam`` is the paper's bias
    per unit of rescaled position (N times the per-token ``alibi``). Raises ConfigError for a bad beta or lam, and
    where e^{beta <x_i, x_j>} would exceed the dtype."""

    def __init__(self, beta: float = 1.0, lam: float = 1.0):
        self.beta = positive_float("beta", beta, "inverse temperature")
        self.lam = nonneg_float("lam", lam, "the ALiBi bias per unit of rescaled position")
        self._weights: dict = {}  # (N, dtype, device) -> w, the same at every step

    def weights(self, n: int, like: torch.Tensor) -> torch.Tensor:
        """w_ij ``(N, N)``: the positional weights, 0 on and above the diagonal (row 0 all 0)."""
        key = (n, like.dtype, like.device)
        if key not in self._weights:
            i = torch.arange(n, device=like.device)
            gap = (i[:, None] - i[None, :]).to(like.dtype)  # (N, N): i - j
            logits = (-self.lam / n * gap).masked_fill(gap <= 0, -math.inf)
            w = torch.softmax(logits, dim=-1)  # rows normalized over j < i
            self._weights[key] = torch.nan_to_num(w, nan=0.0)  # row 0 has no earlier token
        return self._weights[key]

    def drift(self, x: torch.Tensor, source=None) -> torch.Tensor:
        """D_i for every token ``(..., N, d)``."""
        if self.beta > math.log(torch.finfo(x.dtype).max):
            raise ConfigError("beta", self.beta, f"e^beta exceeds {x.dtype}")
        kernel = torch.exp(self.beta * (x @ x.transpose(-1, -2)))  # (..., N, N)
        return self.beta * (self.weights(x.shape[-2], x) * kernel) @ x
