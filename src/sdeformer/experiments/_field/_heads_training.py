"""``heads``'s training part: H-head transformers trained with AdamW, their hidden states' spread over independent
initialisations against H (Gibson, Reisinger, arXiv 2605.11059; docs/field.md, "Many heads").

The network: attention only, hidden states in R^d, layer l of L with dt = T / L,
    x_i <- x_i + dt (1/H) sum_h sum_k softmax_k(<A_lh x_i, x_k>) V_lh x_k,
every head's (V, A) trainable, drawn i.i.d. at initialisation around the mean head (I, beta I):
V = I + sV G, A = beta I + sA G' (G, G' standard Gaussian, sV = d^-1/2, sA = d^-1/2). All heads of all layers are
trained together by AdamW (torch's, rate ``lr``, decoupled weight decay ``decay``) for ``steps`` full-batch steps on
the loss mean |x(L) - R x(0)|^2 over ``contexts`` fixed contexts of N uniform tokens (R a fixed rotation). With the
1/H scaling the trained hidden states have a deterministic H -> infinity limit (the paper's forward-backward
system); the limit itself is not computed here. What is measured is the spread of the trained hidden states over
independent initialisations at the same H: E|x - E x|^2 over seeds is the L^2 deviation from the limit squared up
to the bias |E x - x_inf|^2, which is of higher order (O(1/H^2)) in the mean-field expansion, so its square root
falls like H^-1/2 if the paper's head term holds through training. The seeds train side by side in one tensor
(AdamW's moments are per element, so this equals separate runs).
"""

from __future__ import annotations

import numpy as np


def spread(dim: int, tokens: int, beta: float, layers: int, horizon: float, heads: int, seeds: int, steps: int,
           lr: float, decay: float, contexts: int, seed: int) -> tuple[np.ndarray, float]:  # fmt: skip
    """``(seeds,)`` per seed |x_s(L) - mean_s x(L)|^2 (token and context mean, times S/(S-1): their mean is the
    unbiased spread) after ``steps`` AdamW steps, and the final loss averaged over seeds (module docstring)."""
    import torch

    import sdeformer as sdf
    from sdeformer.core._threads import torch_threads

    gen = torch.Generator().manual_seed(seed)
    x0 = sdf.uniform_sphere(tokens, dim, batch=(contexts,), seed=10_000 + contexts, dtype=torch.float64)  # (M, N, d)
    rot = torch.linalg.qr(torch.randn(dim, dim, generator=torch.Generator().manual_seed(1), dtype=torch.float64))[0]
    target = x0 @ rot.T  # (M, N, d)
    eye, shape = torch.eye(dim, dtype=torch.float64), (seeds, layers, heads, dim, dim)
    scale = dim**-0.5
    v = (eye + scale * torch.randn(shape, generator=gen, dtype=torch.float64)).requires_grad_()
    a = (beta * eye + scale * torch.randn(shape, generator=gen, dtype=torch.float64)).requires_grad_()
    opt = torch.optim.AdamW([v, a], lr=lr, weight_decay=decay)
    dt = horizon / layers

    def forward() -> torch.Tensor:
        x = x0.expand(seeds, -1, -1, -1)  # (S, M, N, d)
        for layer in range(layers):
            xh = x.unsqueeze(2)  # (S, M, 1, N, d)
            q = xh @ a[:, layer].unsqueeze(1).transpose(-1, -2)  # (S, M, H, N, d): A x_i
            w = torch.softmax(q @ xh.transpose(-1, -2), dim=-1)  # (S, M, H, N, N)
            vals = xh @ v[:, layer].unsqueeze(1).transpose(-1, -2)  # (S, M, H, N, d): V x_k
            x = x + dt * (w @ vals).mean(2)
        return x

    with torch_threads(1):  # small tensors: one thread (docs/field.md)
        for _ in range(steps):
            opt.zero_grad()
            loss = ((forward() - target) ** 2).sum(-1).mean((-1, -2)).sum()  # per seed, summed over seeds
            loss.backward()
            opt.step()
        with torch.no_grad():
            x = forward()
            final = float(((x - target) ** 2).sum(-1).mean().item())
    dev = ((x - x.mean(0)) ** 2).sum(-1).mean((-1, -2)) * seeds / (seeds - 1)  # (S,)
    return dev.numpy(), final
