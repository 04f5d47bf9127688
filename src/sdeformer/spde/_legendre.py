"""Spherical harmonics of S^2 for the SPDE solver (docs/spde.md section 1): orthonormal Y_lm (Condon-Shortley
phase) by the stable three-term recurrence of the normalised associated Legendre functions, at any points;
a Gauss-Legendre (in cos theta) x uniform (in phi) quadrature; Funk-Hecke multipliers by Gauss-Legendre
quadrature in t = <x, y> and, for e^{beta t}, by modified spherical Bessel functions.

Choice of transform: a quadrature SHT written here in torch (dense tables, any device, any set of points),
because the solver's push-forward needs the harmonics at scattered points; torch-harmonics (the ``spde``
extra, 0.7.x: pure python) is the independent reference the tests compare it with on its grid.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from ..core._validate import positive_int
from ._harmonics import Harmonics, Zonal

FUNK_HECKE_NODES = 2048  # Gauss-Legendre nodes in t for the Legendre spectrum of a zonal kernel


@functools.lru_cache(maxsize=8)
def gauss_legendre(nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Gauss-Legendre nodes and weights on [-1, 1] (float64; cached: numpy's eigenvalue method is slow)."""
    t, w = np.polynomial.legendre.leggauss(nodes)
    return torch.from_numpy(t), torch.from_numpy(w)


def legendre_columns(t: torch.Tensor, degree: int) -> torch.Tensor:
    """P_l(t), l = 0..degree (P_l(1) = 1), ``(...,) -> (..., degree + 1)``."""
    cols = [torch.ones_like(t), t]
    for n in range(1, degree):
        cols.append(((2 * n + 1) * t * cols[n] - n * cols[n - 1]) / (n + 1))
    return torch.stack(cols[: degree + 1], -1)


class SphereHarmonics(Harmonics):
    """Y_lm(x) = Pbar_lm(cos theta) e^{i m phi} on S^2, 0 <= m <= l <= L, ordered by m then l
    (P = (L+1)(L+2)/2), with int |Y_lm|^2 = 1."""

    dim, area = 3, 4 * math.pi

    def _indices(self) -> tuple[torch.Tensor, torch.Tensor]:
        pairs = [(deg, m) for m in range(self.degree + 1) for deg in range(m, self.degree + 1)]
        degrees, orders = zip(*pairs, strict=True)
        return torch.tensor(degrees), torch.tensor(orders)

    def legendre(self, ct: torch.Tensor, st: torch.Tensor) -> list[torch.Tensor]:
        """Pbar_lm(cos theta), one block per order m: ``ct``, ``st`` = cos, sin theta ``(...)`` ->
        [``(..., L - m + 1)`` for m = 0..L] (l = m..L)."""
        big = self.degree
        blocks: list[torch.Tensor] = []
        pmm = torch.full_like(ct, 1.0 / math.sqrt(4 * math.pi))
        for m in range(big + 1):
            if m > 0:
                pmm = -math.sqrt((2 * m + 1) / (2 * m)) * st * pmm
            prev, cur = torch.zeros_like(ct), pmm
            cols = [cur]
            for n in range(m + 1, big + 1):
                a = math.sqrt((4 * n * n - 1) / (n * n - m * m))
                b = math.sqrt(((n - 1) ** 2 - m * m) / (4 * (n - 1) ** 2 - 1))
                prev, cur = cur, a * (ct * cur - b * prev)
                cols.append(cur)
            blocks.append(torch.stack(cols, -1))
        return blocks

    def prepare(self, x: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
        """(the ``legendre`` blocks, cos(m phi), sin(m phi) ``(..., n, L+1)``) at x ``(..., n, 3)``."""
        r = torch.linalg.vector_norm(x, dim=-1)  # (..., n)
        ct = (x[..., 2] / r).clamp(-1.0, 1.0)
        st = torch.hypot(x[..., 0], x[..., 1]) / r
        phi = torch.atan2(x[..., 1], x[..., 0]).unsqueeze(-1)  # (..., n, 1)
        angle = phi * torch.arange(self.degree + 1, device=x.device, dtype=x.dtype)  # (..., n, L+1)
        return self.legendre(ct, st), angle.cos(), angle.sin()

    def table(self, x: torch.Tensor) -> torch.Tensor:
        blocks, cos, sin = self.prepare(x)
        parts = [torch.complex(b * cos[..., m : m + 1], b * sin[..., m : m + 1]) for m, b in enumerate(blocks)]
        return torch.cat(parts, -1)  # (..., n, P), m-major

    def _apply(self, prepared: tuple[list[torch.Tensor], torch.Tensor, torch.Tensor], w: torch.Tensor) -> torch.Tensor:
        """Re sum_lm Pbar_lm e^{i m phi} w_lm, order by order (real matrix products)."""
        blocks, cos, sin = prepared
        out, start = None, 0
        for m, part in enumerate(blocks):  # part (..., n, L - m + 1)
            wm = w[..., start : start + part.shape[-1], :]  # (..., L - m + 1, q)
            start += part.shape[-1]
            term = cos[..., m : m + 1] * (part @ wm.real) - sin[..., m : m + 1] * (part @ wm.imag)
            out = term if out is None else out + term
        assert out is not None
        return out

    def _adjoint(
        self, prepared: tuple[list[torch.Tensor], torch.Tensor, torch.Tensor], w: torch.Tensor
    ) -> torch.Tensor:
        """sum_j Pbar_lm(x_j) e^{-i m phi_j} w_j, order by order (real matrix products)."""
        blocks, cos, sin = prepared
        parts = []
        for m, part in enumerate(blocks):
            pt = part.transpose(-1, -2)  # (..., L - m + 1, n)
            parts.append(torch.complex(pt @ (w * cos[..., m : m + 1]), -(pt @ (w * sin[..., m : m + 1]))))
        return torch.cat(parts, dim=-2)

    def quadrature(self, exact: int) -> tuple[torch.Tensor, torch.Tensor]:
        """nlat = exact // 2 + 1 Gauss-Legendre nodes in cos theta times nlon = exact + 1 uniform phi."""
        exact = positive_int("quadrature", exact)
        nlat, nlon = exact // 2 + 1, exact + 1
        t, w = gauss_legendre(nlat)
        phi = torch.arange(nlon, dtype=torch.float64) * (2 * math.pi / nlon)
        s = torch.sqrt(1 - t * t)[:, None]
        pts = torch.stack([s * phi.cos(), s * phi.sin(), t[:, None].expand(nlat, nlon)], -1)  # (nlat, nlon, 3)
        weights = (w[:, None] * (2 * math.pi / nlon)).expand(nlat, nlon)
        return pts.reshape(-1, 3), weights.reshape(-1).contiguous()

    def funk_hecke(self, g: Zonal, degree: int, nodes: int = FUNK_HECKE_NODES) -> torch.Tensor:
        """lambda_l = 2 pi int_{-1}^{1} g(t) P_l(t) dt by Gauss-Legendre quadrature."""
        t, w = gauss_legendre(nodes)
        return 2 * math.pi * (w * g(t)) @ legendre_columns(t, degree)
