"""Observables of token states, as pure functions (THEORY section 5). Inputs ``(..., N, d)``.

The cluster thresholds of the package are named here, once: ``CLUSTER_COS`` (the default of every cluster
criterion below and of the sweeps' observables), ``FIGURE_CLUSTER_COS`` (the reproduction of the paper's
figures and the report part 3 measurements) and ``PROBE_CLUSTER_COS`` (the probe of a pretrained model).
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator

import torch

from . import _spheresums as _s
from ._pairsums import components, mean_offdiagonal, pair_sum
from .core._kernel import BETA_MAX  # e^beta overflows a float64 above ~709: log domain beyond
from .core._sphere import project
from .core._validate import cosine_threshold, positive_float, sphere_tokens, token_norms, token_tensor

CLUSTER_COS = 0.999
"""Default cosine threshold of ``cluster_count``, ``one_cluster`` and ``antipodal_pairs``, and of the sweeps'
``clusters`` / ``all_within`` observables (``sweeps._observables``): tokens count as one cluster when their
cosines exceed 0.999 (angles below ~2.6 degrees), a criterion for tokens that have synchronized."""

FIGURE_CLUSTER_COS = 0.99
"""The cosine threshold of the clusters reported with the paper's figures (THEORY section 6): Figure 1
(``experiments._figure1``), Figures 2-6 (``experiments._grid``), a ``simulate`` run's ``metrics.csv``
(``experiments._simulate``), report part 3 (``experiments._beyond.science``, BEYOND section 5) and the two-species
runs of the architectures part (``experiments._architectures.checks``). Looser than
``CLUSTER_COS``: the figures count the groups visible after a finite depth, not exact synchronization."""

PROBE_CLUSTER_COS = 0.95
"""The cosine threshold of the clusters of a pretrained transformer's hidden states (``practice._probe``, THEORY
section 7; ``sdeformer probe --threshold``): its 6 blocks leave the tokens of a sentence far from synchronized,
so a looser criterion than the figures' shows how they group."""


_SHARED = threading.local()  # .tokens, .values: the tensor of a ``shared_cosines`` block and what was computed


@contextlib.contextmanager
def shared_cosines(x: torch.Tensor) -> Iterator[None]:
    """Inside the block, ``cosine_matrix(x)`` and ``pairwise_cosines(x)`` for this very tensor are computed (and
    ``x`` validated) once, so that the observables of the same saved states share one all-pairs product
    The shared results must not be changed in place."""
    _SHARED.tokens, _SHARED.values = x, {}
    try:
        yield
    finally:
        _SHARED.tokens, _SHARED.values = None, {}


def _shared(x: torch.Tensor, key: str) -> torch.Tensor | None:
    """The value computed for ``key`` inside ``shared_cosines(x)``, else None."""
    return _SHARED.values.get(key) if getattr(_SHARED, "tokens", None) is x else None


