"""Attention variants beyond softmax with Q^T K = beta I (THEORY section 1; BEYOND section 5).

Every variant is a drift ``drift(x)`` ``(..., N, d) -> (..., N, d)`` like ``attention._softmax.SoftmaxAttention``,
batched over leading dimensions, and plugs into the discrete model and the limit SDE with any noise model:

- ``UnnormalizedAttention`` (USA): D_i = (1/N) sum_j e^{beta <x_i, x_j>} V x_j (or e^{<Q x_i, K x_j>});
- ``L2Attention``: softmax_j(-beta |Q x_i - K x_j|^2) V x_j (Q = K = I unless given);
- ``SinkhornAttention`` (``attention._sinkhorn``): doubly stochastic attention;
- ``RandomMatrixAttention``: softmax attention with a random Q^T K per run (``"gaussian"``: A A'^T / sqrt(d),
  ``"goe"``: (G + G^T) / sqrt(2d), ``"goe_peer"``: the peers' (G + G^T) / sqrt(2)) and a random V
  (``"gaussian"``, ``"psd"``: G G^T / d, ``"psd_peer"``: the peers' G G^T / sqrt(d), ``"+qk"`` / ``"-qk"``:
  V = +-Q^T K, ``"identity"``), optionally redrawn every ``redraw_every`` calls (layers);
- ``causal=True`` (USA, L2, random-matrix; ``CausalSoftmaxAttention`` for the paper's softmax): token i
  attends to j <= i only.

Explicit Q, K, V are ``(d, d)`` or one per run ``(*batch, d, d)``; with ``beta`` or ``scale`` they raise ConfigError
(neither silently overrides the other). Random matrices come from one generator per batch element seeded from
``seed`` (``rng.Streams``), so batched equals unbatched.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ..core._rng import Seeds, Streams
from ..core._shapes import run_param
from ._harmonic import check_method, harmonic_drift


def _check_beta(beta: float, allow_zero: bool = False) -> float:
    ok = math.isfinite(beta) and (beta >= 0 if allow_zero else beta > 0)
    if not ok:
        raise ConfigError("beta", beta, "inverse temperature must be finite and " + (">= 0" if allow_zero else "> 0"))
    return float(beta)


def _check_exclusive(beta, scale, Q, K, V) -> None:
    if (Q is not None or K is not None) and beta is not None:
        raise ConfigError("beta", beta, "give either beta or explicit Q / K, not both")
    if V is not None and scale is not None:
        raise ConfigError("scale", scale, "give either scale or an explicit V, not both")


def _masked(logits: torch.Tensor, causal: bool) -> torch.Tensor:
    """Set logits of future tokens (j > i) to -inf when ``causal``. ``(..., N, N)``."""
    if not causal:
        return logits
    n = logits.shape[-1]
    return logits.masked_fill(torch.ones(n, n, dtype=torch.bool, device=logits.device).triu(1), -math.inf)


def _value(x: torch.Tensor, V: torch.Tensor | None, scale: float | None) -> torch.Tensor:
    """V x_j for every token, ``(..., N, d)``."""
    if V is not None:
        return x @ V.transpose(-1, -2).to(x)
    return x * (1.0 if scale is None else scale)


class _MatrixAttention:
    """Attention with optional matrices (beta or Q, K; scale or V); a subclass gives ``weights(x)``."""

    zero_beta = False  # whether beta = 0 is allowed
    weights: Callable[[torch.Tensor], torch.Tensor]

    @classmethod
    def from_config(cls, p):  # the attention of a config (``registry.Params``)
        return cls(p.beta, p.attention_scale, causal=p.causal)

    def __init__(
        self,
        beta: float | None = None,
        scale: float | None = None,
        *,
        Q: torch.Tensor | None = None,
        K: torch.Tensor | None = None,
        V: torch.Tensor | None = None,
        causal: bool = False,
    ):
        _check_exclusive(beta, scale, Q, K, V)
        self.beta = _check_beta(1.0 if beta is None else beta, self.zero_beta)
        self.Q, self.K, self.V, self.scale, self.causal = Q, K, V, scale, causal

    def queries_keys(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(Q x_i, K x_j) for every token, each ``(..., N, d)`` (x itself where a matrix is not given)."""
        q, k = (x if m is None else x @ m.transpose(-1, -2).to(x) for m in (self.Q, self.K))
        return q, k

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        return self.weights(x) @ _value(x, self.V, self.scale)  # (..., N, d)


