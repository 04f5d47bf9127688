"""The best attention of the theory's family for a real block's attention output (THEORY section 1).

On the directions ``x_i = h_i / |h_i|`` of one sentence, the theory's attention with ``Q^T K = beta I``, ``V = s I``
moves token i by ``s P_i sum_j softmax_j(beta <x_i, x_j>) x_j`` (``P_i = I - x_i x_i^T``, the tangent part: the
normalisation removes the rest). The real block moves it by ``t_i = P_i a_i / |h_i|``. For each beta the best s
is closed form, ``s = sum <t, p> / sum |p|^2``; beta maximises the explained fraction

    explained = 1 - sum |t - s p|^2 / sum |t|^2 = (sum <t, p>)^2 / (sum |p|^2 sum |t|^2)

(over all tokens of all sentences of a block). The three sums are additive over sentences: they are computed per
sentence on the coarse ``BETA_GRID``, then on ``LOCAL`` equally spaced betas between the best coarse point's
neighbours (per block), interpolated there by a cubic spline and maximised on a fine grid; the 95 % intervals
of beta_l and of the explained fraction repeat that maximisation on sentences resampled with replacement. A causal
model's softmax runs over j <= i.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ._stats import LEVEL, RESAMPLES

BETA_GRID = np.concatenate([[0.0], np.geomspace(0.25, 64.0, 9)])  # the coarse grid: neighbours a factor 2 apart
LOCAL = 9  # the local grid: equally spaced between the best coarse point's neighbours, per block
FINE = 400  # points of the spline's maximisation on the local grid
CHUNK = 32  # sentences per padded batch (sentences sorted by length: little padding)


def prepared(
    hidden: Sequence[torch.Tensor], attn: Sequence[torch.Tensor], chunk: int = CHUNK
) -> list[tuple[np.ndarray, tuple[torch.Tensor, ...]]]:
    """Per padded batch of sentences of similar length: (their indices, (x ``(B, L, n, d)``, cosines
    ``G = x x^T`` and ``T = t x^T`` ``(B, L, n, n)``, ``sum |t|^2`` ``(B, L)``, token mask ``(B, 1, n)``)), with
    ``t`` the tangent target; padding tokens have x = t = 0. ``G``, ``T`` and the sums are float64."""
    order = np.argsort([a.shape[-2] for a in attn], kind="stable")
    out = []
    for start in range(0, len(order), chunk):
        rows = order[start : start + chunk]
        n = max(attn[i].shape[-2] for i in rows)
        layers, d = attn[rows[0]].shape[0], attn[rows[0]].shape[-1]
        x = torch.zeros(len(rows), layers, n, d, dtype=torch.float64)
        t = torch.zeros_like(x)
        mask = torch.zeros(len(rows), 1, n, dtype=torch.bool)
        for b, i in enumerate(rows):
            h, a = hidden[i][:layers].double(), attn[i].double()
            norm = torch.linalg.vector_norm(h, dim=-1, keepdim=True)
            xb, ab = h / norm, a / norm
            k = a.shape[-2]
            x[b, :, :k], t[b, :, :k] = xb, ab - xb * (xb * ab).sum(-1, keepdim=True)
            mask[b, 0, :k] = True
        xt = x.transpose(-1, -2)
        out.append((rows, (x.float(), x @ xt, t @ xt, (t * t).sum((-1, -2)), mask)))
    return out


def batch_sums(logits: torch.Tensor, batch: tuple[torch.Tensor, ...], causal: bool) -> torch.Tensor:
    """Per sentence and block of one prepared batch: (sum <t, p>, sum |p|^2, sum |t|^2) ``(B, 3, L)`` (float64)
    for the attention logits ``(B, L, n, n)`` (differentiable in them). With the softmax weights ``W``,
    ``p_i = m_i - x_i <x_i, m_i>``, ``m_i = sum_j W_ij x_j`` and ``<t_i, x_i> = 0``, every sum lives in the
    ``n x n`` cosines: ``<t_i, p_i> = (W T)``'s row sums, ``|p_i|^2 = (W G W^T)_ii - (sum_j W_ij G_ij)^2``."""
    _, g, tx, tt, mask = batch
    n = logits.shape[-1]
    blocked = ~mask[:, :, None, :]  # (B, 1, 1, n): padding keys
    if causal:
        blocked = blocked | torch.ones(n, n, dtype=torch.bool).triu(1)
    w = torch.softmax(logits.double().masked_fill(blocked, float("-inf")), dim=-1) * mask[..., None]  # (B, L, n, n)
    xm = (w * g).sum(-1)  # (B, L, n): <x_i, m_i>, 0 for padding queries
    pp = (((w @ g) * w).sum(-1) - xm * xm).sum(-1)
    return torch.stack([(w * tx).sum((-1, -2)), pp, tt], 1)


