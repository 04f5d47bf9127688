"""The best attention of the theory's family for a real block's attention output (THEORY section 1).

On the directions ``x_i = h_i / |h_i|`` of one sentence, the theory's attention with ``Q^T K = beta I``, ``V = s I``
moves token i by ``s P_i sum_j softmax_j(beta <x_i, x_j>) x_j`` (``P_i = I - x_i x_i^T``, the tangent part: the
normalisation removes the rest). The real block moves it by ``t_i = P_i a_i / |h_i|``. For each beta the best s
is closed form, ``s = sum <t, p> / sum |p|^2``; beta maximises the explained fraction

    explained = 1 - sum |t - s p|^2 / sum |t|^2 = (sum <t, p>)^2 / (sum |p|^2 sum |t|^2)

(over all tokens of all sentences of a block) on a grid refined by a golden-section search. A causal model's
softmax runs over j <= i.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

BETA_GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
CHUNK = 32  # sentences per padded batch
GOLDEN_ROUNDS = 20  # bracket shrinks by 0.618^20 = 7e-5
_INV_PHI = (math.sqrt(5) - 1) / 2


def _prepared(hidden: Sequence[torch.Tensor], attn: Sequence[torch.Tensor]) -> list[tuple[torch.Tensor, ...]]:
    """Padded batches of (x ``(B, L, n, d)``, cosines ``(B, L, n, n)``, tangent target ``(B, L, n, d)``, token mask
    ``(B, 1, n)``); padding tokens have x = t = 0."""
    out = []
    for start in range(0, len(attn), CHUNK):
        hs, as_ = hidden[start : start + CHUNK], attn[start : start + CHUNK]
        n = max(a.shape[-2] for a in as_)
        layers, d = as_[0].shape[0], as_[0].shape[-1]
        x = torch.zeros(len(as_), layers, n, d, dtype=torch.float32)
        t = torch.zeros_like(x)
        mask = torch.zeros(len(as_), 1, n, dtype=torch.bool)
        for b, (h, a) in enumerate(zip(hs, as_, strict=True)):
            h = h[:layers].float()
            norm = torch.linalg.vector_norm(h, dim=-1, keepdim=True)
            xb, ab = h / norm, a.float() / norm
            k = a.shape[-2]
            x[b, :, :k], t[b, :, :k] = xb, ab - xb * (xb * ab).sum(-1, keepdim=True)
            mask[b, 0, :k] = True
        out.append((x, x @ x.transpose(-1, -2), t, mask))
    return out


def _sums(prepared, beta: torch.Tensor, causal: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per block: sum <t, p>, sum |p|^2, sum |t|^2 over all sentences at the per-block ``beta`` ``(L,)``."""
    tp = pp = tt = torch.zeros(beta.shape[0], dtype=torch.float64)
    for x, cos, t, mask in prepared:
        n = cos.shape[-1]
        logits = beta[:, None, None].float() * cos  # (B, L, n, n)
        blocked = ~mask[:, :, None, :]  # (B, 1, 1, n): padding keys
        if causal:
            blocked = blocked | torch.ones(n, n, dtype=torch.bool).triu(1)
        m = torch.softmax(logits.masked_fill(blocked, float("-inf")), dim=-1) @ x  # (B, L, n, d)
        p = (m - x * (x * m).sum(-1, keepdim=True)) * mask[..., None]  # padding queries: 0
        tp = tp + (t * p).sum((0, -1, -2)).double()
        pp = pp + (p * p).sum((0, -1, -2)).double()
        tt = tt + (t * t).sum((0, -1, -2)).double()
    return tp.numpy(), pp.numpy(), tt.numpy()


def _explained(sums) -> np.ndarray:
    tp, pp, tt = sums
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nan_to_num(tp**2 / (pp * tt))


def fit_attention(hidden: Sequence[torch.Tensor], attn: Sequence[torch.Tensor], causal: bool = False) -> dict:
    """beta_l, s_l and the explained fraction per block from the stream entering each block ``hidden[k][:L]`` and
    the attention's outputs ``attn[k]`` ``(L, n, d)``: ``{"beta", "scale", "explained"}`` (L values each). The
    grid's best beta is refined by a golden-section search of all blocks at once between its neighbours."""
    prepared = _prepared(hidden, attn)
    layers = attn[0].shape[0]

    def explained(beta: np.ndarray) -> np.ndarray:
        return _explained(_sums(prepared, torch.as_tensor(beta, dtype=torch.float64), causal))

    grid = np.array([explained(np.full(layers, b)) for b in BETA_GRID])  # (G, L)
    k = grid.argmax(0)
    betas = np.asarray(BETA_GRID)
    lo, hi = betas[np.maximum(k - 1, 0)], betas[np.minimum(k + 1, len(betas) - 1)]
    for _ in range(GOLDEN_ROUNDS):  # keep the bracket [lo, hi] of each block around its maximum
        b1, b2 = hi - _INV_PHI * (hi - lo), lo + _INV_PHI * (hi - lo)
        left = explained(b1) >= explained(b2)
        hi, lo = np.where(left, b2, hi), np.where(left, lo, b1)
    beta = (lo + hi) / 2
    better = explained(beta) >= grid.max(0)
    beta = np.where(better, beta, betas[k])
    tp, pp, tt = _sums(prepared, torch.as_tensor(beta), causal)
    return {"beta": beta.tolist(), "scale": (tp / pp).tolist(), "explained": _explained((tp, pp, tt)).tolist()}
