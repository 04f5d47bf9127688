"""Attention variants beyond softmax with Q^T K = beta I (THEORY section 1; BEYOND section 5).

Every variant is a drift ``drift(x)`` ``(..., N, d) -> (..., N, d)`` like ``attention.SoftmaxAttention``,
batched over leading dimensions, and plugs into the discrete model and the limit SDE with any noise model:

- ``UnnormalizedAttention`` (USA): D_i = (1/N) sum_j e^{beta <x_i, x_j>} V x_j;
- ``L2Attention``: softmax_j(-beta |Q x_i - K x_j|^2) V x_j (Q = K = I unless given);
- ``SinkhornAttention``: the doubly stochastic matrix of e^{beta <x_i, x_j>} by alternate row and column
  normalisation (log domain) for at most ``iterations`` rounds or until every column sums to 1 within ``tol``
  (rows are normalised last, so they sum to 1 to rounding); each run of a batch stops on its own, so batched
  equals unbatched;
- ``RandomMatrixAttention``: softmax attention with a random Q^T K per run (``"gaussian"``: A A'^T / sqrt(d),
  ``"goe"``) and a random V (``"gaussian"``, ``"psd"``: G G^T / d, ``"+qk"`` / ``"-qk"``: V = +-Q^T K,
  ``"identity"``), optionally redrawn every ``redraw_every`` calls (layers);
- ``causal=True`` (USA, L2, random-matrix; ``CausalSoftmaxAttention`` for the paper's softmax): token i
  attends to j <= i only.

Matrices given explicitly (Q, K, V) together with ``beta`` or ``scale`` raise ConfigError instead of one
silently overriding the other. Random matrices come from one generator per batch element seeded from ``seed``
(``rng.Streams``), so batched equals unbatched.
"""

from __future__ import annotations

import math

import torch

from ..contracts import RandomSource
from ..core.errors import ConfigError
from ..core.rng import Seeds, Streams


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
    future = torch.ones(n, n, dtype=torch.bool, device=logits.device).triu(1)
    return logits.masked_fill(future, -math.inf)


def _value(x: torch.Tensor, V: torch.Tensor | None, scale: float | None) -> torch.Tensor:
    """V x_j for every token, ``(..., N, d)``."""
    if V is not None:
        return x @ V.transpose(-1, -2).to(x)
    return x * (1.0 if scale is None else scale)


class UnnormalizedAttention:
    """USA: D_i = (1/N) sum_{j (<= i if causal)} e^{beta <x_i, x_j>} V x_j, V = scale I unless given."""

    @classmethod
    def from_config(cls, p) -> UnnormalizedAttention:
        """The attention of a config (``registry.Params``)."""
        return cls(p.beta, p.attention_scale, causal=p.causal)

    def __init__(
        self, beta: float = 1.0, scale: float | None = None, *, V: torch.Tensor | None = None, causal: bool = False
    ):
        _check_exclusive(None, scale, None, None, V)
        self.beta, self.scale, self.V, self.causal = _check_beta(beta, True), scale, V, causal

    def weights(self, x: torch.Tensor) -> torch.Tensor:
        """e^{beta <x_i, x_j>} / N (0 for masked pairs), ``(..., N, N)``."""
        return torch.exp(_masked(self.beta * (x @ x.transpose(-1, -2)), self.causal)) / x.shape[-2]

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        return self.weights(x) @ _value(x, self.V, self.scale)  # (..., N, d)


class L2Attention:
    """softmax_j(-beta |Q x_i - K x_j|^2) V x_j; beta (default 1) only with Q = K = I."""

    @classmethod
    def from_config(cls, p) -> L2Attention:
        """The attention of a config (``registry.Params``)."""
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
        self.beta = _check_beta(1.0 if beta is None else beta)
        self.Q, self.K, self.V, self.scale, self.causal = Q, K, V, scale, causal

    def weights(self, x: torch.Tensor) -> torch.Tensor:
        q = x if self.Q is None else x @ self.Q.transpose(-1, -2).to(x)  # (..., N, d)
        k = x if self.K is None else x @ self.K.transpose(-1, -2).to(x)  # (..., N, d)
        dist2 = (q.unsqueeze(-2) - k.unsqueeze(-3)).pow(2).sum(-1)  # (..., N, N)
        return torch.softmax(_masked(-self.beta * dist2, self.causal), dim=-1)

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        return self.weights(x) @ _value(x, self.V, self.scale)


