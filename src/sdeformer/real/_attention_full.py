"""The attention with a full ``d x d`` ``Q^T K`` beside the theory's ``beta I`` (THEORY section 1).

The family ``x_i -> s P_i sum_j softmax_j(<x_i, A x_j>) x_j`` (``V = s I``, ``A`` any ``d x d`` matrix; ``A = beta
I`` is the theory's) is fitted to the tangent part of a real block's attention output ``t_i`` (``attention``) by
maximising the explained fraction ``(sum <t, p>)^2 / (sum |p|^2 sum |t|^2)`` (``s`` in closed form) with Adam over
all blocks at once, starting from the fitted ``beta_l I``. ``A`` has ``d^2`` parameters per block, so it is
fitted on the even sentences of the first ``SENTENCES`` and its explained fraction is reported on the odd ones
(held out), beside the ``beta_l I`` fit's on the same held-out sentences; the 95 % intervals resample the
held-out sentences with ``A`` and ``beta_l`` fixed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ._attention import batch_sums, explained_fraction, prepared
from ._stats import LEVEL, RESAMPLES

SENTENCES = 48  # the first 48 sentences: 24 to fit A, 24 held out
STEPS = 30  # Adam steps (not run to convergence: the in-sample fraction still grows)
LEARNING_RATE = 0.1
CHUNK = 8  # sentences per padded batch of the fit (sorted by length: little padding)


def _logits(a: torch.Tensor, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """``<x_i, A x_j>`` ``(B, L, n, n)`` for ``A`` ``(L, d, d)``."""
    x = batch[0]
    return (x @ a.transpose(-1, -2)) @ x.transpose(-1, -2)


def _total(a: torch.Tensor, batches, causal: bool) -> torch.Tensor:
    """The three sums per block over all sentences of ``batches`` ``(3, L)``."""
    return torch.stack([batch_sums(_logits(a, batch), batch, causal).sum(0) for _, batch in batches]).sum(0)


def _held_out(batches, a: torch.Tensor, causal: bool, sentences: int, seed: int) -> dict:
    per = np.zeros((sentences, 3, a.shape[0]))
    with torch.no_grad():
        for rows, batch in batches:
            per[rows] = batch_sums(_logits(a, batch), batch, causal).double().numpy()
    frac = explained_fraction(per.sum(0))
    rng = np.random.default_rng(seed)
    draws = np.stack([explained_fraction(per[rng.integers(0, sentences, sentences)].sum(0)) for _ in range(RESAMPLES)])
    lo, hi = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
    return {"explained": frac.tolist(), "interval": [lo.tolist(), hi.tolist()]}


def fit_full(
    hidden: Sequence[torch.Tensor],
    attn: Sequence[torch.Tensor],
    beta: Sequence[float],
    causal: bool = False,
    *,
    sentences: int = SENTENCES,
    steps: int = STEPS,
    seed: int = 0,
) -> dict:
    """``{"explained_fit"`` (the fitting sentences), ``"explained"``, ``"explained_interval"`` (held out, full
    ``A``), ``"beta_explained"``, ``"beta_explained_interval"`` (held out, ``beta_l I``), ``"sentences"``}``, L
    values per list (intervals ``[low, high]``)."""
    use = min(sentences, len(attn))
    fit_rows, test_rows = list(range(0, use, 2)), list(range(1, use, 2))
    train = prepared([hidden[i] for i in fit_rows], [attn[i] for i in fit_rows], CHUNK)
    test = prepared([hidden[i] for i in test_rows], [attn[i] for i in test_rows])
    d = attn[0].shape[-1]
    start = torch.as_tensor(list(beta), dtype=torch.float32)[:, None, None] * torch.eye(d)
    a = torch.nn.Parameter(start.clone())
    opt = torch.optim.Adam([a], lr=LEARNING_RATE)
    for _ in range(steps):
        opt.zero_grad()
        total = _total(a, train, causal)  # (3, L)
        loss = -(total[0] ** 2 / (total[1] * total[2]).clamp_min(1e-30)).sum()
        loss.backward()
        opt.step()
    with torch.no_grad():
        fitted = _total(a, train, causal)
    full = _held_out(test, a.detach(), causal, len(test_rows), seed)
    base = _held_out(test, start, causal, len(test_rows), seed)
    return {
        "explained_fit": explained_fraction(fitted.double().numpy()).tolist(),
        "explained": full["explained"],
        "explained_interval": full["interval"],
        "beta_explained": base["explained"],
        "beta_explained_interval": base["interval"],
        "sentences": [len(fit_rows), len(test_rows)],
    }
