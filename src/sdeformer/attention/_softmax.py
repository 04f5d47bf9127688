"""Attention drifts Attn_X(x) (THEORY section 1). Every drift maps tokens ``(..., N, d)`` to ``(..., N, d)``.

    Attn_X(x_i) = sum_j softmax_j(<Q x_i, K X_j>) V X_j

``SoftmaxAttention(beta, scale)`` is the paper's shorthand Q^T K = beta I, V = scale I (with
Q = K = sqrt(beta) I, both default 1); explicit Q, K, V matrices may be given instead, never together with
beta or scale. ``beta`` and ``scale`` may be
tensors broadcastable to the batch shape, so a sweep over settings runs as one tensor program.
The softmax uses ``scaled_dot_product_attention`` in the 4-D layout its fused kernels need (O(N d) memory
on CPU and CUDA), with queries chunked so that memory stays bounded where torch falls back to its math
kernel. ``RandomBatchAttention`` / ``random_batch_attention`` attend only within random batches of p tokens
(THEORY section 7), at O(N p d) cost. Every drift is ``drift(x, source=None)`` (``contracts.AttentionDrift``);
a drift that draws random numbers (random batches) draws them from the run's ``source``.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..contracts import AttentionDrift, RandomSource
from ..core._errors import ConfigError
from ..core._rng import Seeds, Streams
from ..core._shapes import broadcast_shape, run_param
from ..core._validate import finite_float, per_run, positive_float, positive_int
from ._harmonic import check_method, harmonic_drift

SMALL_RUN = 16  # keys up to which a run whose scores are no larger than its tokens skips the fused kernel


def _batch_param(value, x: torch.Tensor) -> torch.Tensor | float:
    """A number as it is (scalar arithmetic, no tensor made on the small-run path), else ``run_param(value, x,
    2)``: a per-run parameter broadcastable against ``(..., N, d)``."""
    return value if isinstance(value, (int, float)) else run_param(value, x, 2)


def _small(nk: int, e: int, f: int) -> bool:
    """Whether a run of ``nk`` keys (widths e, f) skips the fused kernel: nk <= SMALL_RUN, scores no larger
    than its tokens (nk <= 4 max(e, f))."""
    return nk <= SMALL_RUN and nk <= 4 * max(e, f)


def _stacked(q3: torch.Tensor, k3: torch.Tensor, v3: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T) v of runs stacked as ``(B, N, .)``, in three plain operations ``(B, Nq, f)``."""
    return torch.bmm(torch.softmax(torch.bmm(q3, k3.transpose(1, 2)), -1), v3)


SCORE_BUDGET = 2**26  # most query-key scores one fused-attention call may hold (256 MB in fp32)


