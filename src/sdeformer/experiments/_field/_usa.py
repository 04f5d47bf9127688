"""Unnormalized self-attention with independent noise on S^{d-1} (Mun, Rosenzweig, arXiv 2606.05140; docs/field.md,
"Independent noise"): the mean-field model, its thresholds and its stationary branch, and the particles.

The particles: dX_i = P_{X_i} [(1/N) sum_j e^{beta <X_i, X_j>} X_j] dt + sqrt(2/K) P_{X_i} dB_i, each token with
its own Brownian motion, stepped by projected Euler-Maruyama. The drift is the gradient of W * mu with
W(t) = e^{beta t} / beta, so a stationary law solves rho = exp(K W * rho) / Z (the free energy
(1/K) int rho log rho - (1/2) int int W rho rho). By Funk-Hecke, W acts on the degree-l harmonics by
w_l = Gamma(d/2) (2/beta)^{d/2-1} I_{l+d/2-1}(beta) / beta, so the uniform law loses stability at
K_#(beta) = 1 / w_1 = beta^{d/2} / (2^{d/2-1} Gamma(d/2) I_{d/2}(beta)): twice the paper's formula, whose
coupling is normalised as half ours. The paper's beta*_d (the transition at K_# is continuous below it,
discontinuous above) solves I_{d/2+1}(beta) / I_{d/2}(beta) = 1/d, whatever K's normalisation.

``branch`` solves the stationary equation for zonal laws (functions of <x, e_1>) with a given first moment m,
expanded in the degree-l zonal harmonics up to ``DEGREES``: the coupling K(m) on the branch. Below beta*_d it
rises from K_# (a continuous transition); above, it first falls below K_# (a discontinuous one), and its minimum
over m is the spinodal K_s, below which no clustered state exists.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq, fsolve
from scipy.special import eval_gegenbauer, gammaln, ive

DEGREES = 14  # zonal harmonics kept: w_l decays like (beta/2)^l / l!, below 1e-12 of w_1 at beta <= 4
NODES = 256  # Gauss-Legendre nodes in the angle to e_1


def beta_star(dim: int, ratio: float | None = None) -> float:
    """The paper's beta*_d: I_{d/2+1}(beta) / I_{d/2}(beta) = ``ratio`` (default 1/d)."""
    target = 1.0 / dim if ratio is None else ratio
    return float(brentq(lambda b: ive(dim / 2 + 1, b) / ive(dim / 2, b) - target, 1e-6, 500.0, xtol=1e-13))  # pyright: ignore[reportArgumentType]


def coefficient(dim: int, beta: float, degree: int) -> float:
    """w_l, the Funk-Hecke eigenvalue of W(t) = e^{beta t} / beta at degree l (module docstring)."""
    log = gammaln(dim / 2) + (dim / 2 - 1) * math.log(2 / beta) + math.log(ive(degree + dim / 2 - 1, beta)) + beta
    return math.exp(log) / beta


def threshold(dim: int, beta: float) -> float:
    """K_#(beta) = 1 / w_1: the coupling at which the uniform law loses linear stability (our normalisation)."""
    return 1.0 / coefficient(dim, beta, 1)


