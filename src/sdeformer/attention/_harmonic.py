"""Softmax and USA attention on S^1 and S^2 in O(N F) by harmonic expansion of the kernel (THEORY section 1;
BEYOND section 5; d = 2, 3).

The expansion e^{beta (<u, v> - 1)} = sum_f w_f phi_f(u) phi_f(v), its F features and the truncation degree are in
``sdeformer._harmonics``; every sum over keys is F sums over tokens:

    sum_j e^{beta (<u_i, u_j> - 1)} (1, u_j) = sum_f w_f phi_f(u_i) S_f,   S_f = sum_j phi_f(u_j) (1, u_j),

O(N F d) work, O(F d) memory beyond the tokens, in float64. Each scaled weight in [e^{-2 beta}, 1] is reproduced
to ``tol`` absolutely, the numerator and denominator of token i to N ``tol``, and its output to 2 N ``tol`` / D_i
with D_i = sum_j e^{beta (<u_i, u_j> - 1)} (at most 2 ``tol`` e^{2 beta} if all the other tokens are antipodal to
u_i; 2 ``tol`` sqrt(2 pi beta) for tokens spread evenly). USA's output, e^beta / N times the numerator, is within
e^beta ``tol`` (|x_j| = 1). Rounding adds ~1e-15 per unit of the output (measured: docs/scaling.md).
"""

from __future__ import annotations

import math

import torch

from .._harmonics import FEATURE_BUDGET as FEATURE_BUDGET, TOL, _chunks, _expanded, degree, feature_rows, weights
from ..core._errors import ConfigError

HARMONIC_DIMS = (2, 3)


def harmonic_attention(x: torch.Tensor, beta: float, tol: float = TOL) -> torch.Tensor:
    """sum_j softmax_j(beta <u_i, u_j>) x_j for one run of tokens ``x`` ``(N, d)``, d = 2 or 3, on the unit sphere
    (u = x / |x|; the scores use the directions, the values are the tokens): ``(N, d)`` in x's dtype, computed in
    float64 by the expansion of the module docstring."""
    sums = _kernel_sums(x, beta, tol)  # (N, 1 + d)
    return (sums[:, 1:] / sums[:, :1]).to(x.dtype)


def harmonic_unnormalized(x: torch.Tensor, beta: float, tol: float = TOL) -> torch.Tensor:
    """USA's (1/N) sum_j e^{beta <u_i, u_j>} x_j (BEYOND section 5) from the same sums: e^beta / N times the
    numerator; ``(N, d)`` in x's dtype. ConfigError naming ``beta`` where e^beta would exceed the dtype (as the
    exact path's check of its weights)."""
    bound = math.log(torch.finfo(x.dtype).max / len(x))
    if not beta < bound:
        raise ConfigError("beta", beta, f"e^(beta <x_i, x_j>) exceeds {x.dtype} ({beta:.4g} > {bound:.4g})")
    sums = _kernel_sums(x, beta, tol)  # (N, 1 + d)
    return (sums[:, 1:] * (math.exp(beta) / len(x))).to(x.dtype)


def _kernel_sums(x: torch.Tensor, beta: float, tol: float) -> torch.Tensor:
    """(sum_j k_ij, sum_j k_ij x_j) with k_ij = e^{beta (<u_i, u_j> - 1)} for every token: ``(N, 1 + d)`` float64."""
    d = x.shape[-1]
    w = weights(d, float(beta), tol)
    wf = _expanded(w, d).to(x.device)  # (F,)
    big, f = len(w) - 1, len(wf)
    xd = x.to(torch.float64)
    u = xd / torch.linalg.vector_norm(xd, dim=-1, keepdim=True)  # (N, d)
    vals = torch.cat([torch.ones_like(xd[:, :1]), xd], -1)  # (N, 1 + d): denominator and numerator sums
    sums = torch.zeros(f, d + 1, dtype=torch.float64, device=x.device)
    steps = _chunks(len(u), f, d)
    phi = torch.empty(0, 0, dtype=torch.float64, device=x.device)
    for s in steps:
        phi = feature_rows(u[s : s + steps.step], big)  # (F, chunk)
        sums += phi @ vals[s : s + steps.step]  # (F, 1 + d)
    sums *= wf[:, None]
    if len(steps) == 1:  # one chunk: the queries' features are the keys'
        return phi.T @ sums  # (N, 1 + d)
    return torch.cat([feature_rows(u[s : s + steps.step], big).T @ sums for s in steps])


