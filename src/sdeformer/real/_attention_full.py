"""The attention with a full ``d x d`` ``Q^T K`` beside the theory's ``beta I`` (THEORY section 1).

The family ``x_i -> s P_i sum_j softmax_j(<x_i, A x_j>) x_j`` (``V = s I``, ``A`` any ``d x d`` matrix; ``A = beta
I`` is the theory's) is fitted to the tangent part of a real block's attention output ``t_i`` (``attention``) by
maximising the explained fraction ``(sum <t, p>)^2 / (sum |p|^2 sum |t|^2)`` (``s`` in closed form) with Adam,
all blocks at once (their parameters do not interact), starting from the fitted ``beta_l I``. ``A`` has ``d^2``
parameters per block, so the first ``SENTENCES`` sentences are split three ways (index mod 3): ``A`` is fitted on
the first third, stopped early on the second (per block, the ``A`` of the step with the best validation fraction;
the fit ends when no block's best has risen by more than ``TOLERANCE`` for ``PATIENCE`` steps, or after
``MAX_STEPS``), and
scored on the last third (held out), beside the ``beta_l I`` fit's fraction on the same held-out sentences. The
in-sample fraction keeps growing long after the validation fraction has peaked (the fit learns the fitting
sentences, docs/real.md), so early stopping, not the in-sample optimum, is the convergence criterion. The 95 %
intervals resample the held-out sentences with ``A`` and ``beta_l`` fixed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ._attention import batch_sums, explained_fraction, prepared
from ._stats import LEVEL, RESAMPLES

SENTENCES = 72  # the first 72 sentences: 24 to fit A, 24 to stop the fit, 24 held out
MAX_STEPS = 200
PATIENCE = 10  # steps without a validation gain above TOLERANCE in any block before the fit stops
TOLERANCE = 1e-4  # of the explained fraction
LEARNING_RATE = 0.1
CHUNK = 8  # sentences per padded batch of the fit (sorted by length: little padding)


def _logits(a: torch.Tensor, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """``<x_i, A x_j>`` ``(B, L, n, n)`` for ``A`` ``(L, d, d)``."""
    x = batch[0]
    return (x @ a.transpose(-1, -2)) @ x.transpose(-1, -2)


def _total(a: torch.Tensor, batches, causal: bool) -> torch.Tensor:
    """The three sums per block over all sentences of ``batches`` ``(3, L)``."""
    return torch.stack([batch_sums(_logits(a, batch), batch, causal).sum(0) for _, batch in batches]).sum(0)


def _fraction(total: torch.Tensor) -> torch.Tensor:
    return total[0] ** 2 / (total[1] * total[2]).clamp_min(1e-300)


def _held_out(batches, a: torch.Tensor, causal: bool, sentences: int, seed: int) -> dict:
    """The explained fraction per block on ``batches`` and its interval; None where no sentence is held out."""
    if sentences == 0:
        none = [None] * a.shape[0]
        return {"explained": none, "interval": [none, none]}
    per = np.zeros((sentences, 3, a.shape[0]))
    with torch.no_grad():
        for rows, batch in batches:
            per[rows] = batch_sums(_logits(a, batch), batch, causal).numpy()
    frac = explained_fraction(per.sum(0))
    rng = np.random.default_rng(seed)
    draws = np.stack([explained_fraction(per[rng.integers(0, sentences, sentences)].sum(0)) for _ in range(RESAMPLES)])
    lo, hi = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
    return {"explained": frac.tolist(), "interval": [lo.tolist(), hi.tolist()]}


def _split(hidden, attn, rows: list[int], chunk: int):
    return prepared([hidden[i] for i in rows], [attn[i] for i in rows], chunk)


def fit_full(
    hidden: Sequence[torch.Tensor],
    attn: Sequence[torch.Tensor],
    beta: Sequence[float],
    causal: bool = False,
    *,
    sentences: int = SENTENCES,
    max_steps: int = MAX_STEPS,
    patience: int = PATIENCE,
    seed: int = 0,
) -> dict:
    """``{"explained"``, ``"explained_interval"`` (held out, full ``A``), ``"beta_explained"``,
    ``"beta_explained_interval"`` (held out, ``beta_l I``), ``"explained_fit"``, ``"explained_validation"`` (the
    chosen ``A`` on the fitting and the stopping sentences), ``"best_step"`` (per block), ``"steps"`` (run),
    ``"trace_fit"``, ``"trace_validation"`` (per step, per block), ``"sentences"`` (fit, stop, held out)}``."""
    use = min(sentences, len(attn))
    rows = [list(range(k, use, 3)) for k in range(3)]  # fit, stop, held out
    train, valid = _split(hidden, attn, rows[0], CHUNK), _split(hidden, attn, rows[1], CHUNK)
    test = _split(hidden, attn, rows[2], CHUNK * 4)
    d = attn[0].shape[-1]
    start = torch.as_tensor(list(beta), dtype=torch.float32)[:, None, None] * torch.eye(d)
    a = torch.nn.Parameter(start.clone())
    opt = torch.optim.Adam([a], lr=LEARNING_RATE)
    best, best_value, best_step = start.clone(), np.full(len(beta), -np.inf), np.zeros(len(beta), dtype=int)
    traces: tuple[list, list] = ([], [])
    anchor, gained = best_value.copy(), 0  # per block the value of its last gain above TOLERANCE; that step
    for step in range(max_steps + 1):
        with torch.no_grad():
            value = _fraction(_total(a, valid, causal)).numpy()
        gain = value > anchor + TOLERANCE
        anchor, gained = np.where(gain, value, anchor), step if gain.any() else gained
        better = value > best_value
        best[torch.from_numpy(better)] = a.detach()[torch.from_numpy(better)]
        best_value, best_step = np.where(better, value, best_value), np.where(better, step, best_step)
        opt.zero_grad()
        fraction = _fraction(_total(a, train, causal))
        traces[0].append(fraction.detach().numpy().tolist())
        traces[1].append(value.tolist())
        if step == max_steps or step - gained >= patience:
            break
        (-fraction.sum()).backward()
        opt.step()
    with torch.no_grad():
        fitted = _fraction(_total(best, train, causal)).numpy()
    full = _held_out(test, best, causal, len(rows[2]), seed)
    base = _held_out(test, start, causal, len(rows[2]), seed)
    return {
        "explained": full["explained"],
        "explained_interval": full["interval"],
        "beta_explained": base["explained"],
        "beta_explained_interval": base["interval"],
        "explained_fit": fitted.tolist(),
        "explained_validation": best_value.tolist(),
        "best_step": best_step.tolist(),
        "steps": len(traces[0]) - 1,
        "trace_fit": traces[0],
        "trace_validation": traces[1],
        "sentences": [len(r) for r in rows],
    }
