"""The common noise of the SPDE as a truncated harmonic field, one Brownian coefficient B^k per real harmonic
(THEORY sections 2-4; docs/spde.md section 2).

``W(t, x) = sum_k sqrt(lambda_{l(k)}) R_k(x) B^k_t`` with R_k a real orthonormal basis and lambda_l the
Funk-Hecke (Gegenbauer) spectrum of the covariance, lambda_l >= 0 (Bochner, Schoenberg), truncated at degree M:

- circle (``CircleNoise``): the tangent noise is the scalar stationary field w with covariance
  C(u) = cos(u) kappa(cos u), C(0) = kappa(1), and dW(x) = w(x) e_theta;
- 2-sphere (``SphereNoise``): the three components of W are independent isotropic fields with covariance
  kappa(<x, y>) (the Legendre spectrum of kappa); the schemes project P_x dW.

The truncated field has variance k_M = sum_l lambda_l n_l / area (n_l harmonics of degree l) and covariance
error sup |C - C_M| <= ``tail`` = kappa(1) - k_M (all terms are >= 0): the stated tail bound. Both fields are
``contracts.LimitField`` and ``contracts.Replayable`` (``normal_shape`` does not depend on the points), so
``LimitSDE`` and ``make_solver`` run particles on them unchanged and the density solver evaluates the same
draw on its grid: one noise path. ``scale`` multiplies the field (0: no noise).
"""

from __future__ import annotations

import math

import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ..core._kernel import kernel_theory
from ..core._validate import nonneg_float
from ..noise._fields import LimitFromNormals
from ._harmonics import Harmonics, harmonics

NEGATIVE_ROUNDOFF = 1e-12  # spectral coefficients above -this * kappa(1) are round-off and set to 0


class SpectralField(LimitFromNormals):
    """A truncated isotropic Brownian field on S^{d-1} from its spectrum ``eigen`` (lambda_l, l = 0..M).
    ``kappa1``: the variance of the untruncated field (for the tail bound)."""

    components: int  # independent scalar fields: 1 (tangent noise of the circle) or d

    def __init__(self, basis: Harmonics, eigen: torch.Tensor, kappa1: float):
        self.basis, self.kappa1 = basis, float(kappa1)
        self.eigen = eigen.to(torch.float64).clamp(min=0.0)  # (M+1,)
        per_column = self.eigen[basis.real_degrees()]  # (R,)
        self.sqrt_eigen = per_column.sqrt()
        self.k = float(per_column.sum() / basis.area)  # k_M = sum_k lambda_k R_k(x)^2 (addition theorem)
        self._held: tuple[torch.Tensor, int, torch.Tensor] | None = None

    @property
    def modes(self) -> int:
        return self.basis.degree

    @property
    def tail(self) -> float:
        """kappa(1) - k_M >= sup |C - C_M|: what the truncation leaves out (0 for an exact finite spectrum)."""
        return max(0.0, self.kappa1 - self.k)

    def features(self, y: torch.Tensor) -> torch.Tensor:
        """sqrt(lambda_k) R_k(y), ``(..., N, d) -> (..., N, R)``; kept for the last points seen (the density
        solver's fixed grid), recomputed when other points or a modified tensor come."""
        held = self._held
        if held is not None and held[0] is y and held[1] == y._version:
            return held[2]
        feats = self.basis.real_table(y) * self.sqrt_eigen.to(y)
        self._held = (y, y._version, feats)
        return feats

    def scalar(self, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """The scalar fields at y ``(..., N, d)`` for coefficients z ``(..., R, c)`` -> ``(..., N, c)``."""
        return self.features(y) @ z

    def normal_shape(self, y: torch.Tensor) -> tuple[int, ...]:
        return (int(self.sqrt_eigen.numel()), self.components)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        """k_M (a scalar tensor): the truncated field's k(y, y), the Ito correction's variance."""
        return torch.tensor(self.k, dtype=y.dtype, device=y.device)

    def orient(self, y: torch.Tensor, scalar: torch.Tensor) -> torch.Tensor:
        """The vector field from the scalar fields ``(..., N, components)`` -> ``(..., N, d)``."""
        raise NotImplementedError

    def apply(self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """The increment sqrt(dt) W(y) for coefficients z ``(..., *normal_shape)``: ``(..., N, d)``."""
        return math.sqrt(dt) * self.orient(y, self.scalar(y, z))

    def apply_and_variance(
        self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.apply(y, dt, z, source), self.variance(y)

    def summary(self) -> dict:
        return {"noise_modes": self.modes, "k_M": self.k, "kappa1": self.kappa1, "tail_bound": self.tail}


class CircleNoise(SpectralField):
    """The tangent common noise on S^1: dW(x) = sqrt(dt) w(theta) e_theta, w with covariance
    C_M(u) = sum_{n <= M} c_n cos(n u) (THEORY section 4 on the circle)."""

    components = 1

    def orient(self, y: torch.Tensor, scalar: torch.Tensor) -> torch.Tensor:
        """w(y) e_theta(y): y ``(..., N, 2)``, w ``(..., N, 1)`` -> ``(..., N, 2)``."""
        e_theta = torch.stack([-y[..., 1], y[..., 0]], -1) / torch.linalg.vector_norm(y, dim=-1, keepdim=True)
        return scalar * e_theta


class SphereNoise(SpectralField):
    """The common noise on S^2: three independent isotropic components with covariance kappa_M(<x, y>)."""

    components = 3

    def orient(self, y: torch.Tensor, scalar: torch.Tensor) -> torch.Tensor:
        """W(y) = its three components ``(..., N, 3)`` (projected by the scheme)."""
        return scalar


def mlp_noise(
    dim: int, activation: str = "relu", su: float = 0.0, sw: float = 0.0, modes: int = 32, scale: float = 1.0
) -> SpectralField:
    """The MLP kernel's noise on S^{d-1} truncated at degree ``modes`` (``core._kernel.kernel_theory``), times
    ``scale`` (covariance times scale^2; 0 is no noise). Raises ConfigError for a bad activation, dimension,
    bias std, modes or scale."""
    scale = nonneg_float("noise_scale", scale)
    if scale > 1e150:  # its covariance scale^2 must be a float64
        raise ConfigError("noise_scale", scale, "at most 1e150 (the covariance takes its square)")
    theory = kernel_theory(activation, dim, su=su, sw=sw)
    basis = harmonics(dim, modes)
    if dim == 2:
        eigen = basis.funk_hecke(lambda t: t * theory.kappa(t), modes)  # C(u) = cos u kappa(cos u)
    else:
        eigen = basis.funk_hecke(theory.kappa, modes)
    floor = -NEGATIVE_ROUNDOFF * theory.kappa1 * basis.area
    if bool((eigen < floor).any()):  # cannot happen for a covariance: a wrong kernel, not bad input
        raise ArithmeticError(f"negative spectral coefficient {float(eigen.min()):.3g}: kappa is not a covariance")
    cls = CircleNoise if dim == 2 else SphereNoise
    return cls(basis, eigen * scale**2, theory.kappa1 * scale**2)