def _once(x: torch.Tensor, key: str, compute: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """``compute(x)``, or inside ``shared_cosines(x)`` the value computed first for this ``key``."""
    if getattr(_SHARED, "tokens", None) is not x:
        return compute(x)
    if key not in _SHARED.values:
        _SHARED.values[key] = compute(x)
    return _SHARED.values[key]


DIAGONAL_PASSES = 1 - 1e-9  # thresholds up to this hold for every cos(x_i, x_i) of float64 unit tokens
PRETEST_MARGIN = 1e-9  # a first-row cosine this far below the threshold decides "not within" exactly


def all_within(x: torch.Tensor, threshold: float) -> torch.Tensor:
    """True where every pair has cos(x_i, x_j) >= ``threshold`` (<= ``DIAGONAL_PASSES``), ``(...)`` bool: the
    minimum of the cosine matrix (its diagonal, 1 to rounding, passes). A run whose first token has a cosine
    below threshold - ``PRETEST_MARGIN`` with another is decided from that row alone (N d work, not N^2 d;
    far beyond any rounding of the two products, so the result is the full matrix's); the rest from the matrix,
    shared with the other observables inside ``shared_cosines``."""
    if getattr(_SHARED, "tokens", None) is x and "cos" in _SHARED.values:
        return _SHARED.values["cos"].amin((-1, -2)) >= threshold
    x = token_tensor("x", x)
    u = x / token_norms("x", x)  # (..., N, d)
    undecided = ((u[..., :1, :] * u).sum(-1) >= threshold - PRETEST_MARGIN).all(-1)  # (...)
    out = torch.zeros(x.shape[:-2], dtype=torch.bool, device=x.device)
    if bool(undecided.any()):
        v = u[undecided]  # (k, N, d)
        out[undecided] = (v @ v.transpose(-1, -2)).amin((-1, -2)) >= threshold
    return out


def _cosines(x: torch.Tensor) -> torch.Tensor:
    x = token_tensor("x", x)
    u = x / token_norms("x", x)  # project(x), validated on the way: (..., N, d)
    return u @ u.transpose(-1, -2)


def cosine_matrix(x: torch.Tensor) -> torch.Tensor:
    """Pairwise cosine similarities ``(..., N, N)`` of the (normalised) tokens. Raises ConfigError unless ``x`` is
    a float32/float64/bfloat16 tensor ``(..., N, d)`` of finite, non-zero tokens (once per tensor inside
    ``shared_cosines(x)``)."""
    return _once(x, "cos", _cosines)


def interaction_energy(x: torch.Tensor, beta: float = 1.0, *, normalize: bool = True) -> torch.Tensor:
    """E_beta(X) = 1/(2 N^2) sum_{i,j} (e^beta - e^{beta <X_i, X_j>}), ``(..., N, d) -> (...)``.

    Zero exactly when all tokens coincide. Tokens are normalised first unless ``normalize=False``. Any beta > 0:
    above ``BETA_MAX`` it is e^{log E} (``log_interaction_energy``), +inf only where E itself exceeds the float64
    range (BEYOND section 10: use ``log_interaction_energy`` / ``normalized_energy``). Pairs in row blocks (memory
    O(N)); inside ``shared_cosines`` from its matrix; from N = 4,096 on S^1, S^2 (beta <= 100) from harmonic sums
    in O(N), to 1e-13 e^beta absolutely (docs/scaling.md). Raises ConfigError for an integer, float16, meta or
    1-D ``x``, NaN or zero tokens, and for beta NaN or <= 0."""
    beta = positive_float("beta", beta, "inverse temperature")
    if beta > BETA_MAX:
        return log_interaction_energy(x, beta, normalize=normalize).exp()
    return _energy(x, beta, math.exp(beta), normalize)


def _energy(x: torch.Tensor, beta: float, exp_beta: float, normalize: bool) -> torch.Tensor:
    """``energy_of_gram`` of the tokens' Gram matrix, that matrix taken whole only when shared."""
    x = token_tensor("x", x)
    if normalize and _shared(x, "cos") is not None:
        return energy_of_gram(cosine_matrix(x), beta, exp_beta)
    u = x / token_norms("x", x) if normalize else sphere_tokens("x", x, False)  # (..., N, d)
    n = x.shape[-2]
    if normalize and _s.applies(x) and beta <= _s.ENERGY_BETA_MAX:  # harmonic sums: O(N F)
        return (_s.scaled_energy(u, beta) * exp_beta).to(x.dtype)
    # the terms of energy_of_gram, a row block at a time: e^beta (-expm1(beta (g - 1))) summed
    terms = (
        (lambda g: g.clamp_(max=1.0).sub_(1).mul_(beta).expm1_())
        if normalize
        else (lambda g: g.sub_(1).mul_(beta).expm1_())
    )
    return (pair_sum(u, terms).neg_() / (2 * n * n) * exp_beta).to(x.dtype)


def _scaled_energy(x: torch.Tensor, beta: float, normalize: bool) -> torch.Tensor:
    """e^{-beta} E_beta(X) = 1/(2 N^2) sum_{i,j} -expm1(beta (<X_i, X_j> - 1)), in [0, 1/2] for unit tokens."""
    beta = positive_float("beta", beta, "inverse temperature")
    return _energy(x, beta, 1.0, normalize)  # (...)


def log_interaction_energy(x: torch.Tensor, beta: float = 1.0, *, normalize: bool = True) -> torch.Tensor:
    """log E_beta(X) = beta + log(e^{-beta} E_beta(X)), ``(..., N, d) -> (...)``: finite at every beta > 0
    (-inf when all tokens coincide), equal to log of ``interaction_energy`` where that is finite (BEYOND
    section 10). Raises ConfigError as ``interaction_energy``."""
    return _scaled_energy(x, beta, normalize).log() + beta


def normalized_energy(x: torch.Tensor, beta: float = 1.0, *, normalize: bool = True) -> torch.Tensor:
    """The energy in the metastability paper's normalisation, (1/N^2) sum_{i,j} e^{beta (<X_i, X_j> - 1)}
    = 1 - 2 e^{-beta} E_beta(X), ``(..., N, d) -> (...)``: in (0, 1], 1 for one cluster, and at large beta
    sum_k m_k^2 / N^2 at a saddle of clusters of sizes m_k (``metastability.saddle_level``; BEYOND section 10).
    Finite at every beta > 0. Raises ConfigError as ``interaction_energy``."""
    return 1 - 2 * _scaled_energy(x, beta, normalize)


def energy_of_gram(
    g: torch.Tensor, beta: float | torch.Tensor, exp_beta: float | torch.Tensor, *, clamp: bool = True
) -> torch.Tensor:
    """E_beta from the Gram matrix ``g`` ``(..., N, N)`` (unchanged; with ``clamp`` its entries above 1, rounding
    of unit tokens, count as 1); ``beta`` and ``exp_beta`` = e^beta are numbers or tensors that broadcast
    against ``(...)`` (one beta per run). ``(...)``. One temporary of g's size, updated in place."""
    n = g.shape[-1]
    if isinstance(beta, torch.Tensor):
        beta = beta[..., None, None]
    # e^beta - e^{beta g} = e^beta (-expm1(beta (g - 1))): no cancellation near synchronization (each term >= 0
    # when g <= 1, so E_beta >= 0 up to rounding of the sum) and no overflow of e^{beta g} before the scaling
    t = (g.clamp(max=1.0).sub_(1) if clamp else g - 1).mul_(beta).expm1_()  # (..., N, N)
    return t.sum((-1, -2)).neg_() / (2 * n * n) * exp_beta


def _off_diagonal(c: torch.Tensor) -> torch.Tensor:
    n = c.shape[-1]
    iu = torch.triu_indices(n, n, offset=1, device=c.device)
    return c[..., iu[0], iu[1]]  # (..., N (N-1) / 2)


def pairwise_cosines(x: torch.Tensor) -> torch.Tensor:
    """Cosines of all distinct pairs i < j, ``(..., N (N-1) / 2)`` (once per tensor inside ``shared_cosines``)."""
    return _once(x, "pairs", lambda t: _off_diagonal(cosine_matrix(t)))


def cosine_histogram(cos: torch.Tensor, bins: int) -> torch.Tensor:
    """How many of the cosines ``cos`` ``(..., P)`` fall in each of ``bins`` equal bins of [-1, 1]: ``(..., bins)``
    (cos = 1 in the last bin, -1 in the first; the same as ``np.histogram`` per row, in one pass)."""
    index = ((cos.to(torch.float64) + 1.0) * (bins / 2)).long().clamp_(0, bins - 1)  # (..., P)
    counts = torch.zeros(cos.shape[:-1] + (bins,), dtype=torch.float64)
    return counts.scatter_add_(-1, index, torch.ones_like(index, dtype=torch.float64))


def mean_cosine(x: torch.Tensor) -> torch.Tensor:
    """Mean cosine over distinct pairs, ``(...)`` (needs N >= 2; nan for N = 1): (|sum_i u_i|^2 - sum_i |u_i|^2)
    / (N (N - 1)) of the unit tokens u, in float64 and O(N d), returned in ``x``'s dtype."""
    x = token_tensor("x", x)
    return mean_offdiagonal(x / token_norms("x", x)).to(x.dtype)


def mean_abs_cosine(x: torch.Tensor) -> torch.Tensor:
    """Mean |cosine| over distinct pairs, ``(...)``: near 1 for one cluster and two antipodal ones. Row blocks
    (``shared_cosines``: its matrix); on S^1 from N = 4,096 by sorting, on S^2 from 2^16 by sign-decided blocks."""
    if _shared(x, "cos") is not None:
        return pairwise_cosines(x).abs().mean(-1)
    x = token_tensor("x", x)
    n, u = x.shape[-2], x / token_norms("x", x)
    total = _s.abs_cosine_sum(u) if _s.abs_cosine_applies(x) else pair_sum(u, torch.abs_, diagonal=False)
    return (total / (n * (n - 1))).to(x.dtype)


def cluster_count(x: torch.Tensor, threshold: float = CLUSTER_COS) -> torch.Tensor:
    """Number of clusters: connected components of the graph 'cos(x_i, x_j) > threshold'. ``(...)`` ints.
    Breadth-first search over row blocks of the cosines (O(N^2 d) time, O(N) memory); from N = 4,096 on S^1
    by sorting, on S^2 (threshold >= 0.9) by linked pairs or cells, the same count unless a cosine ties it.
    Raises ConfigError for a threshold outside [-1, 1) or NaN (no pair would ever be linked)."""
    threshold = cosine_threshold("threshold", threshold)
    x = token_tensor("x", x)
    u = x / token_norms("x", x)
    return _s.cluster_count(u, threshold, components)


# -- optimal transport, rate fits and Lyapunov helpers (THEORY section 5) ----------------------------------


def wasserstein2_sq(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Exact W_2^2 between the equal-weight clouds x ``(..., N, d)`` and y ``(..., M, d)`` (POT's network
    simplex, squared Euclidean cost in R^d). Returns ``(...)``. Needs the ``theory`` extra (pot)."""
    import numpy as np
    import ot

    xb = x.detach().reshape(-1, *x.shape[-2:]).double().cpu().numpy()  # (B, N, d)
    yb = y.detach().expand(*x.shape[:-2], *y.shape[-2:]).reshape(-1, *y.shape[-2:]).double().cpu().numpy()
    a, b = np.full(xb.shape[1], 1.0 / xb.shape[1]), np.full(yb.shape[1], 1.0 / yb.shape[1])
    out = [ot.emd2(a, b, ot.dist(xi, yi), numItermax=10_000_000) for xi, yi in zip(xb, yb)]
    return torch.tensor(out, dtype=x.dtype).reshape(x.shape[:-2])


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x. ``x`` must be positive (else ValueError). Points whose y is
    not positive and finite have no logarithm (a zero: below what the measurement resolves) and are left out,
    as ``exponential_rate`` leaves out values at its floor; nan when fewer than two points remain."""
    import numpy as np

    xs, ys = np.asarray(x, float), np.asarray(y, float)
    if xs.shape != ys.shape or not np.all(xs > 0):
        raise ValueError(f"loglog_slope: x must be positive and shaped like y, got x {xs.tolist()}")
    keep = np.isfinite(ys) & (ys > 0)
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(xs[keep]), np.log(ys[keep]), 1)[0])


