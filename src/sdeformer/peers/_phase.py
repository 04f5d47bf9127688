"""The parts the two (beta, t) phase-diagram peers share (``glpr``, ``simuformer``; docs/peers.md): their heads as
sdeformer attention (score beta x_i^T BF x_j, value x_j @ V), their pooled pair fraction, and a run in segments
between matrix redraws, saving the states after the steps their checkpoint rule picks (THEORY section 1: the
discrete model, no noise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import torch

from ..attention._softmax import MultiHeadAttention, SoftmaxAttention
from ..attention._variants import UnnormalizedAttention
from ..contracts import AttentionDrift
from ..dynamics._discrete import StochasticTransformer
from ..dynamics._loop import SaveAt
from ._progress import step as count_step, timed

T = TypeVar("T")  # what a statistic of the tokens gives
THRESHOLD = 0.999  # both peers count pairs with cosine above this

Matrices = list[tuple[torch.Tensor, torch.Tensor | None]]  # per head (BF, V or None for V = I), (pp, d, d) each


def head(
    beta: torch.Tensor, bf: torch.Tensor, v: torch.Tensor | None, softmax: bool = True, causal: bool = False, values=1.0
):
    """One peer head: weights from beta x_i^T BF x_j (Q = (beta BF)^T, K = I), softmax-normalized or exp(.) / N
    (``softmax=False``: ``UnnormalizedAttention``; ``values`` = N: exp(.) alone, simuformer's), values x_j @ V
    (the row convention). ``bf``, ``v``: ``(pp, d, d)`` with pp = 1 (one matrix for every run) or the batch (one
    per run)."""
    if bf.shape[0] == 1:
        bf, v = bf[0], None if v is None else v[0]
    q = (beta * bf).mT
    if softmax:
        return SoftmaxAttention(Q=q, V=v, value_convention="xV", causal=causal)
    if v is None:
        return UnnormalizedAttention(Q=q, scale=values if values != 1 else None, causal=causal)
    return UnnormalizedAttention(Q=q, V=v.mT * values if values != 1 else v.mT, causal=causal)


@dataclass(frozen=True)
class StackedHeads:
    """H heads as one attention whose matrices carry a leading head axis (``(H, *batch, d, d)``: one call, one
    fused kernel for all heads), averaged over it; equal to ``MultiHeadAttention(heads, combine="mean")``."""

    inner: AttentionDrift

    def drift(self, x: torch.Tensor, source=None) -> torch.Tensor:
        return self.inner.drift(x, source).mean(0)  # (H, ..., N, d) -> (..., N, d)


def heads(beta: torch.Tensor, matrices: Matrices, softmax: bool = True, causal: bool = False, values=1.0):
    """The peers' heads, averaged (a single head as it is; several softmax heads stacked, ``StackedHeads``)."""
    if len(matrices) == 1 or not softmax:
        parts = [head(beta, bf, v, softmax, causal, values) for bf, v in matrices]
        return parts[0] if len(parts) == 1 else MultiHeadAttention(parts, combine="mean")
    bf = torch.stack([m[0] for m in matrices])  # (H, pp, d, d)
    v = None if matrices[0][1] is None else torch.stack([m[1] for m in matrices if m[1] is not None])
    if bf.shape[1] == 1:
        bf, v = bf[:, 0], None if v is None else v[:, 0]
    bf = bf[:, None] if bf.ndim == 3 else bf  # (H, 1 or pp, d, d): the head axis ahead of the runs
    v = v[:, None] if v is not None and v.ndim == 3 else v
    return StackedHeads(SoftmaxAttention(Q=(beta * bf).mT, V=v, value_convention="xV", causal=causal))


def pair_fraction(x: torch.Tensor, dtype: torch.dtype, adjacent: bool = False, sphere: bool = False) -> float:
    """The peers' statistic of tokens ``(B, N, d)``: off-diagonal pairs (``adjacent``: the pairs (i, i + 1) only,
    simuformer's ``--adjacent``) of all runs with cosine (in ``dtype``) above 0.999, pooled, as the ``dtype``
    number their tables hold (``sphere``: ``_cosines``)."""
    above = _cosines(x, dtype, sphere) > THRESHOLD  # (B, N, N)
    b, n = above.shape[0], above.shape[1]
    if adjacent:
        count, total = int(torch.count_nonzero(above.diagonal(1, dim1=1, dim2=2))), b * (n - 1)
    else:  # off-diagonal
        diagonal = int(torch.count_nonzero(above.diagonal(dim1=1, dim2=2)))
        count, total = int(torch.count_nonzero(above)) - diagonal, b * n * (n - 1)
    return float(torch.tensor(count / total if total else 0.0, dtype=dtype))


def _cosines(x: torch.Tensor, dtype: torch.dtype, sphere: bool = False) -> torch.Tensor:
    """The peers' inner products of the unit tokens, in ``dtype``, ``(B, N, N)``: of the state as it is where it
    is on the sphere (``sphere``: the peers take M M^T of their normalized state, and normalizing again moves a
    cosine at the threshold by one unit of the last place), else of its directions."""
    theta = x.to(dtype) if sphere else torch.nn.functional.normalize(x.to(dtype), dim=-1)
    return torch.bmm(theta, theta.transpose(1, 2))


def span_dimension(x: torch.Tensor, dtype: torch.dtype, sphere: bool = False) -> float:
    """The peers' ``--plotdim`` statistic: the eigenvalues of the Gram matrix (``dtype``) above 1e-3, counted over
    the runs and divided by their number (the mean dimension of the span of the tokens), as a ``dtype`` number."""
    count = int(torch.count_nonzero(torch.linalg.eigvalsh(_cosines(x, dtype, sphere)) > 1e-3))
    return float(torch.tensor(count / x.shape[0], dtype=dtype))


def median_clusters(x: torch.Tensor, dtype: torch.dtype, sphere: bool = False) -> float:
    """The peers' ``--cluster_sizes`` statistic: per run the rank of the float32 0/1 matrix of cosines (``dtype``)
    above 0.9999 (its number of clusters when they are separated), the median over the runs."""
    ranks = torch.linalg.matrix_rank((_cosines(x, dtype, sphere) > 0.9999).float())  # (B,)
    return float(np.median(ranks.numpy()))


class FixedStep(StochasticTransformer):
    """The discrete model, no noise, in the peers' arithmetic: its layer step is ``step`` itself (the peers add
    their step; T / L with T = L step can be one unit of the last place off it) and a run starts from the tokens
    as given, each of which moves float32 rounding otherwise."""

    def __init__(self, layers: int, step: float, attention: AttentionDrift | None, norm):
        super().__init__(layers, layers * step, None, attention, norm)
        self.step_size = step

    @property
    def dt(self) -> float:
        return self.step_size

    def start_state(self, x0: torch.Tensor) -> torch.Tensor:
        """The tokens as the peer holds them (already normalized once; projecting again moves their last bits)."""
        return x0


def run_segments(
    x: torch.Tensor,
    norm,
    step: float,
    record: list[int],
    redraws: list[int],
    attention_of: Callable[[], AttentionDrift],
    redraw: Callable[[], None],
    statistic: Callable[[torch.Tensor], T],
) -> list[T]:
    """``statistic`` of the states after the steps ``record`` (sorted; read by an observer, no state stored), from
    tokens ``x`` ``(B, N, d)``: the model ``norm`` with step ``step`` and ``attention_of()``, which ``redraw()``
    renews after each step in ``redraws``."""
    wanted, seen, start = set(record), {}, 0

    def observe(k: int, t: float, state: torch.Tensor) -> None:
        if k in wanted:
            seen[k] = timed(statistic, state)

    for stop in [*sorted(r for r in redraws if r < record[-1]), record[-1]]:
        if stop > start:
            model = FixedStep(stop, step, attention_of(), norm)
            save = SaveAt(final_only=True, observers=(observe,))
            x = model.run(x, saveat=save, start=start, stop=stop, progress=count_step).final
            start = stop
        if stop in redraws:
            redraw()
    return [seen[k] for k in record]
