"""The observables summed in row blocks (cluster count by breadth-first search, mean cosine in O(N d), energies
and mean |cosine| a row block at a time) against the full-matrix formulas they replace (THEORY section 5)."""

from __future__ import annotations

import math

import pytest
import torch

from sdeformer import _pairsums
from sdeformer.observables import (
    cluster_count,
    interaction_energy,
    log_interaction_energy,
    mean_abs_cosine,
    mean_cosine,
    shared_cosines,
)


def _closure_count(x: torch.Tensor, threshold: float) -> torch.Tensor:
    """The former cluster count: transitive closure of the N x N adjacency by boolean squaring."""
    u = x / x.norm(dim=-1, keepdim=True)
    reach = (u @ u.transpose(-1, -2)) > threshold
    while True:
        nxt = (reach.double() @ reach.double()) > 0
        if torch.equal(nxt, reach):
            break
        reach = nxt
    n = x.shape[-2]
    lower = torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1)
    return (~(reach & lower).any(-1)).sum(-1)


def _full(x: torch.Tensor):
    u = x / x.norm(dim=-1, keepdim=True)
    c = u @ u.transpose(-1, -2)
    iu = torch.triu_indices(x.shape[-2], x.shape[-2], offset=1)
    return c, c[..., iu[0], iu[1]]


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few rows, so that every sum crosses block edges (a block bug would change the values)."""
    monkeypatch.setattr(_pairsums, "BLOCK_ENTRIES", 37)


@pytest.mark.parametrize("n", [1, 2, 3, 17, 64])
def test_blocked_observables_equal_the_full_matrix_formulas(small_blocks, n):
    x = torch.randn(3, n, 3, generator=torch.Generator().manual_seed(n), dtype=torch.float64)
    x[0] = x[0, :1] + 0.05 * x[0]  # one tight group: a run near synchronization
    c, pairs = _full(x)
    for beta in (0.5, 4.0):
        want = -torch.expm1(beta * (c.clamp(max=1) - 1)).sum((-1, -2)) / (2 * n * n) * math.exp(beta)
        torch.testing.assert_close(interaction_energy(x, beta), want, rtol=1e-12, atol=1e-15)
        torch.testing.assert_close(log_interaction_energy(x, beta), want.log(), rtol=1e-12, atol=1e-12)
    for threshold in (-0.5, 0.0, 0.9, 0.99):
        assert torch.equal(cluster_count(x, threshold), _closure_count(x, threshold))
    if n == 1:  # no pairs: the mean over none is nan, as the mean of an empty set was
        assert mean_cosine(x).isnan().all() and mean_abs_cosine(x).isnan().all()
        return
    torch.testing.assert_close(mean_cosine(x), pairs.mean(-1), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(mean_abs_cosine(x), pairs.abs().mean(-1), rtol=1e-12, atol=1e-14)


def test_ties_at_the_threshold_are_not_links(small_blocks):
    """cos = threshold exactly (float64, exact products) is no link: 'cos > threshold', as before."""
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [0.6, 0.8]], dtype=torch.float64)
    for threshold in (0.0, 0.6, 0.8, -1.0):
        assert int(cluster_count(x, threshold)) == int(_closure_count(x, threshold)), threshold
    assert int(cluster_count(x, 0.0)) == 3  # (1,0)-(0.6,0.8)-(0,1) chained; (-1,0) and (0,-1) alone
    assert int(cluster_count(x, 0.6)) == 4  # cos((1,0), (0.6,0.8)) = 0.6 exactly: not linked; 0.8 is
    assert int(cluster_count(x, -1.0)) == 1  # antipodes (cos = -1) are the only non-links


def test_a_chain_is_one_cluster_and_scattered_tokens_are_many(small_blocks):
    t = torch.linspace(0, 1, 50, dtype=torch.float64)  # an arc, neighbours 0.02 rad apart
    arc = torch.stack([t.cos(), t.sin()], -1)
    assert int(cluster_count(arc, math.cos(0.03))) == 1  # a chain: far ends not linked, one component
    assert int(cluster_count(arc, math.cos(0.01))) == 50
    eye = torch.eye(8, dtype=torch.float64)
    assert int(cluster_count(eye, 0.5)) == 8


def test_float32_tokens_and_the_shared_matrix(small_blocks):
    x = torch.randn(2, 40, 4, generator=torch.Generator().manual_seed(7))
    c, pairs = _full(x.double())
    torch.testing.assert_close(mean_cosine(x), pairs.mean(-1).float(), rtol=1e-5, atol=1e-6)
    assert mean_cosine(x).dtype == torch.float32 and interaction_energy(x).dtype == torch.float32
    with shared_cosines(x):  # inside, the shared matrix is read: the same values to rounding
        shared = (interaction_energy(x), mean_abs_cosine(x))
    torch.testing.assert_close(shared[0], interaction_energy(x), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(shared[1], mean_abs_cosine(x), rtol=1e-5, atol=1e-6)
