"""ALiBi attention (BEYOND section 7): softmax attention with the linear positional bias of Press et al.,

    logits_ij = beta <x_i, x_j> - lambda |i - j|,   j <= i when causal (the decoder ALiBi),

on top of the masks of ``attention.masks`` (graph, two species). ``lambda`` (the config's ``alibi``) is the
bias per token of distance; arXiv:2605.09213 writes the bias per unit of rescaled position s = i / N, so its
lambda is N times ours (``retrieval.paper_lambda``). ``lambda = 0`` is the plain (causal) softmax attention.
"""

from __future__ import annotations

import torch

from ..core.shapes import run_param
from ..core.validate import nonneg_float, per_run
from .masks import MaskedAttention


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
