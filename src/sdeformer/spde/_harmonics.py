"""Orthonormal harmonics on the circle and the 2-sphere, the basis of the SPDE solver (docs/spde.md section 1;
THEORY section 4: the density and the Gegenbauer / spherical-harmonic expansion of kappa).

A density is held by its coefficients ``c_k = int conj(B_k) rho``, k = (l, m) with degree l <= L and order
0 <= m <= l (on the circle m = l): a complex tensor ``(..., P)``. The real function is
``rho = sum_k eps_k Re(c_k B_k)``, eps = 1 for m = 0 and 2 for m > 0 (the m < 0 coefficients are conjugates).
``CircleHarmonics``: B_m = e^{i m theta} / sqrt(2 pi); ``SphereHarmonics`` (``legendre``): Y_lm with the
Condon-Shortley phase. Both give tables at any points, quadrature grids, Funk-Hecke multipliers of zonal
kernels (a zonal convolution is diagonal in l) and energies per degree. Every table is computed in the dtype
and on the device of the points; work over many points goes in chunks of at most CHUNK entries.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from scipy import special

from ..core._errors import ConfigError
from ..core._validate import positive_int

CHUNK = 1 << 21  # table entries (points x coefficients x batch) per chunk: 32 MB in complex128
Zonal = Callable[[torch.Tensor], torch.Tensor]  # g(t), t = <x, y> in [-1, 1] (float64)


class Harmonics(ABC):
    """Orthonormal harmonics B_k of S^{d-1} up to degree ``degree`` (L >= 1); ``l``, ``m``: (P,) degree and order
    of each coefficient; ``eps``: (P,) 1 for m = 0, 2 for m > 0."""

    dim: int
    area: float

    def __init__(self, degree: int):
        self.degree = positive_int("modes", degree)
        self.l, self.m = self._indices()
        self.eps = torch.where(self.m == 0, 1.0, 2.0).to(torch.float64)

    @abstractmethod
    def _indices(self) -> tuple[torch.Tensor, torch.Tensor]: ...

    @abstractmethod
    def table(self, x: torch.Tensor) -> torch.Tensor:
        """B_k(x / |x|) at points ``(..., n, d)`` -> complex ``(..., n, P)``."""

    @abstractmethod
    def quadrature(self, exact: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Points ``(J, d)`` and weights ``(J,)`` (float64) integrating every polynomial of degree <= exact."""

    @abstractmethod
    def funk_hecke(self, g: Zonal, degree: int) -> torch.Tensor:
        """lambda_l, l = 0..degree, with int g(<x, y>) B_k(y) dy = lambda_l B_k(x) (by quadrature), float64."""

    def exp_multipliers(self, beta: float, scaled: bool = False) -> torch.Tensor:
        """The Funk-Hecke multipliers of e^{beta t} (``exp_series``), l = 0..L; ``scaled``: times e^{-beta}."""
        return exp_series(self.dim, beta, self.degree, scaled)

    @property
    def size(self) -> int:
        return int(self.l.numel())

    def index(self, degree: int, order: int | None = None) -> int:
        """The position of the coefficient (degree, order) (order None: the first of that degree: m = l on the
        circle, m = 0 on the sphere). Raises ConfigError for a mode the basis lacks."""
        hit = torch.nonzero((self.l == degree) & ((self.m == order) if order is not None else True))
        if hit.numel() == 0 or not 0 <= degree <= self.degree:
            raise ConfigError("mode", (degree, order), f"a degree <= {self.degree} with 0 <= order <= degree")
        return int(hit[0, 0])

    def laplace_by_degree(self) -> torch.Tensor:
        """The -Laplace_S eigenvalue l (l + d - 2) of each degree l = 0..L, (L+1,) float64."""
        lf = torch.arange(self.degree + 1, dtype=torch.float64)
        return lf * (lf + self.dim - 2)

    def per_coefficient(self, per_degree: torch.Tensor) -> torch.Tensor:
        """A ``(..., L+1)`` quantity per degree spread over the coefficients ``(..., P)``."""
        return per_degree[..., self.l.to(per_degree.device)]

    def energy(self, c: torch.Tensor) -> torch.Tensor:
        """sum over the orders of |c_lm|^2 (both signs of m): ``(..., P) -> (..., L+1)`` real."""
        e = self.eps.to(c.device) * c.abs().pow(2)  # (..., P)
        out = torch.zeros(c.shape[:-1] + (self.degree + 1,), dtype=e.dtype, device=c.device)
        return out.index_add_(-1, self.l.to(c.device), e)

    def uniform(self, batch: tuple[int, ...] = (), dtype=torch.complex128, device=None) -> torch.Tensor:
        """The coefficients of the uniform probability density, ``(*batch, P)``."""
        c = torch.zeros(tuple(batch) + (self.size,), dtype=dtype, device=device)
        c[..., 0] = 1.0 / math.sqrt(self.area)
        return c

    def mass(self, c: torch.Tensor) -> torch.Tensor:
        """int rho = c_0 sqrt(area), ``(..., P) -> (...)`` real."""
        return c[..., 0].real * math.sqrt(self.area)

    def _rows(self, batch: int) -> int:
        """Points per chunk: at most CHUNK table entries over ``batch`` runs."""
        return max(1, CHUNK // max(1, self.size * batch))

    def prepare(self, x: torch.Tensor) -> Any:
        """What ``synthesize`` and ``moments`` need of the points x ``(..., n, d)`` (default: ``table(x)``); pass
        it as ``table=`` to reuse it for fixed points."""
        return self.table(x)

    def _apply(self, prepared: Any, w: torch.Tensor) -> torch.Tensor:
        """sum_k B_k(x_j) w_kq, real part: w ``(..., P, q)`` complex -> ``(..., n, q)``."""
        return (prepared @ w).real

    def _adjoint(self, prepared: Any, w: torch.Tensor) -> torch.Tensor:
        """sum_j conj(B_k(x_j)) w_jq: w ``(..., n, q)`` real -> ``(..., P, q)`` complex."""
        return (prepared.transpose(-1, -2) @ w.to(prepared.dtype)).conj()

    def synthesize(self, c: torch.Tensor, x: torch.Tensor, table: Any = None) -> torch.Tensor:
        """rho(x) = sum_k eps_k Re(c_k B_k(x)): c ``(..., P)``, x ``(..., n, d)`` -> ``(..., n)`` real
        (``table``: ``prepare(x)`` if already computed)."""
        return self.synthesize_stacked(c.unsqueeze(-1), x, table).squeeze(-1)

    def synthesize_stacked(self, c: torch.Tensor, x: torch.Tensor, table: Any = None) -> torch.Tensor:
        """``synthesize`` of q functions at once: c ``(..., P, q)`` -> ``(..., n, q)`` real."""
        w = c * self.eps.to(c.device, c.real.dtype)[:, None]  # (..., P, q)
        if table is not None:
            return self._apply(table, w)
        rows = self._rows(math.prod(w.shape[:-2]))
        return torch.cat([self._apply(self.prepare(part), w) for part in x.split(rows, dim=-2)], dim=-2)

    def moments(
        self, x: torch.Tensor, masses: torch.Tensor, values: torch.Tensor | None = None, table: Any = None
    ) -> torch.Tensor:
        """sum_j masses_j conj(B_k(x_j)) [values_j]: x ``(..., n, d)``, masses ``(..., n)``, values ``(..., n, q)``
        -> ``(..., P)`` (or ``(..., P, q)``) complex: the coefficients of the measure sum_j masses_j delta_{x_j}."""
        w = masses.unsqueeze(-1) if values is None else masses.unsqueeze(-1) * values  # (..., n, q)
        if table is not None:
            out = self._adjoint(table, w)
        else:
            rows = self._rows(math.prod(w.shape[:-2]))
            parts = zip(x.split(rows, dim=-2), w.split(rows, dim=-2), strict=True)
            out = sum(self._adjoint(self.prepare(xp), wp) for xp, wp in parts)
        assert isinstance(out, torch.Tensor)
        return out if values is not None else out.squeeze(-1)

    def real_table(self, x: torch.Tensor) -> torch.Tensor:
        """A real orthonormal basis at x: [Re B (m = 0), sqrt2 Re B (m > 0), sqrt2 Im B (m > 0)],
        ``(..., n, d) -> (..., n, (L+1)^2)`` on the sphere, ``(..., n, 2L+1)`` on the circle."""
        tab = self.table(x)
        zero, pos = (self.m == 0).to(x.device), (self.m > 0).to(x.device)
        return torch.cat(
            [tab[..., zero].real, math.sqrt(2) * tab[..., pos].real, math.sqrt(2) * tab[..., pos].imag], -1
        )

    def real_degrees(self) -> torch.Tensor:
        """The degree of each column of ``real_table``."""
        return torch.cat([self.l[self.m == 0], self.l[self.m > 0], self.l[self.m > 0]])


class CircleHarmonics(Harmonics):
    """Fourier modes B_m = e^{i m theta} / sqrt(2 pi) on S^1, m = 0..L (P = L + 1)."""

    dim, area = 2, 2 * math.pi

    def _indices(self) -> tuple[torch.Tensor, torch.Tensor]:
        m = torch.arange(self.degree + 1)
        return m, m

    def table(self, x: torch.Tensor) -> torch.Tensor:
        theta = torch.atan2(x[..., 1], x[..., 0])  # (..., n)
        m = self.m.to(x.device, x.dtype)
        angle = theta.unsqueeze(-1) * m  # (..., n, P)
        return torch.polar(torch.full_like(angle, 1.0 / math.sqrt(2 * math.pi)), angle)

    def quadrature(self, exact: int) -> tuple[torch.Tensor, torch.Tensor]:
        n = positive_int("quadrature", exact) + 1  # the J-point trapezoid rule is exact up to degree J - 1
        theta = torch.arange(n, dtype=torch.float64) * (2 * math.pi / n)
        return torch.stack([theta.cos(), theta.sin()], -1), torch.full((n,), 2 * math.pi / n, dtype=torch.float64)

    def funk_hecke(self, g: Zonal, degree: int, points: int = 1 << 12) -> torch.Tensor:
        """lambda_l = int_{-pi}^{pi} g(cos u) cos(l u) du by the trapezoid rule on ``points`` points (spectral;
        g is evaluated on [0, pi] only, the integrand being even)."""
        half = torch.arange(points // 2 + 1, dtype=torch.float64) * (2 * math.pi / points)
        values = g(torch.cos(half))
        values = torch.cat([values, values[1:-1].flip(0)])  # g(cos u) on the whole circle
        spectrum = torch.fft.rfft(values).real * (2 * math.pi / points)  # (points/2 + 1,)
        if degree >= spectrum.numel():
            raise ConfigError("modes", degree, f"at most {spectrum.numel() - 1} for {points} quadrature points")
        return spectrum[: degree + 1].contiguous()


def exp_series(dim: int, beta: float, degree: int, scaled: bool = False) -> torch.Tensor:
    """The Funk-Hecke multipliers of e^{beta t} on S^{d-1}, l = 0..degree (``scaled``: times e^{-beta}):
    2 pi I_l(beta) on the circle (e^{beta cos u} = sum_l I_l(beta) e^{i l u}); 4 pi i_l(beta) =
    4 pi sqrt(pi / (2 beta)) I_{l+1/2}(beta) on S^2 (e^{beta t} = sum_l (2l+1) i_l(beta) P_l(t))."""
    fn = special.ive if scaled else special.iv
    ls = np.arange(degree + 1, dtype=np.float64)
    if dim == 2:
        values = 2 * math.pi * fn(ls, float(beta))
    else:
        values = 4 * math.pi * math.sqrt(math.pi / (2 * float(beta))) * fn(ls + 0.5, float(beta))
    return torch.from_numpy(values).to(torch.float64)


def harmonics(dim: int, degree: int) -> Harmonics:
    """The harmonics of S^{d-1} for d = 2 (circle) or 3 (2-sphere); ConfigError otherwise."""
    from ._legendre import SphereHarmonics

    if dim == 2:
        return CircleHarmonics(degree)
    if dim == 3:
        return SphereHarmonics(degree)
    raise ConfigError("dim", dim, "the density solver runs on the circle (2) or the 2-sphere (3)")
