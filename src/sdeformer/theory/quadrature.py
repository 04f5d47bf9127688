"""Exact answers for one-dimensional overlap diffusions du = a(u) dt + b(u) dB on (-1, 1) (BEYOND sections 1-4).

Two tokens with attention off (or the two-token value-noise and quadratic-form models) have a Markov overlap
u = <x_1, x_2>. This module integrates, by Gauss-Legendre quadrature on intervals refined geometrically towards
u = +-1 (down to ``ENDPOINT_GAP``, with the power-law tails beyond integrated in closed form):

- ``stationary_mean``: E[f(u)] under the stationary density p(u) ~ b(u)^-2 exp(int_0^u 2a/b^2) (BEYOND 1);
- ``antipodal_probability``: P(u hits -1 before 1 | u0) from the scale function s'(u) = exp(-int_0^u 2a/b^2);
- the coefficients of the models: ``partial_noise_coefficients`` (BEYOND 1), ``value_noise_coefficients`` and
  ``value_noise_beta_c`` (BEYOND 2), ``quadratic_form_coefficients`` (BEYOND 4), and ``logistic`` (BEYOND 3).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from ..core.errors import ConfigError
from ..core.kernel import kernel_theory

Coefficient = Callable[[np.ndarray], np.ndarray]
ENDPOINT_GAP = 1e-12  # the quadrature grid stops this close to +-1; beyond, a power-law tail in closed form
INTERVALS_PER_SIDE = 160  # geometric intervals between 0 and each end
ORDER = 12  # Gauss-Legendre nodes per interval


def _grid(split: float = 0.0) -> np.ndarray:
    """Breakpoints in [-1 + gap, 1 - gap], refined geometrically towards both ends, with 0 and ``split``."""
    w = np.geomspace(ENDPOINT_GAP, 1.0, INTERVALS_PER_SIDE + 1)  # distance to the end
    return np.union1d(np.concatenate([-1.0 + w, (1.0 - w)[::-1][1:]]), [split])


def _nodes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on each [a_k, b_k]: ``(..., ORDER)`` each."""
    x, w = np.polynomial.legendre.leggauss(ORDER)
    half = (b - a)[..., None] / 2
    return (a + b)[..., None] / 2 + half * x, half * w


