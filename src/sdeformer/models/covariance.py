"""Noise covariances per unit time, C_ij(X) = E[xi_i xi_j^T] / dt (BEYOND section 0), for every noise field.

``pair_covariance(field, x)`` ``(..., N, d) -> (..., N, N, d, d)`` and ``tangential_variance(field, x)``
``(..., N, 1)`` = tr(P_{x_i} C_ii) / (d - 1), the k(x, x) whose ``-(d-1)/2 k x`` is the Ito correction of
``sde.LimitSDE`` (BEYOND 0: ``-(1/2) tr(P C_ii) x``). A field defines ``pair_covariance`` itself (the models of
this package) or is one of the library's fields, whose covariance is the kernel of THEORY section 2:
``kappa(<x_i, x_j>) I`` (MLPNoise at any width, GaussianField), ``k_M(x_i, x_j) I`` (RandomFeatureField).
"""

from __future__ import annotations

from functools import lru_cache

import torch

from ..errors import ConfigError
from ..fields import GaussianField, RandomFeatureField
from ..kernel import KernelTheory, kernel_theory
from ..mlp_noise import MLPNoise
from ..sphere import project


@lru_cache(maxsize=32)
def _mlp_theory(activation, d: int, su: float, sw: float) -> KernelTheory:
    return kernel_theory(activation, d, su=su, sw=sw)


def scalar_kernel(field, x: torch.Tensor) -> torch.Tensor:
    """k(x_i, x_j) ``(..., N, N)`` of a field with isotropic covariance k I (THEORY sections 2-3)."""
    if isinstance(field, GaussianField):
        return field.covariance(x)
    if isinstance(field, RandomFeatureField):
        return field.covariance(x, x)
    if isinstance(field, MLPNoise):
        if torch.as_tensor(field.su).ndim or torch.as_tensor(field.sw).ndim:
            raise ConfigError("su", field.su, "a scalar bias std is needed for the MLP kernel")
        th = _mlp_theory(field.activation, x.shape[-1], float(field.su), float(field.sw))
        u = project(x)
        return th.kappa(u @ u.transpose(-1, -2)).to(x)  # (..., N, N)
    raise ConfigError("field", type(field).__name__, "needs a pair_covariance method or a kernel")


def pair_covariance(field, x: torch.Tensor) -> torch.Tensor:
    """C_ij(X) per unit time, ``(..., N, d) -> (..., N, N, d, d)`` (BEYOND section 0)."""
    own = getattr(field, "pair_covariance", None)
    if own is not None:
        return own(x)
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    return scalar_kernel(field, x)[..., None, None] * eye  # (..., N, N, d, d)


def tangential_variance(field, x: torch.Tensor) -> torch.Tensor:
    """tr(P_{x_i} C_ii) / (d - 1) ``(..., N, 1)`` from a field's own ``variance`` or its pair covariance."""
    own = getattr(field, "variance", None)
    if own is not None:
        return torch.as_tensor(own(x), dtype=x.dtype, device=x.device)
    if isinstance(field, MLPNoise):  # isotropic: tr(P k I) / (d - 1) = k(x, x)
        return torch.diagonal(scalar_kernel(field, x), dim1=-2, dim2=-1).unsqueeze(-1)
    c = torch.diagonal(pair_covariance(field, x), dim1=-4, dim2=-3).movedim(-1, -3)  # (..., N, d, d)
    u = project(x)
    trace = c.diagonal(dim1=-2, dim2=-1).sum(-1) - torch.einsum("...a,...ab,...b->...", u, c, u)  # (..., N)
    return (trace / (x.shape[-1] - 1)).unsqueeze(-1)
