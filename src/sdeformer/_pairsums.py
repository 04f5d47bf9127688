"""Sums over all pairs of tokens without the N x N cosine matrix (THEORY section 5 observables at large N).

The observables of ``sdeformer.observables`` read the cosines c_ij = <u_i, u_j> of the unit tokens u. Here they
are made ``BLOCK_ENTRIES`` at a time, as row blocks ``(..., B, N)``: memory O(N B), time O(N^2 d), the same
products (row i of a block is row i of the full matrix). The mean cosine needs no pairs at all:
sum_{i != j} c_ij = |sum_i u_i|^2 - sum_i |u_i|^2, O(N d). Clusters (connected components of 'c_ij >
threshold') by breadth-first search: each token enters a frontier once, so the products over all frontiers are
one N x N pass in row blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import torch

BLOCK_ENTRIES = 1 << 17  # cosines per row block over all batch dimensions: 1 MiB of float64, kept in cache
# through the elementwise passes (32 MiB blocks were 2-4x slower at N = 8,192, d = 3: issue 42 note)


def _rows(u: torch.Tensor) -> int:
    """Rows per block for tokens ``(..., N, d)``."""
    return max(1, BLOCK_ENTRIES // max(1, u[..., 0, 0].numel() * u.shape[-2]))


def row_blocks(u: torch.Tensor, *, upper: bool = False) -> Iterator[tuple[int, torch.Tensor]]:
    """(first row s, cosines ``(..., B, N)`` of rows s..s+B) of tokens ``u`` ``(..., N, d)``, B = ``_rows(u)``;
    with ``upper`` only the columns from s on, ``(..., B, N - s)``."""
    ut = u.transpose(-1, -2)  # (..., d, N)
    step = _rows(u)
    for s in range(0, u.shape[-2], step):
        yield s, u[..., s : s + step, :] @ (ut[..., s:] if upper else ut)


def pair_sum(u: torch.Tensor, f: Callable[[torch.Tensor], torch.Tensor], *, diagonal: bool = True) -> torch.Tensor:
    """sum_{i, j} f(c_ij) in float64, ``(...)``; without ``diagonal`` the terms i = j are left out. ``f`` maps a
    block of cosines to values of its shape (it may change the block in place). c is symmetric: the terms
    j >= i are made, those with j past the block twice (half the products of all pairs)."""
    total = torch.zeros(u.shape[:-2], dtype=torch.float64, device=u.device)
    for _, c in row_blocks(u, upper=True):
        total += block_sum(c, f, diagonal=diagonal)
    return total


def block_sum(c: torch.Tensor, f: Callable[[torch.Tensor], torch.Tensor], *, diagonal: bool = True) -> torch.Tensor:
    """One upper row block's share of ``pair_sum``: the block ``c`` ``(..., B, N - s)`` from ``row_blocks(u,
    upper=True)``, float64 ``(...)``. Its work is fixed per cosine (whatever the tokens): the row blocks'
    throughput is measured by timing a sample of blocks (``benchmarks/observables.py --crossover``)."""
    rows = c.shape[-2]
    total = torch.zeros(c.shape[:-2], dtype=torch.float64, device=c.device)
    if not diagonal:
        total -= f(c[..., :rows].diagonal(dim1=-2, dim2=-1).clone()).sum(-1, dtype=torch.float64)
    fc = f(c)  # (..., B, N - s): the square block [s, s + B) first, both triangles
    return total + 2 * fc.sum((-1, -2), dtype=torch.float64) - fc[..., :rows].sum((-1, -2), dtype=torch.float64)


def mean_offdiagonal(u: torch.Tensor) -> torch.Tensor:
    """The mean of c_ij over i != j, ``(...)`` float64, in O(N d): (|sum_i u_i|^2 - sum_i |u_i|^2) / (N (N - 1))
    (nan for N = 1)."""
    w = u.to(torch.float64)
    n = u.shape[-2]
    s = w.sum(-2)  # (..., d)
    return ((s * s).sum(-1) - (w * w).sum((-1, -2))) / (n * (n - 1))


def components(u: torch.Tensor, threshold: float) -> torch.Tensor:
    """Connected components of the graph 'c_ij > threshold' of tokens ``(..., N, d)``: ``(...)`` int64."""
    flat = u.reshape(-1, *u.shape[-2:])  # (G, N, d)
    counts = [_components_one(one, threshold) for one in flat]
    return torch.tensor(counts, dtype=torch.int64).reshape(u.shape[:-2])


def _components_one(u: torch.Tensor, threshold: float) -> int:
    """Components of one state ``(N, d)``: breadth-first search, frontiers in row blocks."""
    n, step = u.shape[0], _rows(u)
    ut = u.T  # (d, N)
    visited = np.zeros(n, dtype=bool)
    count, seed = 0, 0
    while True:
        free = np.flatnonzero(~visited[seed:])
        if not len(free):
            return count
        seed += int(free[0])
        count += 1
        visited[seed] = True
        frontier = torch.tensor([seed], device=u.device)
        while len(frontier):
            reached = torch.zeros(n, dtype=torch.bool, device=u.device)
            for rows in frontier.split(step):
                reached |= ((u[rows] @ ut) > threshold).any(0)  # (N,)
            new = reached.cpu().numpy() & ~visited
            visited |= new
            frontier = torch.from_numpy(np.flatnonzero(new)).to(u.device)