def _log_weight(ratio: Coefficient, split: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes u ``(M,)``, weights ``(M,)`` and I(u) = int_{-1+gap}^u ratio ``(M,)`` at the nodes."""
    br = _grid(split)
    u, w = _nodes(br[:-1], br[1:])  # (K, q)
    whole = (ratio(u) * w).sum(-1)  # (K,) integral over each interval
    start = np.concatenate([[0.0], np.cumsum(whole)[:-1]])  # (K,) integral up to each interval's start
    sub_u, sub_w = _nodes(np.broadcast_to(br[:-1, None], u.shape), u)  # (K, q, q): [start, node]
    inner = start[:, None] + (ratio(sub_u) * sub_w).sum(-1)  # (K, q)
    return u.ravel(), w.ravel(), inner.ravel()


def _tail(u: np.ndarray, logf: np.ndarray, end: int) -> float:
    """int of f beyond the last node towards the end +-1, f ~ C |end - u|^s fitted to the two outer nodes."""
    idx = [0, 1] if end < 0 else [-1, -2]
    gap = np.abs(end - u[idx])  # distances to the end
    s = (logf[idx[0]] - logf[idx[1]]) / (math.log(gap[0]) - math.log(gap[1]))
    if s <= -1.0:
        return math.inf
    return float(math.exp(logf[idx[0]]) * gap[0] / (s + 1.0))


def stationary_mean(a: Coefficient, b2: Coefficient, f: Coefficient) -> float:
    """E[f(u)] under p(u) ~ b^-2 exp(int 2a/b^2) on (-1, 1) (BEYOND section 1). Raises ConfigError if p is
    not integrable (no stationary law)."""
    u, w, inner = _log_weight(lambda v: 2 * a(v) / b2(v))
    logp = inner - np.log(b2(u))
    logp -= logp.max()
    fu = f(u)
    tails = [_tail(u, logp, -1), _tail(u, logp, 1)]
    if not all(math.isfinite(t) for t in tails):
        raise ConfigError("coefficients", "a, b", "stationary density is not integrable at u = +-1")
    mass = float((np.exp(logp) * w).sum()) + sum(tails)
    ends = tails[0] * f(np.array([-1.0]))[0] + tails[1] * f(np.array([1.0]))[0]
    return float(((np.exp(logp) * fu * w).sum() + ends) / mass)


def antipodal_probability(a: Coefficient, b2: Coefficient, u0: float = 0.0) -> float:
    """P(u reaches -1 before 1 | u(0) = u0) = (S(1) - S(u0)) / (S(1) - S(-1)), S' = exp(-int 2a/b^2)
    (BEYOND sections 2, 4). An end that is not reached (S infinite there) gets probability 0."""
    if not -1.0 < u0 < 1.0:
        raise ConfigError("u0", u0, "initial overlap must be in (-1, 1)")
    u, w, inner = _log_weight(lambda v: 2 * a(v) / b2(v), split=u0)
    logs = -inner
    shift = logs.max()
    ds = np.exp(logs - shift) * w  # (M,)
    lo, hi = _tail(u, logs - shift, -1), _tail(u, logs - shift, 1)
    if math.isinf(lo):
        return 0.0
    if math.isinf(hi):
        return 1.0
    return float((ds[u > u0].sum() + hi) / (lo + ds.sum() + hi))


# -- the models' two-token coefficients -------------------------------------------------------------------


def partial_noise_coefficients(activation, dim: int, su: float, sw: float, share: float):
    """a(u) = rho kappa(u) (d - 2 + u^2) - (d - 1) kappa(1) u, b(u)^2 = 2 (1 - u^2)(kappa(1) - rho u kappa(u))
    (BEYOND section 1, two tokens, attention off)."""
    th = kernel_theory(activation, dim, su=su, sw=sw)
    k1, d, rho = th.kappa1, dim, float(share)

    def kap(u: np.ndarray) -> np.ndarray:
        return th.kappa(torch.from_numpy(np.asarray(u, float))).numpy()

    def a(u):
        return rho * kap(u) * (d - 2 + u * u) - (d - 1) * k1 * u

    def b2(u):
        return 2 * (1 - u * u) * (k1 - rho * u * kap(u))

    return a, b2


def partial_noise_gap(activation, dim: int, su: float, sw: float, share: float) -> float:
    """Stationary E[1 - u] of two tokens under partial noise, attention off (BEYOND section 1); needs rho < 1."""
    if not 0.0 <= share < 1.0:
        raise ConfigError("share", share, "a stationary gap needs rho in [0, 1)")
    a, b2 = partial_noise_coefficients(activation, dim, su, sw, share)
    return stationary_mean(a, b2, lambda u: 1.0 - u)


def _value_weights(u: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
    p = 1.0 / (1.0 + np.exp(-beta * (1.0 - u)))
    q = 1.0 - p
    return p * p + q * q, 2 * p * q  # s, r


def value_noise_coefficients(beta: float, dim: int):
    """Two tokens, sigma = 1: a = ((1 - u^2)/d)((d - 2) r - s u), b^2 = (2/d)(1 - u^2)^2 s (BEYOND section 2)."""
    d = dim

    def a(u):
        s, r = _value_weights(u, beta)
        return (1 - u * u) / d * ((d - 2) * r - s * u)

    def b2(u):
        s, _ = _value_weights(u, beta)
        return 2.0 / d * (1 - u * u) ** 2 * s

    return a, b2


def value_noise_antipodal(beta: float, dim: int, u0: float = 0.0) -> float:
    """P(antipodal | u0) of two tokens under value-matrix noise (BEYOND section 2, scale function)."""
    return antipodal_probability(*value_noise_coefficients(beta, dim), u0)


def value_noise_beta_c(dim: int) -> float:
    """beta_c(d) = arccosh(sqrt((d - 1)/2)) for d >= 3: u = -1 attracts iff beta > beta_c (BEYOND section 2)."""
    if int(dim) < 3:
        raise ConfigError("dim", dim, "beta_c needs d >= 3")
    return math.acosh(math.sqrt((dim - 1) / 2.0))


def quadratic_form_coefficients():
    """du = -2u(1 - u^2) dt + 2(1 - u^2) dB, any dimension (BEYOND section 4)."""
    return (lambda u: -2 * u * (1 - u * u)), (lambda u: 4 * (1 - u * u) ** 2)


def logistic(tau, m0: float):
    """Solution of m' = m(1 - m), m(0) = m0, at tau (BEYOND section 3)."""
    e = np.exp(np.asarray(tau, float))
    return m0 * e / (1.0 - m0 + m0 * e)
