"""Noise covariances per unit time, C_ij(X) = E[xi_i xi_j^T] / dt (BEYOND section 0), asked of a field through
its contracts.

``pair_covariance(field, x)`` ``(..., N, d) -> (..., N, N, d, d)`` (``contracts.PairCovariance``) and
``tangential_variance(field, x)`` ``(..., N, 1)`` = tr(P_{x_i} C_ii) / (d - 1), the k(x, x) whose
``-(d-1)/2 k x`` is the Ito correction of ``dynamics._sde.LimitSDE`` (BEYOND 0: ``-(1/2) tr(P C_ii) x``): the
field's own ``variance`` (``contracts.Variance``) or the trace of its pair covariance.
``IsotropicKernel`` gives both, and the one-point law, to a field whose covariance is ``k(x_i, x_j) I`` (the
kernels of THEORY section 2: ``MLPNoise``, ``GaussianField``, ``RandomFeatureField``) from its ``kernel(x)``.
"""

from __future__ import annotations

import torch

from ..contracts import PairCovariance, RandomSource, Variance, require
from ..core._sphere import project


class IsotropicKernel:
    """Mixin for a field with covariance C_ij = k(x_i, x_j) I_d: ``kernel(x)`` ``(..., N, N)`` is its own; this
    gives ``pair_covariance`` and the one-point law ``sqrt(k(y_i, y_i) dt) z_i`` (``variance`` is its own)."""

    def kernel(self, x: torch.Tensor) -> torch.Tensor:  # (..., N, d) -> (..., N, N)
        raise NotImplementedError

    def variance(self, y: torch.Tensor) -> torch.Tensor:  # (..., N, d) -> (..., N, 1) or ()
        raise NotImplementedError

    def pair_covariance(self, x: torch.Tensor) -> torch.Tensor:
        """k(x_i, x_j) I_d, ``(..., N, d) -> (..., N, N, d, d)``."""
        eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return self.kernel(x)[..., None, None] * eye

    def one_point(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        """An independent Gaussian copy at each token: sqrt(k(y_i, y_i) dt) z_i, ``(..., N, d)``."""
        var = torch.as_tensor(self.variance(y), dtype=y.dtype, device=y.device)  # () or (..., N, 1)
        return source.randn(tuple(y.shape[-2:]), y.dtype) * (var * dt).sqrt()


def pair_covariance(field: object, x: torch.Tensor) -> torch.Tensor:
    """C_ij(X) per unit time, ``(..., N, d) -> (..., N, N, d, d)`` (BEYOND section 0). Raises ConfigError for a
    field without ``pair_covariance``."""
    require(field, PairCovariance)
    assert isinstance(field, PairCovariance)
    return field.pair_covariance(x)


def tangential_variance(field: object, x: torch.Tensor) -> torch.Tensor:
    """tr(P_{x_i} C_ii) / (d - 1) ``(..., N, 1)`` from a field's own ``variance`` or its pair covariance."""
    if isinstance(field, Variance):
        return torch.as_tensor(field.variance(x), dtype=x.dtype, device=x.device)
    c = torch.diagonal(pair_covariance(field, x), dim1=-4, dim2=-3).movedim(-1, -3)  # (..., N, d, d)
    u = project(x)
    trace = c.diagonal(dim1=-2, dim2=-1).sum(-1) - torch.einsum("...a,...ab,...b->...", u, c, u)  # (..., N)
    return (trace / (x.shape[-1] - 1)).unsqueeze(-1)
