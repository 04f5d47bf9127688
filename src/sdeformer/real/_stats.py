"""Per-layer statistics of a real model's tokens with bootstrap intervals over sentences (THEORY sections 3, 5
and 7; BEYOND section 1 for the common share).

Every statistic is computed per sentence, then averaged over sentences; its 95 % interval resamples sentences
(``bootstrap``). For the directions ``x = h / |h|`` of one sentence's ``n`` tokens:

    mean_cos = mean_{i != j} <x_i, x_j>,   E_beta = (1/(2 n^2)) sum_ij (e^beta - e^{beta <x_i, x_j>}) at beta = 1,
    erank = exp(-sum_k p_k log p_k),  p_k = s_k^2 / sum s^2 (singular values s_k of the n x d matrix of x),
    clusters: connected components of <x_i, x_j> >= PROBE_CLUSTER_COS,   |h| = mean_i |h_i|;

and of the MLP output f: the common share ``rho = |mean_i f_i|^2 / mean_i |f_i|^2`` (1: one field moves all tokens
alike, as in the paper; about 1/n: independent per token).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch

from ..observables import PROBE_CLUSTER_COS, cluster_count, interaction_energy, mean_cosine

LEVEL = 0.95
RESAMPLES = 1000


def bootstrap(values: np.ndarray, resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """The 95 % percentile interval of the mean over the first axis: ``(S, ...) -> (2, ...)``."""
    values = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, values.shape[0], size=(resamples, values.shape[0]))
    means = values[idx].mean(axis=1)  # (R, ...)
    q = (1 - LEVEL) / 2
    return np.quantile(means, [q, 1 - q], axis=0)


def ratio_bootstrap(num: np.ndarray, den: np.ndarray, resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """The 95 % interval of ``sum num / sum den`` over resampled sentences: ``(S, ...) -> (2, ...)``."""
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, num.shape[0], size=(resamples, num.shape[0]))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = num[idx].sum(axis=1) / den[idx].sum(axis=1)  # (R, ...)
    q = (1 - LEVEL) / 2
    return np.nanquantile(ratios, [q, 1 - q], axis=0)


def effective_rank(x: torch.Tensor) -> torch.Tensor:
    """exp of the entropy of the normalised squared singular values: ``(..., n, d) -> (...)``."""
    g = x.double() / torch.linalg.vector_norm(x.double(), dim=-1, keepdim=True)
    s2 = torch.linalg.eigvalsh(g @ g.transpose(-1, -2)).clamp_min(0.0)  # squared singular values
    p = s2 / s2.sum(-1, keepdim=True)
    return torch.exp(-(p * torch.log(p.clamp_min(1e-300))).sum(-1))


def common_share(f: torch.Tensor) -> torch.Tensor:
    """rho = |mean_i f_i|^2 / mean_i |f_i|^2: ``(..., n, d) -> (...)``."""
    return f.double().mean(-2).pow(2).sum(-1) / f.double().pow(2).sum(-1).mean(-1)


STATISTICS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "mean_cos": lambda h: mean_cosine(h),
    "energy": lambda h: interaction_energy(h, 1.0),
    "effective_rank": effective_rank,
    "clusters": lambda h: cluster_count(h, PROBE_CLUSTER_COS).double(),
    "norm": lambda h: torch.linalg.vector_norm(h.double(), dim=-1).mean(-1),
}


def per_sentence(stacks: Sequence[torch.Tensor], fn: Callable[[torch.Tensor], torch.Tensor]) -> np.ndarray:
    """``fn`` of every sentence's ``(layers, n, d)`` stack: ``(S, layers)``."""
    return np.stack([fn(s).double().numpy() for s in stacks])


def summarise(values: np.ndarray, seed: int = 0) -> dict[str, list[float]]:
    """``{"mean", "low", "high"}`` per layer of per-sentence values ``(S, layers)``."""
    lo, hi = bootstrap(values, seed=seed)
    return {"mean": values.mean(0).tolist(), "low": lo.tolist(), "high": hi.tolist()}


def layer_values(hidden: Sequence[torch.Tensor], names: Sequence[str] = tuple(STATISTICS)) -> dict[str, np.ndarray]:
    """The statistics ``names`` of ``STATISTICS`` per sentence and layer ``(S, L + 1)``; ``hidden[k]``
    ``(L+1, n, d)``."""
    return {name: per_sentence(hidden, STATISTICS[name]) for name in names}


def slope(values: np.ndarray, seed: int = 0) -> dict[str, float]:
    """The least-squares slope over layers of the mean over sentences of ``values`` ``(S, layers)`` with its 95 %
    interval (the slope is linear in the values: the mean of the per-sentence slopes)."""
    per = np.polyfit(np.arange(values.shape[1], dtype=np.float64), values.T, 1)[0]  # (S,)
    lo, hi = bootstrap(per, seed=seed)
    return {"mean": float(per.mean()), "low": float(lo), "high": float(hi)}


def share_statistics(mlp_out: Sequence[torch.Tensor], seed: int = 0) -> dict[str, list[float]]:
    """rho_l per block (L values) with its interval; ``mlp_out[k]`` ``(L, n, d)``."""
    return summarise(per_sentence(mlp_out, common_share), seed)


def variance_law(hidden: Sequence[torch.Tensor], seed: int = 0) -> dict:
    """The residuals' variance law across layers (Sarfati et al. 2025): ``v_l = mean |h_{l+1} - h_l|^2 / d`` over
    tokens, fitted as ``v_l = alpha exp(lambda l)`` by least squares on ``log v_l``; intervals of lambda and alpha
    resample sentences."""
    per = per_sentence(hidden, lambda h: (h[1:] - h[:-1]).double().pow(2).mean((-1, -2)))  # (S, L)
    d_layers = np.arange(per.shape[1], dtype=np.float64)

    def fit(v: np.ndarray) -> tuple[float, float]:
        slope, icept = np.polyfit(d_layers, np.log(np.maximum(v, 1e-300)), 1)
        return float(math.exp(icept)), float(slope)

    alpha, lam = fit(per.mean(0))
    rng = np.random.default_rng(seed)
    draws = np.array([fit(per[rng.integers(0, len(per), len(per))].mean(0)) for _ in range(200)])  # (200, 2)
    (a_lo, l_lo), (a_hi, l_hi) = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
    resid = np.log(per.mean(0)) - (math.log(alpha) + lam * d_layers)
    return {
        "variance": per.mean(0).tolist(),
        "alpha": alpha,
        "alpha_interval": [float(a_lo), float(a_hi)],
        "lambda": lam,
        "lambda_interval": [float(l_lo), float(l_hi)],
        "log_rms_residual": float(np.sqrt(np.mean(resid**2))),
    }
