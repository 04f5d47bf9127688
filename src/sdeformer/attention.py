"""Attention drifts Attn_X(x) (THEORY section 1). Every drift maps tokens ``(..., N, d)`` to ``(..., N, d)``.

    Attn_X(x_i) = sum_j softmax_j(<Q x_i, K X_j>) V X_j

``SoftmaxAttention(beta, scale)`` is the paper's shorthand Q^T K = beta I, V = scale I (with
Q = K = sqrt(beta) I); explicit Q, K, V matrices may be given instead. ``beta`` and ``scale`` may be
tensors broadcastable to the batch shape, so a sweep over settings runs as one tensor program.
The softmax uses ``scaled_dot_product_attention`` (O(N d) memory on CPU and CUDA).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import torch
import torch.nn.functional as F

from .errors import ConfigError


class Attention(Protocol):
    """What the model loop needs from an attention block."""

    def drift(self, x: torch.Tensor) -> torch.Tensor:  # (..., N, d) -> (..., N, d)
        ...


def _batch_param(value, x: torch.Tensor) -> torch.Tensor:
    """A scalar or batch-shaped parameter as a tensor broadcastable against ``(..., N, d)``."""
    t = torch.as_tensor(value, dtype=x.dtype, device=x.device)
    return t.reshape(t.shape + (1, 1))


def softmax_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """sum_j softmax_j(<q_i, k_j>) v_j with unit logit scale. q, k: ``(..., N, e)``, v: ``(..., N, f)``."""
    return F.scaled_dot_product_attention(q, k, v, scale=1.0)


@dataclass(frozen=True)
class SoftmaxAttention:
    """Single-head softmax attention; Q^T K = beta I and V = scale I unless matrices are given."""

    beta: "float | torch.Tensor" = 1.0
    scale: "float | torch.Tensor" = 1.0
    Q: torch.Tensor | None = None  # (d, d)
    K: torch.Tensor | None = None  # (d, d)
    V: torch.Tensor | None = None  # (d, d)

    def __post_init__(self) -> None:
        beta = torch.as_tensor(self.beta)
        if not torch.isfinite(beta).all() or (beta <= 0).any():
            raise ConfigError("beta", self.beta, "inverse temperature must be finite and > 0")
        if not torch.isfinite(torch.as_tensor(self.scale)).all():
            raise ConfigError("attention_scale", self.scale, "must be finite")
        for name in "QKV":
            m = getattr(self, name)
            if m is not None and (m.ndim != 2 or m.shape[0] != m.shape[1] or not torch.isfinite(m).all()):
                raise ConfigError(name, tuple(m.shape), "must be a finite square (d, d) matrix")

    def drift(self, x: torch.Tensor) -> torch.Tensor:
        """Attn_X(x_i) for every token. ``(..., N, d) -> (..., N, d)``."""
        q = x @ self.Q.T.to(x) if self.Q is not None else x * _batch_param(self.beta, x)  # (..., N, d)
        k = x @ self.K.T.to(x) if self.K is not None else x  # (..., N, d)
        v = x @ self.V.T.to(x) if self.V is not None else x  # (..., N, d)
        out = softmax_attention(q, k, v)  # (..., N, d)
        return out if self.V is not None else out * _batch_param(self.scale, x)


@dataclass(frozen=True)
class MultiHeadAttention:
    """Sum of heads' drifts (the theory allows multi-head sums)."""

    heads: Sequence[Attention]

    def drift(self, x: torch.Tensor) -> torch.Tensor:
        return sum(h.drift(x) for h in self.heads)


@dataclass(frozen=True)
class NoAttention:
    """Attention off: zero drift."""

    def drift(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