class Zonal:
    """Zonal functions on S^{d-1} on a Gauss-Legendre grid in theta (the angle to e_1): the uniform measure's
    weights and the harmonics P_l(cos theta) with P_l(1) = 1."""

    def __init__(self, dim: int, beta: float):
        u, w = np.polynomial.legendre.leggauss(NODES)
        self.theta = math.pi * (u + 1) / 2
        t = np.cos(self.theta)
        dens = w * np.sin(self.theta) ** (dim - 2)
        self.weight = dens / dens.sum()  # (nodes,) the uniform law's
        lam = (dim - 2) / 2
        rows = [np.cos(k * self.theta) if dim == 2 else eval_gegenbauer(k, lam, t) / eval_gegenbauer(k, lam, 1.0)
                for k in range(1, DEGREES + 1)]  # fmt: skip
        self.P = np.stack(rows)  # (L, nodes)
        self.norm = (self.P**2 * self.weight).sum(axis=1)  # (L,) int P_l^2 d sigma
        self.w = np.array([coefficient(dim, beta, k) for k in range(1, DEGREES + 1)])  # (L,)

    def density(self, c: np.ndarray, K: float) -> np.ndarray:
        """rho = exp(K W * rho) / Z for rho's harmonic coefficients c (rho = 1 + sum_l c_l P_l)."""
        v = K * (self.w * c) @ self.P  # (nodes,)
        e = np.exp(v - v.max())
        return e / (e * self.weight).sum()

    def residual(self, unknowns: np.ndarray, m: float) -> np.ndarray:
        """The stationary equation's coefficients and the moment condition int t rho = m (c_1 norm_1 = m)."""
        K, c = unknowns[0], unknowns[1:]
        rho = self.density(c, K)
        again = (self.P * rho * self.weight).sum(axis=1) / self.norm  # (L,)
        return np.concatenate([[c[0] * self.norm[0] - m], again - c])


def branch(dim: int, beta: float, moments: np.ndarray) -> np.ndarray:
    """K(m) on the zonal stationary branch for each first moment m (continued from small m), NaN where the solve
    fails."""
    z = Zonal(dim, beta)
    guess = np.zeros(DEGREES + 1)
    guess[0] = threshold(dim, beta)
    out = np.full(len(moments), np.nan)
    for i, m in enumerate(moments):
        if i == 0:
            guess[1] = m / z.norm[0]
        sol, info, ok, _ = fsolve(z.residual, guess, args=(m,), full_output=True, xtol=1e-12)
        if ok == 1 and np.abs(z.residual(sol, m)).max() < 1e-9:
            out[i], guess = sol[0], sol
    return out


def continuity_sign(dim: int, beta: float, m: float = 0.01) -> float:
    """K(m) / K_# - 1 at a small moment: > 0 for a continuous transition, < 0 for a discontinuous one."""
    return float(branch(dim, beta, np.array([m]))[0] / threshold(dim, beta) - 1.0)


def branch_beta_star(dim: int) -> float:
    """beta where the branch's K(m) at small m crosses K_#: the stationary equation's own beta*_d (bisection)."""
    return float(brentq(lambda b: continuity_sign(dim, b), 0.3, 8.0, xtol=1e-8))  # pyright: ignore[reportArgumentType]


def spinodal_ratio(dim: int, beta: float) -> tuple[float, float]:
    """min_m K(m) / K_# over the branch, and the moment where it is reached (1 and 0 for a continuous
    transition)."""
    moments = np.linspace(0.02, 0.94, 47)
    ratios = branch(dim, beta, moments) / threshold(dim, beta)
    k = int(np.nanargmin(ratios))
    return (1.0, 0.0) if ratios[k] >= 1.0 else (float(ratios[k]), float(moments[k]))


def particles(dim: int, beta: float, coupling: float, tokens: int, horizon: float, dt: float, seed: int) -> float:
    """One run of the particles (module docstring) from all tokens at e_1 to ``horizon``: |mean of X| averaged over
    the last quarter of the run (``_independent_noise_particles.order_parameters``, which runs many at once)."""
    from ._independent_noise_particles import order_parameters

    steps = int(round(horizon / dt))
    return float(order_parameters(dim, [beta], [coupling], tokens, steps, [dt], seed, tail=0.25)[0])


def branch_order(dim: int, beta: float, ratio: float) -> float | None:
    """The stable clustered state's first moment at K = ``ratio`` K_#: where the branch's rising upper part
    (beyond its minimum) reaches ``ratio`` (linear between grid points); None where it does not."""
    moments = np.linspace(0.02, 0.98, 49)
    ratios = branch(dim, beta, moments) / threshold(dim, beta)
    k = int(np.nanargmin(ratios))
    for i in range(k, len(moments) - 1):
        a, b = ratios[i], ratios[i + 1]
        if np.isfinite(a) and np.isfinite(b) and a <= ratio <= b:
            return float(moments[i] + (ratio - a) / (b - a) * (moments[i + 1] - moments[i]))
    return None
