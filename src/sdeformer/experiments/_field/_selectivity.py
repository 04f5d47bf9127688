"""The attention of one query over n i.i.d. uniform keys on S^{d-1} (Bruno, Chen, Lin, Polyanskiy, Rigollet 2026;
docs/field.md, "Long contexts"): the scores, the expected largest softmax weight and the critical beta*(n).

Only the scores t_j = <e_1, k_j> enter the softmax, and for a uniform key t = 2 B - 1 with B ~ Beta((d-1)/2,
(d-1)/2) (the density of t is proportional to (1 - t^2)^{(d-3)/2}). A sample of n keys is kept as the gaps
delta_j = t_max - t_j of its ``TOP`` smallest gaps (delta_1 = 0), with the smallest gap left out as a bound on the
rest: the largest weight is g(beta) = 1 / sum_j exp(-beta delta_j) and its derivative
g'(beta) = g(beta) * sum_j w_j delta_j. beta*(n) solves E g(beta) = 1/2 (bisection in log beta on the sample
mean); its standard error is the delta method's: s.e.(mean g) / mean g'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

TOP = 2048  # gaps kept per sample; the rest bounded by (n - TOP) exp(-beta delta_TOP) (checked below TAIL)
TAIL = 1e-12  # the largest neglected share of the softmax denominator allowed at beta*
CHUNK = 1 << 22  # scores drawn at once (rows x n)
Z95 = 1.959963984540054


def scores(dim: int, n: int, rows: int, rng: np.random.Generator) -> np.ndarray:
    """``(rows, n)`` scores <e_1, k> of uniform keys on S^{d-1} (module docstring)."""
    a = (dim - 1) / 2.0
    return 2.0 * rng.beta(a, a, size=(rows, n)) - 1.0


def gaps(dim: int, n: int, samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sample: the ``min(n, TOP)`` smallest gaps t_max - t_j, sorted ``(samples, K)``, the first neglected gap
    ``(samples,)`` (inf when none is) and the number neglected (n - K)."""
    keep = min(n, TOP)
    rows = max(1, CHUNK // n)
    kept, first_out = [], []
    for start in range(0, samples, rows):
        t = scores(dim, n, min(rows, samples - start), rng)  # (r, n)
        if keep < n:
            part = np.partition(-t, keep, axis=1)  # the keep largest scores first, then the (keep+1)-th
            top, nxt = -part[:, :keep], -part[:, keep]
        else:
            top, nxt = t, np.full(t.shape[0], -np.inf)
        top = np.sort(top, axis=1)[:, ::-1]  # (r, K), descending
        kept.append(top[:, :1] - top)
        first_out.append(top[:, 0] - nxt)
    return np.concatenate(kept), np.concatenate(first_out), np.full(samples, n - keep)


def largest_weight(delta: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sample: g = the largest softmax weight, g' = dg/dbeta and the participation 1 / sum_j w_j^2."""
    e = np.exp(-beta * delta)  # (S, K)
    z = e.sum(axis=1)
    w = e / z[:, None]
    g = 1.0 / z
    return g, g * (w * delta).sum(axis=1), 1.0 / (w * w).sum(axis=1)


@dataclass(frozen=True)
class Critical:
    """beta*(n) with its standard error, and at beta* the mean participation number (keys holding mass) with its
    standard error; ``tail``: the largest neglected share of a denominator."""

    beta: float
    se: float
    keys: float
    keys_se: float
    tail: float


def critical_beta(delta: np.ndarray, first_out: np.ndarray, count_out: np.ndarray, level: float = 0.5) -> Critical:
    """beta* with mean g(beta*) = ``level`` (module docstring); ValueError when the neglected tail exceeds TAIL."""
    lo, hi = 1e-3, 1e3
    while largest_weight(delta, hi)[0].mean() < level:
        lo, hi = hi, hi * 1e3
    for _ in range(60):  # bisection in log beta: 2^-60 of the bracket's log ratio
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if largest_weight(delta, mid)[0].mean() < level else (lo, mid)
    beta = math.sqrt(lo * hi)
    g, dg, part = largest_weight(delta, beta)
    z = 1.0 / g
    with np.errstate(over="ignore", invalid="ignore"):
        tail = float(np.nanmax(np.where(count_out > 0, count_out * np.exp(-beta * first_out) / z, 0.0)))
    if tail > TAIL:
        raise ValueError(f"neglected softmax tail {tail:.2e} > {TAIL:g}: raise TOP")
    s = len(g)
    se = float(g.std(ddof=1) / math.sqrt(s) / dg.mean())
    return Critical(beta, se, float(part.mean()), float(part.std(ddof=1) / math.sqrt(s)), tail)


def fitted_slope(n: list[int], beta: list[float], se: list[float], correction: float) -> tuple[float, float, float]:
    """The slope s of log beta* = a + s log n + b n^-correction by weighted least squares (weights from the points'
    delta-method errors, s.e./beta), with its 95 % interval: the covariance inflated by chi^2 / dof when the points
    scatter more than their errors allow. The correction term is the leading finite-n effect: the key density
    near the query is (1 - t)^{(d-3)/2} (1 + O(1 - t)) and the gaps at beta* are of order n^{-2/(d-1)}, so
    ``correction`` = 2/(d-1) (docs/field.md)."""
    x, y = np.log(np.asarray(n, float)), np.log(np.asarray(beta))
    sig = np.asarray(se) / np.asarray(beta)
    design = np.stack([np.ones_like(x), x, np.exp(-correction * x)], axis=1) / sig[:, None]  # (P, 3)
    coef, *_ = np.linalg.lstsq(design, y / sig, rcond=None)
    resid = y / sig - design @ coef
    dof = max(1, len(x) - 3)
    cov = np.linalg.inv(design.T @ design) * max(1.0, float(resid @ resid) / dof)
    half = Z95 * math.sqrt(cov[1, 1])
    return float(coef[1]), float(coef[1] - half), float(coef[1] + half)