class UnnormalizedAttention(_MatrixAttention):
    """USA: D_i = (1/N) sum_{j (<= i if causal)} e^{beta <x_i, x_j>} V x_j (V = scale I, e^{<Q x_i, K x_j>}).
    ``method``: ``"exact"`` (the (N, N) weights), ``"harmonic"`` (O(N F) sums on S^1, S^2 from the directions,
    ``attention._harmonic``; with beta and no Q, K, V or causal mask) or ``"auto"`` (harmonic where measured
    faster)."""

    zero_beta, unnormalized = True, True  # unnormalized: weights up to e^beta (the step rule's a carries e^beta)

    @classmethod
    def from_config(cls, p):  # the attention of a config (``registry.Params``)
        return cls(p.beta, p.attention_scale, causal=p.causal, method=p.attention_method)

    def __init__(self, beta=None, scale=None, *, Q=None, K=None, V=None, causal=False, method: str = "exact"):
        super().__init__(beta, scale, Q=Q, K=K, V=V, causal=causal)
        matrices = Q is not None or K is not None or V is not None
        self.method = "exact" if method == "auto" and (matrices or causal) else method
        check_method(self.method, 2, "usa", causal or matrices)  # d is checked at the call

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        fast = harmonic_drift(x, self.beta, self.method, unnormalized=True) if self.method != "exact" else None
        if fast is not None:
            return fast if self.scale is None else fast * self.scale
        return super().drift(x, source)

    def weights(self, x: torch.Tensor) -> torch.Tensor:
        """e^{beta <x_i, x_j>} / N (0 for masked pairs), ``(..., N, N)``, log N taken into the exponent. Raises
        ConfigError naming ``beta`` where a row of weights would exceed the dtype (beta above ~709 in float64,
        ~88 in float32 for unit tokens), never a silent inf or NaN."""
        q, k = self.queries_keys(x)
        scores = q @ k.transpose(-1, -2) if self.Q is not None or self.K is not None else self.beta * (q @ k.mT)
        logits = _masked(scores, self.causal) - math.log(x.shape[-2])  # (..., N, N)
        top, bound = float(logits.max()), math.log(torch.finfo(x.dtype).max / x.shape[-2])
        if not top < bound:
            raise ConfigError("beta", self.beta, f"e^(beta <x_i, x_j>) exceeds {x.dtype} ({top:.4g} > {bound:.4g})")
        return torch.exp(logits)


class L2Attention(_MatrixAttention):
    """softmax_j(-beta |Q x_i - K x_j|^2) V x_j; beta (default 1) only with Q = K = I."""

    def weights(self, x: torch.Tensor) -> torch.Tensor:
        q, k = self.queries_keys(x)  # (..., N, d) each
        dist2 = (q.unsqueeze(-2) - k.unsqueeze(-3)).pow(2).sum(-1)  # (..., N, N)
        return torch.softmax(_masked(-self.beta * dist2, self.causal), dim=-1)


class CausalSoftmaxAttention:
    """The paper's softmax attention (Q^T K = beta I, V = scale I) with a causal mask: D_i = sum_{j <= i}
    softmax_j(beta <x_i, x_j>) scale x_j. ``beta``, ``scale``: floats or batch tensors ``(*batch,)``."""

    def __init__(self, beta: float | torch.Tensor = 1.0, scale: float | torch.Tensor = 1.0):
        if not isinstance(beta, torch.Tensor):
            _check_beta(beta)
        self.beta, self.scale = beta, scale

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        beta, scale = (run_param(v, x, 2) for v in (self.beta, self.scale))  # broadcast against (..., N, N)
        logits = _masked(beta * (x @ x.transpose(-1, -2)), True)  # (..., N, N)
        return torch.softmax(logits, dim=-1) @ x * scale  # (..., N, d)


def attention_seed(seed: int) -> int:
    """The seed of a run's random attention matrices: a stream apart from its noise and initial tokens."""
    return (int(seed) * 6364136223846793005 + 1442695040888963407) % (2**63)


QK_KINDS = ("gaussian", "goe", "goe_peer")
V_KINDS = ("gaussian", "psd", "psd_peer", "+qk", "-qk", "identity")
# the peers' conventions (Geshkovski et al.'s public code): GOE without the 1/sqrt(d), PSD over sqrt(d) only
GOE_SCALE = {"goe": lambda d: math.sqrt(2 * d), "goe_peer": lambda d: math.sqrt(2)}
PSD_SCALE = {"psd": lambda d: d, "psd_peer": lambda d: math.sqrt(d)}


