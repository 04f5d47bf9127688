"""The kernel e^{beta <u, v>} on S^1 and S^2 as a sum of harmonics (THEORY section 1, d = 2, 3): weights, features
and the all-pairs energy sum in O(N F). ``attention._harmonic`` computes softmax attention from them; the
observables the interaction energy (``_spheresums``).

For unit tokens the attention weights are e^{beta <u, v>}, a zonal kernel with an expansion in harmonics:

- S^1 (d = 2), u = (cos s, sin s), v = (cos t, sin t): e^{beta cos(s - t)} = I_0(beta) + 2 sum_{k >= 1} I_k(beta)
  cos(k (s - t)), and cos(k (s - t)) = cos ks cos kt + sin ks sin kt (modified Bessel functions I_k).
- S^2 (d = 3): e^{beta <u, v>} = sum_l (2 l + 1) i_l(beta) P_l(<u, v>) and the addition theorem P_l(<u, v>) =
  4 pi / (2 l + 1) sum_m Y_lm(u) Y_lm(v) (modified spherical Bessel functions i_l, real orthonormal spherical
  harmonics Y_lm).

Both read e^{beta (<u, v> - 1)} = sum_f w_f phi_f(u) phi_f(v) with F features phi (2 K + 1 on S^1, (L + 1)^2 on
S^2) and weights w scaled by e^{-beta} (no overflow at any beta). Truncation: the degree K (L) is the smallest
whose tail, sum_{k > K} 2 e^{-beta} I_k(beta) on S^1 and sum_{l > L} (2 l + 1) e^{-beta} i_l(beta) on S^2, is at
most ``tol``; since |cos| <= 1 and |P_l| <= 1 every scaled weight e^{beta (<u_i, u_j> - 1)} is then reproduced to
``tol`` absolutely, and so is any mean of them over pairs (the energy, ``harmonic_energy_sum``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator

import torch

from .core._errors import ConfigError

TOL = 1e-16  # default truncation tolerance of the scaled weights
FEATURE_BUDGET = 1 << 21  # token x feature entries per chunk of tokens (16 MiB of float64)
MAX_DEGREE = 4096  # beyond it (beta in the thousands) the expansion is refused


@functools.cache
def weights(d: int, beta: float, tol: float = TOL) -> torch.Tensor:
    """The scaled weights of the degrees 0..K (S^1: e^{-beta} I_0, 2 e^{-beta} I_k; S^2: 4 pi e^{-beta} i_l), K
    the smallest degree whose tail is at most ``tol`` (module docstring). float64 ``(K + 1,)``."""
    from scipy.special import ive

    k = torch.arange(MAX_DEGREE + 2, dtype=torch.float64).numpy()
    if d == 2:
        w = 2 * ive(k, beta)
        w[0] /= 2
        mass = w  # the weight of degree k bounds its term: |cos| <= 1
    else:
        w = 4 * math.pi * math.sqrt(math.pi / (2 * beta)) * ive(k + 0.5, beta)  # 4 pi e^{-beta} i_l(beta)
        mass = (2 * k + 1) * w / (4 * math.pi)  # (2 l + 1) e^{-beta} i_l bounds degree l's term: |P_l| <= 1
    tails = mass[::-1].cumsum()[::-1]  # tails[k] = sum_{l >= k}
    fits = (tails[1:] <= tol).nonzero()[0]
    if not len(fits):
        raise ConfigError("beta", beta, f"harmonic attention up to degree {MAX_DEGREE}: beta too large, use exact")
    return torch.from_numpy(w[: int(fits[0]) + 1].copy())


def degree(d: int, beta: float, tol: float = TOL) -> int:
    """K (S^1) or L (S^2) for ``beta`` and ``tol``."""
    return len(weights(d, beta, tol)) - 1


def features(u: torch.Tensor, big: int) -> torch.Tensor:
    """phi(u) ``(n, F)`` of unit tokens ``(n, d)`` float64 up to degree ``big``, ordered by degree (S^1: 1, then
    cos ks, sin ks = Re, Im (x + i y)^k for k = 1..K, the powers by products: no trigonometric function, rounding
    ~k ulp; S^2: the real orthonormal Y_lm, l = 0..L)."""
    if u.shape[-1] == 3:
        return torch.cat(list(_spherical(u, big))).T
    out = torch.empty(u.shape[0], 2 * big + 1, dtype=torch.float64)
    out[:, 0] = 1
    powers = torch.complex(u[:, 0:1], u[:, 1:2]).expand(-1, big).cumprod(-1)  # (n, K)
    out[:, 1:].view(u.shape[0], big, 2).copy_(torch.view_as_real(powers))
    return out


def feature_sums(u: torch.Tensor, big: int) -> torch.Tensor:
    """sum_j phi(u_j) ``(F,)`` of unit tokens ``(n, d)`` float64 up to degree ``big`` (on S^2 degree by degree,
    without the (n, F) features)."""
    if u.shape[-1] == 3:
        return torch.cat([rows.sum(1) for rows in _spherical(u, big)])
    return features(u, big).sum(0)


def _spherical(u: torch.Tensor, big: int) -> Iterator[torch.Tensor]:
    """Real orthonormal spherical harmonics Y_lm(u), l <= ``big``, as rows ``(k, n)`` (tokens last, so each step
    below works on whole rows), (big + 1)^2 rows in all in degree order:
    q_l^m = P-bar_l^m / sin^m theta by the normalised recurrences in l (all m at once), times sqrt(2) Re / Im of
    sin^m theta e^{i m phi} = (x + i y)^m (no angles; q_l^m stays below ~e^{l / 2}, far inside float64)."""
    n, z = u.shape[0], u[:, 2].contiguous()  # (n,)
    ms = torch.arange(big + 1, dtype=torch.float64)
    sectoral = (((2 * ms[1:] + 1) / (2 * ms[1:])).sqrt().cumprod(0) / math.sqrt(4 * math.pi)).tolist()
    sectoral = [1 / math.sqrt(4 * math.pi), *sectoral]  # q_m^m
    power = torch.complex(u[:, 0], u[:, 1]).expand(big, n).cumprod(0)  # (x + i y)^m, m = 1..big: (big, n)
    rot = math.sqrt(2) * torch.cat([power.real, power.imag])  # (2 big, n)
    prev = cur = torch.zeros(big + 1, n, dtype=torch.float64)
    for ell in range(big + 1):
        new = torch.empty_like(cur)
        new[ell] = sectoral[ell]
        if ell >= 1:
            torch.mul(z, cur[ell - 1], out=new[ell - 1]).mul_(math.sqrt(2 * ell + 1))
        if ell >= 2:
            m2, l2 = ms[: ell - 1, None] ** 2, float(ell * ell)
            a = ((4 * l2 - 1) / (l2 - m2)).sqrt()
            b = (((ell - 1) ** 2 - m2) / (4 * (ell - 1) ** 2 - 1)).sqrt()
            new[: ell - 1] = a * (z * cur[: ell - 1] - b * prev[: ell - 1])
        prev, cur = cur, new
        yield from (new[:1], new[1 : ell + 1] * rot[:ell], new[1 : ell + 1] * rot[big : big + ell])


def _expanded(w: torch.Tensor, d: int) -> torch.Tensor:
    """The weights ``(K + 1,)`` of the degrees, repeated for each feature of a degree: ``(F,)``."""
    if d == 2:
        return torch.cat([w[:1], w[1:].repeat_interleave(2)])  # 1, (cos, sin) of 1..K
    return torch.repeat_interleave(w, 2 * torch.arange(len(w)) + 1)


def _chunks(n: int, f: int) -> range:
    return range(0, n, max(1, FEATURE_BUDGET // f))


def harmonic_energy_sum(x: torch.Tensor, beta: float, tol: float = TOL) -> torch.Tensor:
    """(1 / N^2) sum_{i, j} e^{beta (<u_i, u_j> - 1)} of one run ``(N, d)`` in O(N F): sum_f w_f (sum_j
    phi_f(u_j))^2 / N^2 (the normalized energy, BEYOND section 10; to ``tol`` absolutely)."""
    d = x.shape[-1]
    w = weights(d, float(beta), tol)
    u = x.to(torch.float64)
    u = u / torch.linalg.vector_norm(u, dim=-1, keepdim=True)
    steps = _chunks(len(u), len(_expanded(w, d)))
    s = sum(feature_sums(u[a : a + steps.step], len(w) - 1) for a in steps)  # (F,)
    return (_expanded(w, d) * s * s).sum() / len(u) ** 2
