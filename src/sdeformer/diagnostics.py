"""Observables of token states, as pure functions (THEORY section 5). Inputs ``(..., N, d)``."""

from __future__ import annotations

import math

import torch

from .sphere import project


def cosine_matrix(x: torch.Tensor) -> torch.Tensor:
    """Pairwise cosine similarities ``(..., N, N)`` of the (normalised) tokens."""
    u = project(x)
    return u @ u.transpose(-1, -2)


def interaction_energy(x: torch.Tensor, beta: float = 1.0, *, normalize: bool = True) -> torch.Tensor:
    """E_beta(X) = 1/(2 N^2) sum_{i,j} (e^beta - e^{beta <X_i, X_j>}), ``(..., N, d) -> (...)``.

    Zero exactly when all tokens coincide. Tokens are normalised first unless ``normalize=False``.
    """
    g = cosine_matrix(x) if normalize else x @ x.transpose(-1, -2)  # (..., N, N)
    n = x.shape[-2]
    return (math.exp(beta) - torch.exp(beta * g)).sum((-1, -2)) / (2 * n * n)


def _off_diagonal(c: torch.Tensor) -> torch.Tensor:
    n = c.shape[-1]
    iu = torch.triu_indices(n, n, offset=1, device=c.device)
    return c[..., iu[0], iu[1]]  # (..., N (N-1) / 2)


def pairwise_cosines(x: torch.Tensor) -> torch.Tensor:
    """Cosines of all distinct pairs i < j, ``(..., N (N-1) / 2)``."""
    return _off_diagonal(cosine_matrix(x))


def mean_cosine(x: torch.Tensor) -> torch.Tensor:
    """Mean cosine over distinct pairs, ``(...)`` (needs N >= 2)."""
    return pairwise_cosines(x).mean(-1)


def mean_abs_cosine(x: torch.Tensor) -> torch.Tensor:
    """Mean |cosine| over distinct pairs, ``(...)``: near 1 for one cluster and for two antipodal ones."""
    return pairwise_cosines(x).abs().mean(-1)


def cluster_count(x: torch.Tensor, threshold: float = 0.999) -> torch.Tensor:
    """Number of clusters: connected components of the graph 'cos(x_i, x_j) > threshold'. ``(...)`` ints."""
    adj = cosine_matrix(x) > threshold  # (..., N, N), reflexive
    reach = adj
    while True:  # transitive closure by boolean squaring: at most log2(N) rounds
        nxt = (reach.to(torch.float32) @ reach.to(torch.float32)) > 0
        if torch.equal(nxt, reach):
            break
        reach = nxt
    # a component's representative is its smallest index: count tokens that reach no smaller index
    n = x.shape[-2]
    lower = torch.tril(torch.ones(n, n, dtype=torch.bool, device=x.device), diagonal=-1)
    return (~(reach & lower).any(-1)).sum(-1)