SINKHORN_ITERATIONS = 200  # most normalisation rounds
SINKHORN_TOL = 1e-6  # column sums within this of 1 stop the iteration early


class SinkhornAttention:
    """Doubly stochastic attention: Sinkhorn scaling of e^{beta <x_i, x_j>}, then D_i = sum_j P_ij scale x_j.
    Rows sum to 1 (to rounding), columns within ``tol`` once converged (or after ``iterations`` rounds)."""

    @classmethod
    def from_config(cls, p) -> SinkhornAttention:
        """The attention of a config (``registry.Params``)."""
        return cls(p.beta, p.attention_scale)

    def __init__(
        self, beta: float = 1.0, scale: float = 1.0, *, iterations: int = SINKHORN_ITERATIONS, tol: float = SINKHORN_TOL
    ):
        if int(iterations) < 1:
            raise ConfigError("iterations", iterations, "must be a positive integer")
        if not tol > 0:
            raise ConfigError("tol", tol, "must be > 0")
        self.beta, self.scale, self.iterations, self.tol = _check_beta(beta), float(scale), int(iterations), tol

    def weights(self, x: torch.Tensor) -> torch.Tensor:
        """The Sinkhorn matrix P ``(..., N, N)``."""
        logp = self.beta * (x @ x.transpose(-1, -2))  # (..., N, N)
        done = torch.zeros(logp.shape[:-2], dtype=torch.bool, device=x.device)  # (...): converged runs stay put
        for _ in range(self.iterations):
            new = logp - torch.logsumexp(logp, dim=-2, keepdim=True)  # columns
            new = new - torch.logsumexp(new, dim=-1, keepdim=True)  # rows
            logp = torch.where(done[..., None, None], logp, new)
            done = done | ((logp.exp().sum(-2) - 1).abs().amax(-1) <= self.tol)
            if bool(done.all()):
                break
        return logp.exp()

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        return self.weights(x) @ x * self.scale


class CausalSoftmaxAttention:
    """The paper's softmax attention (Q^T K = beta I, V = scale I) with a causal mask: D_i = sum_{j <= i}
    softmax_j(beta <x_i, x_j>) scale x_j. ``beta``, ``scale``: floats or batch tensors ``(*batch,)``."""

    def __init__(self, beta: float | torch.Tensor = 1.0, scale: float | torch.Tensor = 1.0):
        if not isinstance(beta, torch.Tensor):
            _check_beta(beta)
        self.beta, self.scale = beta, scale

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        beta, scale = (torch.as_tensor(v, dtype=x.dtype, device=x.device) for v in (self.beta, self.scale))
        beta, scale = (v.reshape(v.shape + (1, 1)) for v in (beta, scale))  # broadcast against (..., N, N)
        logits = _masked(beta * (x @ x.transpose(-1, -2)), True)  # (..., N, N)
        return torch.softmax(logits, dim=-1) @ x * scale  # (..., N, d)


def attention_seed(seed: int) -> int:
    """The seed of a run's random attention matrices: a stream apart from its noise and initial tokens."""
    return (int(seed) * 6364136223846793005 + 1442695040888963407) % (2**63)


QK_KINDS = ("gaussian", "goe")
V_KINDS = ("gaussian", "psd", "+qk", "-qk", "identity")


def random_qk(d: int, source, kind: str = "gaussian", dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A random Q^T K ``(*batch, d, d)`` from ``source``: A A'^T / sqrt(d) (A, A' standard Gaussian) or GOE
    (G + G^T)/sqrt(2 d)."""
    if kind == "gaussian":
        a, b = source.randn((d, d), dtype), source.randn((d, d), dtype)
        return a @ b.transpose(-1, -2) / math.sqrt(d)
    if kind == "goe":
        g = source.randn((d, d), dtype)
        return (g + g.transpose(-1, -2)) / math.sqrt(2 * d)
    raise ConfigError("qk", kind, f"one of {list(QK_KINDS)}")


def random_value(d: int, source, kind: str, qk: torch.Tensor) -> torch.Tensor:
    """A random V ``(*batch, d, d)``: Gaussian G / sqrt(d), PSD G G^T / d, +-Q^T K or the identity."""
    if kind == "gaussian":
        return source.randn((d, d), qk.dtype) / math.sqrt(d)
    if kind == "psd":
        g = source.randn((d, d), qk.dtype)
        return g @ g.transpose(-1, -2) / d
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
