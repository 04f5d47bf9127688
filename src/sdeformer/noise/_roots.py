"""Numerical helpers of the Gaussian fields (THEORY sections 2-3): the arc-cosine kernel in any dtype and the
roots R with R R^T = K of a covariance K ``(..., N, N)``: the symmetric root and the exact rank-revealing root."""

from __future__ import annotations

import math

import torch

from ..core._kernel import KernelTheory

EIGH_RTOL = 1.0  # eigenvalues below EIGH_RTOL * N * eps_machine * lambda_max count as 0 (numerical rank)


def arccos_kappa(t: torch.Tensor, th: KernelTheory) -> torch.Tensor:
    """``th.kappa(t)`` for act(z) = max(z, a z) in the dtype of ``t``, with the same clamping: with
    v = 1/d + sU^2 and c = (t/d + sU^2) / v = cos(theta), kappa = v [a c + (1-a)^2 / (2 pi) (sin(theta) +
    (pi - theta) c)] + sW^2 (the arc-cosine kernel, THEORY section 2)."""
    a, var = th.activation.leak or 0.0, 1.0 / th.dim + th.su**2
    c = (t * (1.0 / (th.dim * var)) + th.su**2 / var).clamp_((th.su**2 - 1.0 / th.dim) / var, 1.0)  # t clamped
    relu = torch.sqrt(1.0 - c * c).add_(torch.arccos(c).sub_(math.pi).mul_(c).neg_())  # sin + (pi - theta) c
    out = relu.mul_((1 - a) ** 2 * var / (2 * math.pi)).add_(th.sw**2)
    return out.add_(c, alpha=a * var) if a else out


def psd_sqrt(a: torch.Tensor) -> torch.Tensor:
    """Symmetric square root of symmetric PSD matrices ``(..., n, n)`` (eigh; negative eigenvalues clamped)."""
    evals, evecs = torch.linalg.eigh(a)  # (..., n), (..., n, n)
    return (evecs * evals.clamp(min=0).sqrt().unsqueeze(-2)) @ evecs.transpose(-1, -2)


def eigh_root(k: torch.Tensor) -> torch.Tensor:
    """Exact rank-revealing root of symmetric PSD ``k`` ``(..., n, n)``, no jitter: ``R = K V_+ Lambda_+^{-1/2}``
    over the eigenpairs above the numerical rank threshold (EIGH_RTOL), so R R^T = K V_+ Lambda_+^{-1} V_+^T K is
    K with its negative and near-zero eigenvalues clipped to 0. Row i of R is a function of row i of K only
    (through the shared V, Lambda): tokens with identical rows of K (coinciding tokens) get bit-identical rows,
    hence bit-identical increments R z."""
    evals, evecs = torch.linalg.eigh(k)  # (..., n), (..., n, n); ascending
    tol = evals[..., -1:].clamp(min=0) * (EIGH_RTOL * k.shape[-1] * torch.finfo(k.dtype).eps)  # (..., 1)
    keep = evals > tol  # (..., n)
    inv_sqrt = torch.where(keep, evals.clamp(min=torch.finfo(k.dtype).tiny).rsqrt(), torch.zeros_like(evals))
    return k @ (evecs * inv_sqrt.unsqueeze(-2))  # (..., n, n)


def first_copies(y: torch.Tensor) -> torch.Tensor | None:
    """For tokens ``y`` ``(..., N, d)``, the index ``(..., N)`` of the first token of the same run equal to each
    (bit for bit), or None when no two tokens of a run coincide. A product ``R z`` computed by a matrix kernel
    may round identical rows of R differently; gathering its rows at these indices makes coinciding tokens'
    values bit-identical, as they are exactly. The full row comparison runs only when two tokens of a run share
    their first coordinate (a sort of ``(..., N)`` numbers: the common case costs next to nothing)."""
    first_coordinate = y[..., 0].sort(-1).values  # (..., N)
    if not bool((first_coordinate[..., 1:] == first_coordinate[..., :-1]).any()):
        return None
    n = y.shape[-2]
    flat = y.reshape(-1, n, y.shape[-1])  # (B, N, d)
    runs = torch.arange(flat.shape[0], device=y.device).repeat_interleave(n)  # (B N,)
    rows = torch.cat([flat.reshape(-1, flat.shape[-1]), runs.unsqueeze(-1).to(y.dtype)], dim=-1)  # (B N, d + 1)
    _, inverse = torch.unique(rows, dim=0, return_inverse=True)  # (B N,)
    first = torch.full((int(inverse.max()) + 1,), rows.shape[0], dtype=torch.long, device=y.device)
    first.scatter_reduce_(0, inverse, torch.arange(rows.shape[0], device=y.device), "amin")
    return (first[inverse] - runs * n).reshape(y.shape[:-1])
