"""The linear theory of the SPDE about the uniform law (docs/spde.md sections 7-8; THEORY sections 1, 4).

Noise-free linear stability: a perturbation eps B_lm of the uniform law grows at the rate

    softmax: lambda_l = s l (l + d - 2) F_l(beta) / (beta F_0(beta)),   USA: s l (l + d - 2) F_l(beta) / (beta |S|)

(F_l = 2 pi I_l on the circle, 4 pi i_l on S^2; |S| the area). With the common noise (variance k), the mean of
every mode decays by the Laplacian (k/2) Laplace_S: rate lambda_l - k l (l + d - 2) / 2. The second moments
E_l = E sum_m |c_lm|^2 obey a closed linear system: E_l = (n_l / |S|) E[G_l(<X, Y>)] for the two-point motion
(X, Y) driven by one noise (G_l: cos(l phi) on the circle, P_l on S^2), whose generator acts on functions of
u = <X, Y> (exact for the noise alone; to first order with attention, which adds 2 lambda_l).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numpy.polynomial import legendre as npleg

from ._fields import SpectralField
from ._harmonics import Harmonics, harmonics

BAND = 48  # extra degrees kept in the second-moment system beyond the output's


def linear_rates(
    dim: int, degree: int, beta: float, scale: float = 1.0, kind: str = "softmax", noise: float = 0.0
) -> torch.Tensor:
    """The growth rate of each degree l = 0..degree about the uniform law, ``(degree + 1,)`` float64;
    ``noise``: the field's variance k (adds -k l (l + d - 2) / 2, the rate of the mean)."""
    basis = harmonics(dim, degree)
    f = basis.exp_multipliers(beta, scaled=kind == "softmax")
    lap = basis.laplace_by_degree()
    norm = f[0] if kind == "softmax" else basis.area
    return scale * lap * f / (beta * norm) - noise * lap / 2


def dominant_mode(dim: int, beta: float, kind: str = "softmax", degree: int = 200) -> int:
    """The degree l >= 1 of the largest noise-free rate for attractive attention (s = +1)."""
    return int(torch.argmax(linear_rates(dim, degree, beta, 1.0, kind)[1:])) + 1


def _multiplicity(basis: Harmonics, degree: int) -> np.ndarray:
    ls = np.arange(degree + 1)
    return (2 * ls + 1.0) if basis.dim == 3 else np.where(ls == 0, 1.0, 2.0)


def _generator_circle(field: SpectralField, top: int) -> np.ndarray:
    """A[m, j] with d/dt E cos(m phi) = sum_j A[m, j] E cos(j phi): L g = (k - C(phi)) g''."""
    lam = field.eigen.numpy()
    c = np.concatenate([[lam[0] / (2 * math.pi)], lam[1:] / math.pi])  # C(phi) = sum_n c_n cos(n phi)
    a = np.zeros((top + 1, top + 1))
    for m in range(top + 1):
        a[m, m] += m * m * (c[0] - field.k)
        for n in range(1, len(c)):
            for j in (m + n, abs(m - n)):
                if j <= top:
                    a[m, j] += m * m * c[n] / 2
    return a


def _generator_sphere(field: SpectralField, top: int) -> np.ndarray:
    """A[l, j] with d/dt E P_l(u) = sum_j A[l, j] E P_j(u):
    L g = [(1 + u^2) kappa_M(u) - 2 k u] g' + (1 - u^2)(k - u kappa_M(u)) g''."""
    u, w = npleg.leggauss(top + len(field.eigen) + 8)
    lam = field.eigen.numpy()
    kap = npleg.legval(u, lam * (2 * np.arange(len(lam)) + 1) / (4 * math.pi))  # kappa_M(u)
    k = field.k
    eye = np.eye(top + 1)
    p = np.stack([npleg.legval(u, e) for e in eye])  # (top+1, nodes)
    dp = np.stack([npleg.legval(u, npleg.legder(e)) for e in eye])
    ddp = np.stack([npleg.legval(u, npleg.legder(e, 2)) for e in eye])
    lp = ((1 + u * u) * kap - 2 * k * u) * dp + (1 - u * u) * (k - u * kap) * ddp  # (top+1, nodes)
    return (lp * w) @ p.T * ((2 * np.arange(top + 1) + 1) / 2)[None, :]


def second_moments(
    field: SpectralField, c0: torch.Tensor, times: np.ndarray, attention_rates: torch.Tensor | None = None
) -> np.ndarray:
    """E_l(t) = E sum_m |c_lm(t)|^2, l = 0..L (L: the degree of c0's basis), at ``times`` ``(T,)`` ->
    ``(T, L + 1)``, from the deterministic start c0 ``(P,)``; ``attention_rates``: the noise-free rates
    (``linear_rates``) to add to first order."""
    basis = harmonics(field.basis.dim, _degree(field.basis.dim, c0.shape[-1]))
    top = basis.degree + BAND + 2 * field.modes
    gen = _generator_circle(field, top) if basis.dim == 2 else _generator_sphere(field, top)
    if attention_rates is not None:
        gen[: basis.degree + 1, : basis.degree + 1] += np.diag(2 * attention_rates.numpy()[: basis.degree + 1])
    mult = np.concatenate([_multiplicity(basis, basis.degree), np.zeros(top - basis.degree)])
    p0 = np.zeros(top + 1)
    p0[: basis.degree + 1] = basis.energy(c0.cpu()).numpy() * basis.area / mult[: basis.degree + 1]
    gen_t = torch.from_numpy(gen)
    out = [torch.linalg.matrix_exp(gen_t * float(t)).numpy() @ p0 for t in times]
    return np.stack(out)[:, : basis.degree + 1] * mult[: basis.degree + 1] / basis.area


def _degree(dim: int, size: int) -> int:
    """The degree L of a basis with ``size`` coefficients."""
    return size - 1 if dim == 2 else int(round((math.sqrt(8 * size + 1) - 3) / 2))