@torch.no_grad()
def sentence_sums(batches, beta: np.ndarray, causal: bool, sentences: int) -> np.ndarray:
    """Per sentence: the three sums per block at the per-block ``beta`` ``(L,)``: ``(S, 3, L)``."""
    out = np.zeros((sentences, 3, len(beta)))
    b = torch.as_tensor(beta, dtype=torch.float64)
    for rows, batch in batches:
        out[rows] = batch_sums(b[:, None, None] * batch[1], batch, causal).numpy()
    return out


def explained_fraction(sums: np.ndarray) -> np.ndarray:
    """(sum <t, p>)^2 / (sum |p|^2 sum |t|^2) from sums ``(..., 3, L)``."""
    tp, pp, tt = sums[..., 0, :], sums[..., 1, :], sums[..., 2, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(np.nan_to_num(tp**2 / (pp * tt)), 0.0, 1.0)  # at most 1 (Cauchy-Schwarz)


def _maximise(local: np.ndarray, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(beta, explained, s) per block ``(..., L)`` from sums ``(..., G, 3, L)`` on each block's own increasing
    betas ``local`` ``(G, L)``: a cubic spline in beta maximised on ``FINE`` points."""
    from scipy.interpolate import CubicSpline

    out = []
    for layer in range(local.shape[1]):
        x = local[:, layer]
        betas = np.linspace(x[0], x[-1], FINE)
        fine = CubicSpline(x, sums[..., layer], axis=-2)(betas)  # (..., F, 3)
        frac = explained_fraction(fine[..., None])[..., 0]  # (..., F)
        k = frac.argmax(-1)
        at = np.take_along_axis(fine, k[..., None, None], axis=-2)[..., 0, :]  # (..., 3)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.nan_to_num(at[..., 0] / at[..., 1])
        out.append((betas[k], np.take_along_axis(frac, k[..., None], -1)[..., 0], scale))
    return tuple(np.stack(col, -1) for col in zip(*out, strict=True))  # type: ignore[return-value]


def fit_attention(
    hidden: Sequence[torch.Tensor],
    attn: Sequence[torch.Tensor],
    causal: bool = False,
    resamples: int = RESAMPLES // 2,
    seed: int = 0,
) -> dict:
    """beta_l, s_l and the explained fraction per block from the stream entering each block ``hidden[k][:L]`` and
    the attention's outputs ``attn[k]`` ``(L, n, d)``: ``{"beta", "scale", "explained"}`` (L values each) and their
    95 % intervals ``"beta_interval"``, ``"explained_interval"``, ``"scale_interval"`` (``[low, high]``) over
    ``resamples`` resamplings of sentences (none when 0)."""
    batches = prepared(hidden, attn)
    layers, s = attn[0].shape[0], len(attn)
    coarse = np.stack([sentence_sums(batches, np.full(layers, b), causal, s) for b in BETA_GRID], 1)  # (S, G, 3, L)
    k = explained_fraction(coarse.sum(0)).argmax(0)  # (L,)
    lo, hi = BETA_GRID[np.maximum(k - 1, 0)], BETA_GRID[np.minimum(k + 1, len(BETA_GRID) - 1)]
    local = lo + (hi - lo) * np.linspace(0.0, 1.0, LOCAL)[:, None]  # (LOCAL, L)
    per = np.stack([sentence_sums(batches, b, causal, s) for b in local], 1)  # (S, LOCAL, 3, L)
    beta, explained, scale = _maximise(local, per.sum(0))
    out = {"beta": beta.tolist(), "scale": scale.tolist(), "explained": explained.tolist()}
    if resamples:
        rng = np.random.default_rng(seed)
        weights = np.stack([np.bincount(rng.integers(0, s, s), minlength=s) for _ in range(resamples)])  # (R, S)
        draws = _maximise(local, np.tensordot(weights.astype(np.float64), per, axes=(1, 0)))
        q = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
        for name, draw in zip(("beta", "explained", "scale"), draws, strict=True):
            out[f"{name}_interval"] = np.quantile(draw, q, axis=0).tolist()
    return out