def _batch_shape(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[int, ...]:
    """The broadcast batch shape of q, k, v (ConfigError where they do not broadcast)."""
    batch = broadcast_shape(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if batch is None:
        raise ConfigError("batch", (q.shape[:-2], k.shape[:-2], v.shape[:-2]), "batch shapes that broadcast")
    return batch


def softmax_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, chunk: int | None = None) -> torch.Tensor:
    """sum_j softmax_j(<q_i, k_j>) v_j with unit logit scale. q: ``(..., Nq, e)``, k: ``(..., Nk, e)``,
    v: ``(..., Nk, f)`` (batch shapes broadcast) -> ``(..., Nq, f)``.

    Memory is O((Nq + Nk)(e + f)) beyond the inputs: the batch is flattened to the 4-D layout for which
    torch's fused kernels apply (CPU flash attention takes 4-D input only; other ranks fall back to an
    O(N^2) kernel), and queries go in chunks of ``chunk`` rows (default: as many as keep
    batch * chunk * Nk <= SCORE_BUDGET), which bounds memory even where torch picks its math kernel
    (e.g. float64 on CUDA). A small run (Nk <= SMALL_RUN keys, its scores no larger than its tokens:
    Nk <= 4 max(e, f)) is done in three plain operations on the runs stacked as (B, N, .) instead (the choice
    depends on the run's shape only, never on the batch, and an unbatched run is a stack of one: batched equals
    unbatched).
    """
    if q.ndim == k.ndim == v.ndim == 2 and _small(k.shape[0], q.shape[1], v.shape[1]):
        # one run: a stack of one (views, no reshape), as a batch's run is one bmm entry (the test below)
        k3 = k.unsqueeze(0)  # (1, Nk, e)
        return _stacked(q.unsqueeze(0), k3, k3 if v is k else v.unsqueeze(0)).squeeze(0)
    nk, e, f = k.shape[-2], q.shape[-1], v.shape[-1]
    if _small(nk, e, f) and q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
        # as a stack of matrices (B, N, .) whatever the batch, so a run is one bmm entry batched or not
        q3, k3, v3 = q.reshape(-1, *q.shape[-2:]), k.reshape(-1, *k.shape[-2:]), v.reshape(-1, *v.shape[-2:])
        return _stacked(q3, k3, v3).reshape(*q.shape[:-1], v.shape[-1])
    batch = _batch_shape(q, k, v)
    nq, nk, flat = q.shape[-2], k.shape[-2], max(1, math.prod(batch))
    q4, k4, v4 = (t.expand(batch + t.shape[-2:]).reshape(flat, 1, *t.shape[-2:]) for t in (q, k, v))  # (B, 1, N, .)
    rows = chunk or max(1, SCORE_BUDGET // (flat * nk))
    parts = [F.scaled_dot_product_attention(q4[:, :, i : i + rows], k4, v4, scale=1.0) for i in range(0, nq, rows)]
    out = parts[0] if len(parts) == 1 else torch.cat(parts, dim=-2)  # (B, 1, Nq, f)
    return out.reshape(batch + (nq, v.shape[-1]))


def _in_random_batches(fn, tensors: Sequence[torch.Tensor], perm: torch.Tensor, size: int) -> torch.Tensor:
    """Apply ``fn`` within random batches: tokens are put in the order ``perm`` ``(..., N)``, cut into
    consecutive batches of ``size`` (a last, smaller batch takes the remainder), and ``fn`` maps
    ``(G, ..., size, .)`` tensors (the batch index G as the leading axis) to ``(G, ..., size, f)``.
    Returns ``(..., N, f)`` in the original token order."""
    lead, n = perm.shape[:-1], perm.shape[-1]
    idx = perm.unsqueeze(-1)  # (..., N, 1)
    shuffled = [t.gather(-2, idx.expand(lead + (n, t.shape[-1]))) for t in tensors]  # (..., N, .) each
    full = n - n % size
    parts = []
    for a, b, s in ((0, full, size), (full, n, n - full)):
        if b > a:
            groups = [
                t[..., a:b, :].reshape(lead + ((b - a) // s, s, t.shape[-1])).movedim(-3, 0) for t in shuffled
            ]  # (G, ..., s, .) each
            parts.append(fn(*groups).movedim(0, -3).flatten(-3, -2))  # (..., b - a, f)
    out = torch.cat(parts, dim=-2)  # (..., N, f), shuffled order
    return torch.empty_like(out).scatter_(-2, idx.expand(out.shape), out)


def random_batch_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, batch_size: int, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Random-batch softmax attention (THEORY section 7): the N tokens of every batch element (and head)
    are shuffled into batches of ``batch_size`` p and ``softmax_attention`` runs within each batch only,
    at O(N p e) cost instead of O(N^2 e). q, k: ``(..., N, e)``, v: ``(..., N, f)`` -> ``(..., N, f)``.
    One uniform permutation per batch element from ``generator`` (on the tensors' device). With
    p >= N it equals ``softmax_attention``. Raises ConfigError for p < 1 or unequal token counts.
    """
    batch_size = positive_int("batch_size", batch_size)
    if not q.shape[-2] == k.shape[-2] == v.shape[-2]:
        raise ConfigError("tokens", (q.shape[-2], k.shape[-2], v.shape[-2]), "q, k, v need the same N")
    batch = _batch_shape(q, k, v)
    n = q.shape[-2]
    keys = torch.rand(batch + (n,), generator=generator, dtype=torch.float64, device=q.device)  # (..., N)
    tensors = [t.expand(batch + t.shape[-2:]) for t in (q, k, v)]
    return _in_random_batches(softmax_attention, tensors, keys.argsort(-1), batch_size)


class RandomBatchAttention:
    """Random-batch attention around any attention block (THEORY section 7; the random batch method).

    In every call of ``drift`` the N tokens of each batch element are shuffled into batches of
    ``batch_size`` p (the last batch takes the remainder) and ``inner`` attends within each batch only:
    O(N p d) cost instead of O(N^2 d). With p >= N it equals ``inner`` (attention is permutation
    invariant). ``inner`` must accept extra leading batch axes (every block in this module does).

    Randomness: inside a model run the shuffles come from the run's streams (``drift(x, source)``, passed by
    ``drift(x, source)``): one uniform permutation per batch element from ``source.randn`` keys (none is drawn
    when p >= N), so two runs with the same seed are equal and batched equals unbatched. These draws share the
    run's streams with the noise; to compare with full attention under the same noise, replay the noise
    (``replay.ReplayedNoise``). Called without a source (standalone), it uses its own per-element generators
    seeded from ``seed``, created at the first call with a new batch shape or device; ``reset`` restarts them.
    Raises ConfigError for p < 1.
    """

    def __init__(self, inner: AttentionDrift, batch_size: int, seed: Seeds = 0):
        self.inner, self.batch_size, self.seed = inner, positive_int("batch_size", batch_size), seed
        self._streams: Streams | None = None

    def reset(self, seed: Seeds = None) -> None:
        """Restart the random stream (from ``seed`` if given, else from the seed given at construction)."""
        if seed is not None:
            self.seed = seed
        self._streams = None

    def permutation(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """The next token shuffle for tokens ``x`` ``(..., N, d)``: ``(..., N)`` indices, from ``source`` (whose
        batch shape leads ``x``'s) if given, else from the block's own generators."""
        batch, n = tuple(x.shape[:-2]), x.shape[-2]
        if source is not None:
            extra = batch[len(source.batch) :]
            keys = source.randn(extra + (n,), torch.float64).to(x.device)  # (..., N) i.i.d. keys
            return keys.expand(batch + (n,)).argsort(-1)
        s = self._streams
        if s is None or s.batch != batch or s.device != x.device:
            s = self._streams = Streams(self.seed, batch, x.device)
        perms = [torch.randperm(n, generator=g, device=x.device) for g in s.generators]  # (N,) each
        return torch.stack(perms).reshape(batch + (n,))

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """Attn within random batches (shuffles from ``source`` if given). ``(..., N, d) -> (..., N, d)``."""
        if x.shape[-2] <= self.batch_size:  # one batch: no shuffle needed (attention is permutation invariant)
            return self.inner.drift(x, source)
        return _in_random_batches(self.inner.drift, [x], self.permutation(x, source), self.batch_size)


VALUE_CONVENTIONS = ("Vx", "xV")  # V acts on a token as V x_j (ours) or as the row x_j^T V = V^T x_j (simuformer)
COMBINE = ("sum", "mean")  # multi-head: the sum of the heads (ours) or their average (simuformer)


def _causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """sum_{j <= i} softmax_j(<q_i, k_j>) v_j ``(..., N, f)``."""
    from ._variants import _masked

    return torch.softmax(_masked(q @ k.transpose(-1, -2), True), dim=-1) @ v


@dataclass(frozen=True)
class SoftmaxAttention:
    """Single-head softmax attention; Q^T K = beta I and V = scale I (defaults 1) unless matrices are given.
    ``value_convention``: an explicit V acts as ``"Vx"`` (V x_j, the default) or ``"xV"`` (x_j V as a row,
    i.e. V^T x_j: simuformer's ``x @ V``). Matrices ``(*batch, d, d)`` are one per run of a batch of tokens
    ``(*batch, N, d)`` (run b uses Q[b], K[b], V[b]: batched equals one run per element). ``causal``: token i
    attends to j <= i only (any Q, K, V; O(N^2) scores). Raises ConfigError for beta or scale given together with
    any of Q, K, V (they would be ignored) and for an unknown convention."""

    beta: float | torch.Tensor | None = None
    scale: float | torch.Tensor | None = None
    Q: torch.Tensor | None = None  # (d, d) or per run (*batch, d, d)
    K: torch.Tensor | None = None  # (d, d) or per run (*batch, d, d)
    V: torch.Tensor | None = None  # (d, d) or per run (*batch, d, d)
    value_convention: str = "Vx"
    causal: bool = False
    method: str = "exact"  # "harmonic": O(N K) sums on S^1, S^2 (``attention._harmonic``); "auto": where faster
    _plain_beta: float | None = field(default=None, init=False, repr=False, compare=False)  # set in __post_init__

    def __post_init__(self) -> None:
        if self.value_convention not in VALUE_CONVENTIONS:
            raise ConfigError("value_convention", self.value_convention, f"one of {list(VALUE_CONVENTIONS)}")
        matrices = [name for name in "QKV" if getattr(self, name) is not None]
        for name, value in (("beta", self.beta), ("attention_scale", self.scale)):
            if matrices and value is not None:
                raise ConfigError(name, value, f"not allowed with explicit {'/'.join(matrices)}: give one or the other")
        object.__setattr__(self, "beta", 1.0 if self.beta is None else self.beta)
        object.__setattr__(self, "scale", 1.0 if self.scale is None else self.scale)
        per_run(lambda name, v: positive_float(name, v, "inverse temperature"), "beta", self.beta)
        per_run(finite_float, "attention_scale", self.scale)
        for name in "QKV":
            m = getattr(self, name)
            if m is not None and (m.ndim < 2 or m.shape[-1] != m.shape[-2] or not torch.isfinite(m).all()):
                raise ConfigError(name, tuple(m.shape), "must be finite square (d, d) matrices, or (*batch, d, d)")
        if matrices or self.causal:  # the harmonic sums serve Q^T K = beta I only: "auto" keeps exact
            object.__setattr__(self, "method", "exact" if self.method == "auto" else self.method)
        check_method(self.method, 2, "softmax", self.causal or bool(matrices))  # d is checked at the call
        beta, unit = self.beta, isinstance(self.scale, (int, float)) and self.scale == 1
        plain = unit and not matrices and not self.causal
        object.__setattr__(self, "_plain_beta", float(beta) if plain and isinstance(beta, (int, float)) else None)

    @classmethod
    def from_config(cls, p) -> AttentionDrift:
        """Q^T K = beta I, V = s I of a config (``registry.Params``), with a causal mask when ``p.causal``."""
        from ._variants import CausalSoftmaxAttention

        if p.causal:
            return CausalSoftmaxAttention(p.beta, p.attention_scale)
        return cls(p.beta, p.attention_scale, method=p.attention_method)

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """Attn_X(x_i) for every token. ``(..., N, d) -> (..., N, d)``."""
        fast = harmonic_drift(x, self.beta, self.method) if self.method != "exact" and self.beta is not None else None
        if fast is not None:
            unit = isinstance(self.scale, (int, float)) and self.scale == 1
            return fast if unit else fast * _batch_param(self.scale, x)
        beta = self._plain_beta
        if beta is not None:  # the paper's Q^T K = beta I, V = I: no matrix, no per-run parameter
            if x.ndim == 2 and _small(x.shape[0], x.shape[1], x.shape[1]):  # one small run: softmax_attention's ops
                x3 = x.unsqueeze(0)  # (1, N, d), one view fewer than softmax_attention(x * beta, x, x)
                q = x3 if beta == 1 else x3 * beta  # x * 1 is x: the same scores, one pass fewer
                return torch.bmm(torch.softmax(torch.bmm(q, x3.transpose(1, 2)), -1), x3).squeeze(0)
            if x.ndim == 3 and _small(x.shape[1], x.shape[2], x.shape[2]):  # a stack of small runs: the same ops
                q = x if beta == 1 else x * beta
                return torch.bmm(torch.softmax(torch.bmm(q, x.transpose(1, 2)), -1), x)
            return softmax_attention(x * beta, x, x)
        q = x @ self.Q.mT.to(x) if self.Q is not None else x * _batch_param(self.beta, x)  # (..., N, d)
        k = x @ self.K.mT.to(x) if self.K is not None else x  # (..., N, d)
        v = x if self.V is None else x @ (self.V.mT if self.value_convention == "Vx" else self.V).to(x)  # (..., N, d)
        out = _causal(q, k, v) if self.causal else softmax_attention(q, k, v)  # (..., N, d)
        unit = self.V is not None or (isinstance(self.scale, (int, float)) and self.scale == 1)  # V = I: as it is
        return out if unit else out * _batch_param(self.scale, x)


@dataclass(frozen=True)
class MultiHeadAttention:
    """The heads' drifts combined: ``combine="sum"`` (the default; the theory allows multi-head sums) or
    ``"mean"`` (their average, simuformer's convention). Raises ConfigError for no heads or another combine."""

    heads: Sequence[AttentionDrift]
    combine: str = "sum"

    def __post_init__(self) -> None:
        if self.combine not in COMBINE:
            raise ConfigError("combine", self.combine, f"one of {list(COMBINE)}")
        if not len(self.heads):
            raise ConfigError("heads", len(self.heads), "at least one head")

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """The sum (or mean) of the heads' drifts (``source`` goes to the heads that draw). ``(..., N, d)``."""
        total = functools.reduce(operator.add, (h.drift(x, source) for h in self.heads))  # (..., N, d)
        return total if self.combine == "sum" else total / len(self.heads)


@dataclass(frozen=True)
class NoAttention:
    """Attention off: zero drift."""

    @classmethod
    def from_config(cls, p) -> NoAttention:
        return cls()

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        return torch.zeros_like(x)
