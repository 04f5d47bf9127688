"""Softmax and unnormalized (USA) attention of a measure through the harmonic expansion of e^{beta <x, y>}
(THEORY section 1, BEYOND section 5; docs/spde.md section 3).

For mu = sum_j m_j delta_{y_j} (a particle cloud, m_j = 1/N, or the density on a quadrature grid,
m_j = w_j rho(y_j)), with Q^T K = beta I and V = s I:

    Z(x) = int e^{beta <x,y>} dmu(y) = sum_k eps_k Re(F_l c_k B_k(x)),   N(x) = int e^{beta <x,y>} y dmu(y)

with c_k = sum_j m_j conj(B_k(y_j)) (and the same moments weighted by y_j for N), F_l the Funk-Hecke multipliers
(2 pi I_l(beta) on the circle, 4 pi i_l(beta) on S^2): the zonal convolution is diagonal in the harmonic basis.
Softmax: Attn = s N / Z; USA: Attn = s N. The series is cut at the degree where F_l / F_0 < ``tol``
(``exp_degree``), so for a cloud this equals the O(N^2) attention to round-off at O(N P) cost.
"""

from __future__ import annotations

from typing import Any

import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ..core._validate import finite_float
from ._budget import beta_value
from ._harmonics import exp_series, harmonics

KINDS = ("softmax", "usa")
SERIES_TOL = 1e-17  # relative size of the first dropped multiplier F_l / F_0
MAX_DEGREE = 400


def exp_degree(dim: int, beta: float, tol: float = SERIES_TOL) -> int:
    """The smallest L with F_l(beta) / F_0(beta) < tol for every l > L (F_l decreases in l)."""
    ratios = exp_series(dim, beta, MAX_DEGREE, scaled=True)
    ratios = ratios / ratios[0]
    small = torch.nonzero(ratios < tol)
    if small.numel() == 0:
        raise ConfigError("beta", beta, f"the series of e^(beta t) needs more than {MAX_DEGREE} modes")
    return max(1, int(small[0]) - 1)


class KernelAttention:
    """Attention of a weighted point measure through the harmonic series (module docstring); ``degree`` None:
    ``exp_degree(dim, beta)``. ``drift(x)`` is the attention of the cloud x itself (an ``AttentionDrift``);
    ``of(y, masses)`` the attention of another measure. Raises ConfigError for an unknown kind, beta <= 0 or above
    ``budget.BETA_MAX``."""

    def __init__(
        self, dim: int, beta: float = 1.0, scale: float = 1.0, kind: str = "softmax", degree: int | None = None
    ):
        if kind not in KINDS:
            raise ConfigError("attention", kind, f"one of {list(KINDS)} for the density solver")
        self.beta, self.scale, self.kind = beta_value(beta), finite_float("attention_scale", scale), kind
        self.harmonics = harmonics(dim, degree if degree is not None else exp_degree(dim, self.beta))
        # softmax: the ratio N / Z, so the multipliers are scaled by e^{-beta} (no overflow)
        multipliers = self.harmonics.exp_multipliers(self.beta, scaled=kind == "softmax")
        self.weights = self.harmonics.per_coefficient(multipliers)  # (P,)

    def moments(self, y: torch.Tensor, masses: torch.Tensor, table: Any = None) -> torch.Tensor:
        """[c_k, c_k(y_1), ..., c_k(y_d)] of sum_j m_j delta_{y_j}: ``(..., n, d), (..., n) -> (..., P, 1 + d)``."""
        ones = torch.ones_like(y[..., :1])
        return self.harmonics.moments(y, masses, torch.cat([ones, y], -1), table)

    def evaluate(self, moments: torch.Tensor, x: torch.Tensor, table: Any = None) -> torch.Tensor:
        """Attn(mu, x) from the measure's ``moments`` at x ``(..., n, d)`` -> ``(..., n, d)``."""
        w = self.weights.to(moments.device, moments.real.dtype)[:, None]  # (P, 1)
        zn = self.harmonics.synthesize_stacked(moments * w, x, table)  # (..., n, 1 + d)
        numerator = zn[..., 1:]
        return self.scale * (numerator / zn[..., :1] if self.kind == "softmax" else numerator)

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """The attention of the cloud x on itself, ``(..., N, d) -> (..., N, d)`` (equal masses 1/N)."""
        masses = torch.full(x.shape[:-1], 1.0 / x.shape[-2], dtype=x.dtype, device=x.device)
        return self.evaluate(self.moments(x, masses), x)

    def of(self, y: torch.Tensor, masses: torch.Tensor, table: Any = None) -> MeasureAttention:
        """The attention of sum_j m_j delta_{y_j} as an ``AttentionDrift`` (evaluated at any points)."""
        return MeasureAttention(self, self.moments(y, masses, table))


class MeasureAttention:
    """``drift(x)`` = Attn(mu, x) of a fixed measure mu (its moments), at any points ``(..., n, d)``;
    ``table``: ``harmonics.prepare`` of the points it will be evaluated at, when already computed."""

    def __init__(self, attention: KernelAttention, moments: torch.Tensor, table: Any = None):
        self.attention, self.moments, self.table = attention, moments, table

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        return self.attention.evaluate(self.moments, x, self.table)
