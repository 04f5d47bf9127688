"""The limit SDE of every normalization scheme with common noise, radius included (BEYOND section 6).

Write x_i = r_i theta_i, A_i the attention drift read at the directions, C_ij the field's covariance per unit
time, Ahat = A / |A| and Chat_ij = E[LN(G_i) LN(G_j)^T] the covariance of the normalized field. Every scheme's
direction follows the generic limit of BEYOND section 0,

    d theta_i = P_i (Dt_i dt + dMt_i) - (1/2) tr(P_i Ct_ii) theta_i dt - P_i Ct_ii theta_i dt,

with an effective drift Dt and covariance Ct (per unit time):

    post  Dt = A,               Ct = C
    pre   Dt = A / r,           Ct_ij = C_ij / (r_i r_j)
    peri  Dt = Ahat / r,        Ct_ij = Chat_ij / (r_i r_j)
    ngpt  Dt = alpha Ahat,      Ct = alpha^2 Chat
    sqrt  Dt = A / sqrt(1 + t), Ct = C / (1 + t)
    mix   post before the switch, pre after

and the radius of pre and peri (``(b, S) = (A, C)`` and ``(Ahat, Chat)``) follows

    dr_i = (<theta_i, b_i> + tr(P_i S_ii) / (2 r_i)) dt + <theta_i, dM_i>,   d<r_i> = theta_i^T S_ii theta_i dt;

the other schemes keep r = 1. For a Gaussian field with C_ij = K_ij I, Chat_ij = c_d(rho_ij) / d I with
rho_ij = K_ij / sqrt(K_ii K_jj) and ``c_d`` the mean cosine of two rho-correlated Gaussian vectors of R^d
(``normalized_kernel``). Tensors: one state, ``x`` ``(N, d)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy import special

from ...core._errors import ConfigError
from ...core._sphere import project
from .schemes import NGPT, Normalization, PeriLN, PostLN, PreLN, SqrtScaling, unit


@dataclass(frozen=True)
class Limit:
    """One state's limit coefficients: directions ``theta`` (N, d), radii ``r`` (N,), the direction's drift
    ``drift`` (N, d) and covariance ``cov`` (N, N, d, d) per unit time, the radius' drift and variation (N,)."""

    theta: torch.Tensor
    r: torch.Tensor
    drift: torch.Tensor
    cov: torch.Tensor
    radius_drift: torch.Tensor
    radius_variation: torch.Tensor


def mean_cosine(rho: np.ndarray, d: int) -> np.ndarray:
    """E<g/|g|, g'/|g'|> for standard Gaussian g, g' in R^d with coordinate correlation rho:
    rho (2/d) (Gamma((d+1)/2) / Gamma(d/2))^2 2F1(1/2, 1/2; d/2 + 1; rho^2) (1 at rho = 1)."""
    rho = np.clip(rho, -1.0, 1.0)
    scale = (2.0 / d) * math.exp(2.0 * (special.gammaln((d + 1) / 2) - special.gammaln(d / 2)))
    return rho * scale * special.hyp2f1(0.5, 0.5, d / 2 + 1, rho * rho)


def normalized_kernel(kernel: torch.Tensor, d: int) -> torch.Tensor:
    """E<LN(G_i), LN(G_j)> of a Gaussian field with covariance K_ij I_d, ``(..., N, N) -> (..., N, N)``."""
    k = kernel.detach().double().cpu().numpy()
    diag = np.sqrt(np.diagonal(k, axis1=-2, axis2=-1))  # (..., N)
    rho = k / (diag[..., :, None] * diag[..., None, :])  # (..., N, N)
    return torch.as_tensor(mean_cosine(rho, d), dtype=kernel.dtype, device=kernel.device)


def _blocks(x: torch.Tensor, attention: Any, field: Any, normalized: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(A (N, d), C (N, N, d, d)) at the directions of x, the normalized ones (Ahat, Chat) if ``normalized``."""
    theta = project(x)
    n, d = x.shape
    a = attention.drift(theta) if attention is not None else torch.zeros_like(x)  # (N, d)
    if field is None:
        return a, x.new_zeros(n, n, d, d)
    if not normalized:
        return a, field.pair_covariance(theta)
    if not callable(getattr(field, "kernel", None)):
        raise ConfigError("noise", type(field).__name__, "the normalized limit needs a Gaussian field's kernel()")
    eye = torch.eye(d, dtype=x.dtype, device=x.device)
    chat = normalized_kernel(field.kernel(theta), d)[..., None, None] * eye / d  # (N, N, d, d)
    return unit(a), chat


def limit(norm: Normalization, x: torch.Tensor, attention: Any = None, field: Any = None, t: float = 0.0) -> Limit:
    """The limit coefficients of ``norm`` at the state x ``(N, d)`` (the residual stream for the schemes with a
    radius) and time t, for an attention drift and a noise field with ``pair_covariance`` (and ``kernel``, a
    Gaussian field's, for peri and ngpt). Raises ConfigError for a scheme without a derived limit."""
    scheme = norm.phase(t)
    theta, r = project(x), torch.linalg.vector_norm(x, dim=-1)  # (N, d), (N,)
    a, c = _blocks(x, attention, field, isinstance(scheme, (PeriLN, NGPT)))
    zero = torch.zeros_like(r)
    if isinstance(scheme, PostLN):
        return Limit(theta, r, a, c, zero, zero)
    if isinstance(scheme, SqrtScaling):
        return Limit(theta, r, a / math.sqrt(1 + t), c / (1 + t), zero, zero)
    if isinstance(scheme, NGPT):
        return Limit(theta, r, scheme.alpha * a, scheme.alpha**2 * c, zero, zero)
    if isinstance(scheme, (PreLN, PeriLN)):
        cii = torch.diagonal(c, dim1=0, dim2=1).movedim(-1, 0)  # (N, d, d)
        proj = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device) - theta.unsqueeze(-1) * theta.unsqueeze(-2)
        tangential = torch.einsum("nab,nba->n", proj, cii)  # tr(P_i C_ii), (N,)
        rdrift = (theta * a).sum(-1) + tangential / (2 * r)
        rvar = torch.einsum("na,nab,nb->n", theta, cii, theta)
        return Limit(theta, r, a / r[:, None], c / (r[:, None, None, None] * r[None, :, None, None]), rdrift, rvar)
    raise ConfigError("norm", repr(norm), "no limit is derived for this scheme (BEYOND section 6)")
