"""Exact answers for one-dimensional overlap diffusions du = a(u) dt + b(u) dB on (-1, 1) (BEYOND sections 1-4).

Two tokens with attention off (or the two-token value-noise and quadratic-form models) have a Markov overlap
u = <x_1, x_2>. This module integrates, by Gauss-Legendre quadrature on intervals refined geometrically towards
u = +-1 (down to ``ENDPOINT_GAP``, with the power-law tails beyond integrated in closed form):

- ``stationary_mean``: E[f(u)] under the stationary density p(u) ~ b(u)^-2 exp(int_0^u 2a/b^2) (BEYOND 1);
- ``antipodal_probability``: P(u hits -1 before 1 | u0) from the scale function s'(u) = exp(-int_0^u 2a/b^2),
  and ``exit_probability``, the same for the ends lo, hi of an absorption criterion;
- ``stationary_sample``: draws from the stationary density, the start of the stationary-gap checks;
- the coefficients of the models: ``partial_noise_coefficients`` (BEYOND 1), ``value_noise_coefficients`` and
  ``value_noise_beta_c`` (BEYOND 2), ``quadratic_form_coefficients`` (BEYOND 4), and ``logistic`` (BEYOND 3).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from scipy.integrate import solve_ivp

from ..core._errors import ConfigError
from ..core._kernel import kernel_theory

Coefficient = Callable[[np.ndarray], np.ndarray]
ENDPOINT_GAP = 1e-12  # the quadrature grid stops this close to +-1; beyond, a power-law tail in closed form
INTERVALS_PER_SIDE = 160  # geometric intervals between 0 and each end
ORDER = 12  # Gauss-Legendre nodes per interval


def _grid(*splits: float) -> np.ndarray:
    """Breakpoints in [-1 + gap, 1 - gap], refined geometrically towards both ends, with 0 and ``splits``."""
    w = np.geomspace(ENDPOINT_GAP, 1.0, INTERVALS_PER_SIDE + 1)  # distance to the end
    return np.union1d(np.concatenate([-1.0 + w, (1.0 - w)[::-1][1:]]), [0.0, *splits])


def _nodes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on each [a_k, b_k]: ``(..., ORDER)`` each."""
    x, w = np.polynomial.legendre.leggauss(ORDER)
    half = (b - a)[..., None] / 2
    return (a + b)[..., None] / 2 + half * x, half * w


def _log_weight(ratio: Coefficient, *splits: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes u ``(M,)``, weights ``(M,)`` and I(u) = int_{-1+gap}^u ratio ``(M,)`` at the nodes (the grid
    broken at ``splits``, so that no interval straddles one)."""
    br = _grid(*splits)
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
    u, w, inner = _log_weight(lambda v: 2 * a(v) / b2(v), u0)
    logs = -inner
    shift = logs.max()
    ds = np.exp(logs - shift) * w  # (M,)
    lo, hi = _tail(u, logs - shift, -1), _tail(u, logs - shift, 1)
    if math.isinf(lo):
        return 0.0
    if math.isinf(hi):
        return 1.0
    return float((ds[u > u0].sum() + hi) / (lo + ds.sum() + hi))


def exit_probability(a: Coefficient, b2: Coefficient, u0: float, lo: float, hi: float) -> float:
    """P(u reaches ``lo`` before ``hi`` | u(0) = u0) = (S(hi) - S(u0)) / (S(hi) - S(lo)) for
    -1 < lo < u0 < hi < 1: the absorption criterion of the P(antipodal) checks (BEYOND sections 2, 4)."""
    if not -1.0 < lo < u0 < hi < 1.0:
        raise ConfigError("u0", u0, f"need -1 < lo < u0 < hi < 1 (lo = {lo}, hi = {hi})")
    u, w, inner = _log_weight(lambda v: 2 * a(v) / b2(v), lo, u0, hi)
    logs = -inner
    ds = np.exp(logs - logs[(u > lo) & (u < hi)].max()) * w  # (M,) S' du, scaled
    return float(ds[(u > u0) & (u < hi)].sum() / ds[(u > lo) & (u < hi)].sum())


def stationary_sample(a: Coefficient, b2: Coefficient, n: int, seed: int = 0) -> np.ndarray:
    """``n`` stratified draws ``(n,)`` of u from the stationary density p(u) ~ b^-2 exp(int 2a/b^2) (BEYOND
    section 1): the inverse of its distribution function on the quadrature nodes at (k + U_k) / n. Starting
    paths there leaves no burn-in bias for the model whose law p is."""
    u, w, inner = _log_weight(lambda v: 2 * a(v) / b2(v))
    logp = inner - np.log(b2(u))
    mass = np.exp(logp - logp.max()) * w  # (M,)
    cdf = (np.cumsum(mass) - mass / 2) / mass.sum()  # (M,) at the nodes (each node the middle of its mass)
    probs = (np.arange(n) + np.random.default_rng(seed).random(n)) / n  # (n,)
    return np.interp(probs, cdf, u)


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


def logistic_first_order(taus, m0: float, var0: float, tokens: int, dim: int) -> np.ndarray:
    """E m(tau) of resampled heads at beta = 0 to first order in 1/(d - 1) (BEYOND section 3, project
    derivation): E m = m_0 + m_1 / (d - 1), with m_0 the logistic solution from ``m0`` and

        m_1' = (1 - 2 m_0) m_1 - v - m_0 (1 - 1/N)(1 - ubar^2),   ubar = (m_0 - 1/N) / (1 - 1/N)
        v'   = 2 (1 - 2 m_0) v + 4 m_0^2 (1 - m_0)^2,             v = (d - 1) Var(m),  v(0) = (d - 1) ``var0``

    the first term of m_1' from the exact drift of m, m(1 - m) - m N^-2 sum_ij (1 - u_ij^2) / (d - 1), along
    the symmetric zeroth-order state u_ij = ubar (i != j); v from the quadratic variation of m,
    4 m |(I - N^-1 sum_i x_i x_i^T) xbar|^2 / (d - 1) = 4 m^2 (1 - m)^2 / (d - 1) there. ``(len(taus),)``."""
    n, taus = float(tokens), np.asarray(taus, float)

    def rhs(tau, y):
        m, m1, v = y
        ubar = (m - 1.0 / n) / (1.0 - 1.0 / n)
        dm1 = (1 - 2 * m) * m1 - v - m * (1 - 1.0 / n) * (1 - ubar * ubar)
        return [m * (1 - m), dm1, 2 * (1 - 2 * m) * v + 4 * m * m * (1 - m) ** 2]

    y0 = [m0, 0.0, (dim - 1) * var0]
    sol = solve_ivp(rhs, (0.0, float(taus.max())), y0, t_eval=np.sort(taus), rtol=1e-10, atol=1e-12)
    out = sol.y[0] + sol.y[1] / (dim - 1)  # (K,) at the sorted taus
    return out[np.argsort(np.argsort(taus))]
