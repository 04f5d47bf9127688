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
    ~k ulp; S^2: the real orthonormal Y_lm, l = 0..L, ``_spherical``). A transposed view of ``feature_rows``."""
    return feature_rows(u, big).T


def feature_rows(u: torch.Tensor, big: int) -> torch.Tensor:
    """phi(u) as rows ``(F, n)``: on S^2 contiguous (tokens last, ``_spherical``), on S^1 a view of ``(n, F)``
    (the powers' cumulative product runs along the features)."""
    if u.shape[-1] == 3:
        return _spherical(u, big)
    out = torch.empty(u.shape[0], 2 * big + 1, dtype=torch.float64, device=u.device)
    out[:, 0] = 1
    powers = torch.complex(u[:, 0:1], u[:, 1:2]).expand(-1, big).cumprod(-1)  # (n, K)
    out[:, 1:].view(u.shape[0], big, 2).copy_(torch.view_as_real(powers))
    return out.T


def feature_sums(u: torch.Tensor, big: int) -> torch.Tensor:
    """sum_j phi(u_j) ``(F,)`` of unit tokens ``(n, d)`` float64 up to degree ``big``."""
    return feature_rows(u, big).sum(1)


@functools.cache
def _recurrence(big: int, device: torch.device) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """a_l, b_l ``(2 l - 3, 1)`` of ``_spherical``'s recurrence for the rows of m = 0..l - 2 of degree l (m = 0
    once, then each m twice: Re, Im): a_lm = sqrt((4 l^2 - 1) / (l^2 - m^2)), b_lm = sqrt(((l - 1)^2 - m^2) /
    (4 (l - 1)^2 - 1)), on ``device``."""
    a, b = [], []
    for ell in range(big + 1):
        m = torch.arange(max(ell - 1, 0), dtype=torch.float64).repeat_interleave(2)[1:, None]  # 0, 1, 1, 2, 2, ..
        l2, k2 = float(ell * ell), float((ell - 1) ** 2)
        a.append(((4 * l2 - 1) / (l2 - m * m)).sqrt().to(device))
        b.append(((k2 - m * m) / max(4 * k2 - 1, 1.0)).sqrt().to(device))
    return a, b


def _spherical(u: torch.Tensor, big: int) -> torch.Tensor:
    """Real orthonormal spherical harmonics Y_lm(u), l <= ``big``, as rows ``(F, n)``, F = (big + 1)^2. Degree l
    fills rows l^2..(l + 1)^2 - 1: Y_l0 = q_l^0, then sqrt(2) Re, Im of q_l^m (x + i y)^m for m = 1..l, where q_l^m
    = P-bar_l^m / sin^m theta (normalised associated Legendre functions) and (x + i y)^m = sin^m theta e^{i m phi}
    (no angles). For fixed m the normalised recurrence q_l^m = a_lm (z q_{l-1}^m - b_lm q_{l-2}^m) is linear and
    (x + i y)^m does not depend on l, so it runs on the rows themselves, all m <= l - 2 in one block; then
    q_l^{l-1} = sqrt(2 l + 1) z q_{l-1}^{l-1} and the sectoral q_l^l (x + i y)^l = sqrt((2 l + 1) / (2 l))
    q_{l-1}^{l-1} (x + i y)^{l-1} (x + i y). q_l^m stays below ~e^{l / 2}, far inside float64."""
    x, y, z = u.T.contiguous()  # (n,) each
    a, b = _recurrence(big, u.device)
    out = torch.empty((big + 1) ** 2, u.shape[0], dtype=torch.float64, device=u.device)
    out[0] = 1 / math.sqrt(4 * math.pi)
    for ell in range(1, big + 1):
        cur, last = out[ell * ell : (ell + 1) ** 2], out[(ell - 1) ** 2 : ell * ell]  # (2 l + 1, n), (2 l - 1, n)
        lo = max(2 * ell - 3, 0)  # the rows of m <= l - 2 end here
        if lo:
            torch.mul(last[:lo], z, out=cur[:lo])
            cur[:lo].addcmul_(out[(ell - 2) ** 2 : (ell - 1) ** 2], b[ell], value=-1).mul_(a[ell])
        torch.mul(last[lo:], z, out=cur[lo : 2 * ell - 1]).mul_(math.sqrt(2 * ell + 1))  # m = l - 1
        re, im = (last[0], None) if ell == 1 else (last[-2], last[-1])  # degree l - 1's sectoral rows
        torch.mul(re, x, out=cur[-2])
        torch.mul(re, y, out=cur[-1])
        if im is not None:
            cur[-2].addcmul_(im, y, value=-1)
            cur[-1].addcmul_(im, x)
        root2 = math.sqrt(2) if ell == 1 else 1.0  # degree 0's row is Y_00, not a sqrt(2) Re, Im pair
        cur[-2:].mul_(math.sqrt((2 * ell + 1) / (2 * ell)) * root2)
    return out


def _expanded(w: torch.Tensor, d: int) -> torch.Tensor:
    """The weights ``(K + 1,)`` of the degrees, repeated for each feature of a degree: ``(F,)``."""
    if d == 2:
        return torch.cat([w[:1], w[1:].repeat_interleave(2)])  # 1, (cos, sin) of 1..K
    return torch.repeat_interleave(w, 2 * torch.arange(len(w)) + 1)


# (one feature matrix up to, else chunks of) token x feature entries, by dimension. S^2 features cost ~10 flops
# an entry: computed once, one matrix serves keys and queries (1.3-1.8x faster at N = 10^4 than recomputing them per
# chunk); S^1 features are a cumulative product, cheaper to recompute in cache-sized chunks than to read back
# (1.6-2.4x at N = 10^5, beta = 4). Measured one thread, AVX512, load 4-5 (docs/scaling.md); simulate's memory
# estimate charges three FEATURE_BUDGETs.
CHUNKING = {2: (1 << 19, 1 << 16), 3: (3 * FEATURE_BUDGET, FEATURE_BUDGET)}


def _chunks(n: int, f: int, d: int) -> range:
    """Chunks of ``n`` tokens of ``f`` features in dimension ``d`` (``CHUNKING``)."""
    whole, part = CHUNKING[d]
    return range(0, n, n if n * f <= whole else max(1, part // f))


def harmonic_energy_sum(x: torch.Tensor, beta: float, tol: float = TOL) -> torch.Tensor:
    """(1 / N^2) sum_{i, j} e^{beta (<u_i, u_j> - 1)} of one run ``(N, d)`` in O(N F): sum_f w_f (sum_j
    phi_f(u_j))^2 / N^2 (the normalized energy, BEYOND section 10; to ``tol`` absolutely)."""
    d = x.shape[-1]
    w = weights(d, float(beta), tol)
    u = x.to(torch.float64)
    u = u / torch.linalg.vector_norm(u, dim=-1, keepdim=True)
    steps = _chunks(len(u), len(_expanded(w, d)), d)
    s = sum(feature_sums(u[a : a + steps.step], len(w) - 1) for a in steps)  # (F,)
    return (_expanded(w, d).to(u.device) * s * s).sum() / len(u) ** 2
