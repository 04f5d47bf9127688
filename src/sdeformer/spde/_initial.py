"""Initial laws mu_0 of the SPDE and i.i.d. samples from them (THEORY section 4: particles i.i.d. from mu_0;
docs/spde.md section 4).

``von_mises_fisher``: the density e^{kappa0 <n, x>} / Z (kappa0 = 0: uniform), whose coefficients are
c_k = F_l(kappa0) conj(B_k(n)) / F_0(kappa0) by Funk-Hecke; ``perturbed``: the uniform law plus eps times one
real harmonic (the linear-stability start). ``sample_vmf`` draws i.i.d. particles of the von Mises-Fisher law
from a run's ``RandomSource`` (uniforms as Phi(z) of its normals): Best and Fisher's rejection sampler on the
circle, the exact inverse CDF of <n, x> on S^2. Batched equals unbatched (each batch element keeps its own
stream; a finished element's extra draws do not change it).
"""

from __future__ import annotations

import math

import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ..core._sphere import project
from ..core._validate import nonneg_float, positive_int
from ._harmonics import Harmonics


def mean_direction(dim: int, dtype=torch.float64, device=None) -> torch.Tensor:
    """The default mean direction n = e_1."""
    n = torch.zeros(dim, dtype=dtype, device=device)
    n[0] = 1.0
    return n


def von_mises_fisher(
    basis: Harmonics, concentration: float, mean: torch.Tensor | None = None, dtype=torch.complex128, device=None
) -> torch.Tensor:
    """The coefficients ``(P,)`` of the von Mises-Fisher density with ``concentration`` >= 0 about ``mean``."""
    kappa0 = nonneg_float("concentration", concentration)
    if kappa0 == 0.0:
        return basis.uniform(dtype=dtype, device=device)
    n = project(mean_direction(basis.dim) if mean is None else mean.to(torch.float64))
    ratio = basis.exp_multipliers(kappa0, scaled=True)
    ratio = basis.per_coefficient(ratio / ratio[0])  # (P,)
    conj_b = basis.table(n[None].cpu())[0].conj()  # (P,)
    return (ratio * conj_b).to(dtype=dtype, device=device)


def perturbed(
    basis: Harmonics, degree: int, order: int | None = None, eps: float = 1e-6, dtype=torch.complex128, device=None
) -> torch.Tensor:
    """Uniform + eps Re(B_k) (k = ``basis.index(degree, order)``): ``(P,)`` coefficients. Raises ConfigError for
    a mode the basis lacks."""
    k = basis.index(degree, order)
    c = basis.uniform(dtype=dtype, device=device)
    c[k] += eps / float(basis.eps[k])
    return c


def _uniforms(source: RandomSource, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Uniforms on (0, 1) as Phi(z) of the source's standard normals, ``(*batch, *shape)``."""
    return torch.special.ndtr(source.randn(shape, dtype)).clamp(1e-300, 1 - 1e-16)


def _von_mises_angles(source: RandomSource, n: int, kappa: float, dtype: torch.dtype) -> torch.Tensor:
    """Angles of von Mises(0, kappa) (Best and Fisher 1979), ``(*batch, n)``."""
    if kappa == 0.0:
        return (2 * _uniforms(source, (n,), dtype) - 1) * math.pi
    tau = 1 + math.sqrt(1 + 4 * kappa * kappa)
    rho = (tau - math.sqrt(2 * tau)) / (2 * kappa)
    r = (1 + rho * rho) / (2 * rho)
    out = None
    while out is None or bool(torch.isnan(out).any()):
        u = _uniforms(source, (n, 3), dtype)  # (*batch, n, 3)
        z = torch.cos(math.pi * u[..., 0])
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        accept = (c * (2 - c) - u[..., 1] > 0) | (torch.log(c / u[..., 1]) + 1 - c >= 0)
        theta = torch.sign(u[..., 2] - 0.5) * torch.arccos(f.clamp(-1.0, 1.0))
        fresh = torch.where(accept, theta, torch.full_like(theta, math.nan))
        out = fresh if out is None else torch.where(torch.isnan(out), fresh, out)
    return out


def sample_vmf(
    dim: int, n: int, concentration: float, source: RandomSource, mean: torch.Tensor | None = None, dtype=torch.float64
) -> torch.Tensor:
    """``n`` i.i.d. points of the von Mises-Fisher law on S^{d-1} (d = 2, 3), ``(*batch, n, d)``, on the
    source's device. Raises ConfigError for a bad dimension, n or concentration."""
    n, kappa = positive_int("particles", n), nonneg_float("concentration", concentration)
    mu = project((mean_direction(dim) if mean is None else mean).to(dtype))
    if dim == 2:
        theta = _von_mises_angles(source, n, kappa, dtype) + math.atan2(float(mu[1]), float(mu[0]))
        return torch.stack([theta.cos(), theta.sin()], -1)
    if dim != 3:
        raise ConfigError("dim", dim, "particles of the density solver live on the circle (2) or the 2-sphere (3)")
    u = _uniforms(source, (n, 2), dtype)  # (*batch, n, 2)
    if kappa == 0.0:
        w = 2 * u[..., 0] - 1
    else:  # inverse CDF of t = <mu, x>, density ~ e^{kappa t} on [-1, 1]
        w = 1 + torch.log(math.exp(-2 * kappa) + u[..., 0] * (-math.expm1(-2 * kappa))) / kappa
    phi = 2 * math.pi * u[..., 1]
    mu = mu.to(u.device)
    other = torch.zeros_like(mu)
    other[int(torch.argmin(mu.abs()))] = 1.0  # a unit vector far from mu
    e1 = project(torch.linalg.cross(mu, other))  # _|_ mu
    e2 = torch.linalg.cross(mu, e1)
    s = torch.sqrt((1 - w * w).clamp(min=0.0))
    x = w[..., None] * mu + s[..., None] * (phi.cos()[..., None] * e1 + phi.sin()[..., None] * e2)
    return x