def random_qk(d: int, source, kind: str = "gaussian", dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A random Q^T K ``(*batch, d, d)`` from ``source``: A A'^T / sqrt(d) (A, A' standard Gaussian), GOE
    (G + G^T)/sqrt(2 d), or the peers' GOE (G + G^T)/sqrt(2) (``goe_peer``: the same draw as ``goe``, times
    sqrt(d))."""
    if kind == "gaussian":
        a, b = source.randn((d, d), dtype), source.randn((d, d), dtype)
        return a @ b.transpose(-1, -2) / math.sqrt(d)
    if kind in GOE_SCALE:
        g = source.randn((d, d), dtype)
        return (g + g.transpose(-1, -2)) / GOE_SCALE[kind](d)
    raise ConfigError("qk", kind, f"one of {list(QK_KINDS)}")


def random_value(d: int, source, kind: str, qk: torch.Tensor) -> torch.Tensor:
    """A random V ``(*batch, d, d)``: Gaussian G / sqrt(d), PSD G G^T / d, the peers' PSD G G^T / sqrt(d)
    (``psd_peer``: the same draw as ``psd``, times sqrt(d)), +-Q^T K or the identity."""
    if kind == "gaussian":
        return source.randn((d, d), qk.dtype) / math.sqrt(d)
    if kind in PSD_SCALE:
        g = source.randn((d, d), qk.dtype)
        return g @ g.transpose(-1, -2) / PSD_SCALE[kind](d)
    if kind in ("+qk", "-qk"):
        return qk if kind == "+qk" else -qk
    if kind == "identity":
        return torch.eye(d, dtype=qk.dtype, device=qk.device).expand(qk.shape)
    raise ConfigError("value", kind, f"one of {list(V_KINDS)}")


class RandomMatrixAttention:
    """Softmax attention softmax_j(<x_i, A x_j>) V x_j with A = Q^T K and V random per run, redrawn every
    ``redraw_every`` calls (None: never). ``seed``: see ``rng.Streams`` (batched equals unbatched)."""

    @classmethod
    def from_config(cls, p) -> RandomMatrixAttention:
        """The attention of a config (``registry.Params``)."""
        return cls(
            seed=attention_seed(p.cfg.seed) if p.seeds is None else [attention_seed(s) for s in p.seeds],
            causal=p.causal,
        )

    def __init__(
        self,
        qk: str = "gaussian",
        value: str = "identity",
        *,
        redraw_every: int | None = None,
        seed: Seeds = 0,
        causal: bool = False,
    ):
        if qk not in QK_KINDS:
            raise ConfigError("qk", qk, f"one of {list(QK_KINDS)}")
        if value not in V_KINDS:
            raise ConfigError("value", value, f"one of {list(V_KINDS)}")
        if redraw_every is not None and int(redraw_every) < 1:
            raise ConfigError("redraw_every", redraw_every, "None or a positive integer")
        self.qk, self.value, self.redraw_every, self.seed, self.causal = qk, value, redraw_every, seed, causal
        self._streams: Streams | None = None
        self._calls = 0
        self.A: torch.Tensor | None = None
        self.V: torch.Tensor | None = None

    def matrices(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The current (A, V), each ``(*batch, d, d)``, drawn at the first call and every redraw."""
        batch = tuple(x.shape[:-2])
        fresh = self._streams is None or self._streams.batch != batch
        if fresh:
            self._streams, self._calls = Streams(self.seed, batch, x.device), 0
        if fresh or (self.redraw_every and self._calls % self.redraw_every == 0):
            self.A = random_qk(x.shape[-1], self._streams, self.qk, x.dtype)
            self.V = random_value(x.shape[-1], self._streams, self.value, self.A)
        self._calls += 1
        assert self.A is not None and self.V is not None  # drawn above on the first call
        return self.A.to(x), self.V.to(x)

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        a, v = self.matrices(x)
        logits = _masked((x @ a) @ x.transpose(-1, -2), self.causal)  # (..., N, N): x_i^T A x_j
        return torch.softmax(logits, dim=-1) @ (x @ v.transpose(-1, -2))