def bootstrap_slope(x, samples, *, resamples: int = 1000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Bootstrap interval of the log-log slope of the mean: ``samples`` ``(len(x), R)`` holds R independent
    runs per x; runs are resampled with replacement (independently per x) and the slope refitted."""
    import numpy as np

    s = np.asarray(samples, float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, s.shape[1], size=(resamples, s.shape[0], s.shape[1]))
    means = np.take_along_axis(s[None], idx, axis=2).mean(-1)  # (resamples, len(x))
    lx = np.log(np.asarray(x, float))
    lx = lx - lx.mean()
    slopes = (np.log(means) * lx).sum(-1) / (lx * lx).sum()
    lo, hi = np.quantile(slopes, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def exponential_rate(t, values, floor: float = 0.0) -> float:
    """Least-squares slope of log(values) against t, over the points where values > floor (nan if < 2)."""
    import numpy as np

    t, v = np.asarray(t, float), np.asarray(values, float)
    keep = v > floor
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(t[keep], np.log(v[keep]), 1)[0])


def renormalise_pair(x: torch.Tensor, y: torch.Tensor, delta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Renormalised separation for Lyapunov exponents: returns (y', log(|y - x| / delta)), with y' on the
    sphere at chordal distance ~ delta from x in the direction of y. ``(..., d)`` -> ``(..., d)``, ``(...)``."""
    diff = y - x  # (..., d)
    dist = torch.linalg.vector_norm(diff, dim=-1, keepdim=True)  # (..., 1)
    return project(x + delta * diff / dist), torch.log(dist.squeeze(-1) / delta)


# Cluster criteria beside ``cluster_count`` (BEYOND section 5): ``one_cluster`` needs all pairs close (a chain
# of close tokens is not one cluster); ``antipodal_pairs`` the fraction of pairs with cosine <= -threshold.


def one_cluster(x: torch.Tensor, threshold: float = CLUSTER_COS) -> torch.Tensor:
    """True where all pairs have cos(x_i, x_j) >= threshold, ``(...)`` bool (N = 1: True)."""
    cos = pairwise_cosines(x)  # (..., P)
    return (cos >= threshold).all(-1) if cos.shape[-1] else torch.ones(x.shape[:-2], dtype=torch.bool)


def antipodal_pairs(x: torch.Tensor, threshold: float = CLUSTER_COS) -> torch.Tensor:
    """Fraction of pairs with cos(x_i, x_j) <= -threshold, ``(...)``."""
    return (pairwise_cosines(x) <= -threshold).double().mean(-1)
