"""The particles of unnormalized attention with independent noise (Mun, Rosenzweig, arXiv 2606.05140; docs/field.md,
"Independent noise"), many runs at once.

dX_i = P_{X_i} [(1/N) sum_j e^{beta <X_i, X_j>} X_j] dt + sqrt(2/K) P_{X_i} dB_i, each token with its own Brownian
motion, stepped by projected Euler-Maruyama in float64; B runs side by side, each with its own beta, K and step
(the same number of steps), all started with every token at e_1. The order parameter of a run is |mean X|
averaged over the last ``tail`` fraction of its steps.
"""

from __future__ import annotations

import math

import numpy as np


def order_parameters(dim: int, betas, couplings, tokens: int, steps: int, dts, seed: int, tail: float = 0.5):
    """``(B,)`` the time-averaged |mean X| of B runs (module docstring): ``betas``, ``couplings`` (K) and ``dts``
    are length-B sequences; the noise comes from one generator seeded by ``seed``."""
    import torch

    from sdeformer.core._threads import torch_threads

    b = torch.as_tensor(np.asarray(betas, float))[:, None, None]  # (B, 1, 1)
    dt = torch.as_tensor(np.asarray(dts, float))[:, None, None]  # (B, 1, 1)
    noise = torch.sqrt(2.0 * dt / torch.as_tensor(np.asarray(couplings, float))[:, None, None])  # (B, 1, 1)
    gen = torch.Generator().manual_seed(int(seed))
    x = torch.zeros(len(b), tokens, dim, dtype=torch.float64)
    x[..., 0] = 1.0  # (B, N, d)
    first, total = steps - max(1, int(math.ceil(tail * steps))), torch.zeros(len(b), dtype=torch.float64)
    with torch_threads(1):  # N x N per run, B runs: one thread is faster on shared cores (docs/field.md)
        for k in range(steps):
            drift = torch.exp(b * (x @ x.transpose(-1, -2))) @ x / tokens  # (B, N, d)
            step = dt * drift + noise * torch.randn(x.shape, generator=gen, dtype=torch.float64)
            step -= (step * x).sum(-1, keepdim=True) * x  # P_X
            x = x + step
            x = x / x.norm(dim=-1, keepdim=True)
            if k >= first:
                total += x.mean(-2).norm(dim=-1)
    return (total / (steps - first)).numpy()