def check_harmonic(d: int) -> None:
    """ConfigError naming ``attention_method`` unless the harmonic expansion exists for dimension ``d``."""
    if d not in HARMONIC_DIMS:
        raise ConfigError("attention_method", "harmonic", f"needs d = 2 or 3 (S^1, S^2), not d = {d}")


METHODS = ("exact", "harmonic", "auto")
# "auto": harmonic where N >= this x F, F the features (2 K + 1, (L + 1)^2). Measured (benchmarks/harmonic.py,
# interleaved, one thread, float32 exact path, under ATEN_CPU_CAPABILITY default, avx2 and avx512): harmonic is
# faster on all three from N = 1,024 at d = 2 (N / F >= 23 at beta = 4) and at d = 3 from N / F = 7.7 (beta = 4,
# N = 4,096: 1.3x / 1.8x / 4.6x under avx512 / avx2 / default; beta = 1, N = 2,048, N / F = 9.1: 1.6x / 2.0x / 5.3x;
# 0.65x at N / F = 3.9 under avx512; 2026-12-05, load 5.1): the rule keeps a margin of two (docs/scaling.md)
AUTO_FEATURES_PER_TOKEN = {2: 32, 3: 16}


HARMONIC_ATTENTIONS = ("softmax", "usa")  # the attentions whose sums over keys the expansion gives


def check_method(method: object, dim: int, attention: str = "softmax", causal: bool = False) -> str:
    """``method`` when it is one of ``METHODS`` and applies: ``"harmonic"`` needs the paper's softmax attention
    or USA (Q^T K = beta I, no causal mask) in d = 2 or 3; ``"auto"`` applies anywhere (exact where harmonic does
    not). ConfigError naming ``attention_method`` otherwise."""
    if method not in METHODS:
        raise ConfigError("attention_method", method, f"one of {list(METHODS)}")
    if method == "harmonic":
        if attention not in HARMONIC_ATTENTIONS or causal:
            raise ConfigError(
                "attention_method",
                method,
                "harmonic needs the softmax or USA attention with Q^T K = beta I and no causal mask",
            )
        check_harmonic(dim)
    return method


def picks_harmonic(method: str, n: int, d: int, beta: float) -> bool:
    """Whether ``method`` computes a run of ``n`` tokens in dimension ``d`` harmonically: always for
    ``"harmonic"``, for ``"auto"`` where it was measured faster (N >= ``AUTO_FEATURES_PER_TOKEN[d]`` x F)."""
    if method == "harmonic":
        check_harmonic(d)
        return True
    if method != "auto" or d not in HARMONIC_DIMS or not AUTO_FEATURES_PER_TOKEN[d]:
        return False
    big = degree(d, beta)
    f = 2 * big + 1 if d == 2 else (big + 1) ** 2
    return n >= AUTO_FEATURES_PER_TOKEN[d] * f


def harmonic_drift(
    x: torch.Tensor, beta: float | torch.Tensor, method: str, unnormalized: bool = False
) -> torch.Tensor | None:
    """Softmax attention (``unnormalized``: USA's) of tokens ``(..., N, d)`` with one beta per run (a number or a
    tensor broadcastable to the batch shape) by ``harmonic_attention`` (``harmonic_unnormalized``), run by run
    (batched equals unbatched); None where ``method`` keeps the exact sums ("auto" outside its measured region,
    judged on the largest beta)."""
    betas = torch.as_tensor(beta, dtype=torch.float64).expand(x.shape[:-2]).reshape(-1).tolist()
    if not picks_harmonic(method, x.shape[-2], x.shape[-1], max(betas)):
        return None
    one = harmonic_unnormalized if unnormalized else harmonic_attention
    flat = x.reshape(-1, *x.shape[-2:])  # (B, N, d)
    return torch.stack([one(run, b) for run, b in zip(flat, betas)]).reshape(x.shape)
