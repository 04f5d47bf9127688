"""Mean |cosine| on S^2 by sign-decided blocks of an octree (``_abscos``) equals the N^2 sum in float64."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import sdeformer.observables as ob
from sdeformer import _abscos, _spheresums


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _pairs(u: np.ndarray) -> float:
    """sum_{i, j} |<u_i, u_j>|, the diagonal included: the exact O(N^2) sum."""
    return float(sum(np.abs(u[s : s + 512] @ u.T).sum() for s in range(0, len(u), 512)))


def _cases() -> dict[str, np.ndarray]:
    g = np.random.default_rng(0)
    e = np.eye(3)
    orthogonal = np.concatenate([e[0] + 1e-9 * g.standard_normal((300, 3)), e[1] + 1e-9 * g.standard_normal((200, 3))])
    spread = _unit(g.standard_normal((3000, 3)))
    return {
        "spread": spread,  # refined to the leaves near every cell's orthogonal circle
        "clusters": _unit(g.standard_normal((5, 3))[g.integers(0, 5, 2000)] + 1e-3 * g.standard_normal((2000, 3))),
        "orthogonal clusters": _unit(orthogonal),  # cosines ~1e-9 across: refined to the finest level, large cells
        "coincident": np.tile(_unit(g.standard_normal((1, 3))), (500, 1)),
        "antipodes": np.concatenate([spread[:700], -spread[:700]]),
        "great circle": _unit(np.c_[g.standard_normal((800, 2)), np.zeros(800)]),  # all on one circle
        "one": spread[:1],
        "two": spread[:2],
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_the_octree_sum_equals_the_pair_sum(name):
    u = _cases()[name]
    assert _abscos.abs_cosine_sum(u) == pytest.approx(_pairs(u), rel=1e-13, abs=1e-13)


def test_a_block_decided_by_its_centres_alone_is_wrong(monkeypatch):
    """The radii matter: deciding every block by the sign of <c_A, c_B> (margin -inf) changes the sum."""
    u = _cases()["spread"]
    monkeypatch.setattr(_abscos, "SIGN_MARGIN", -np.inf)
    assert abs(_abscos.abs_cosine_sum(u) / _pairs(u) - 1) > 1e-4


def test_mean_abs_cosine_takes_the_octree_with_the_pair_sums_values(monkeypatch):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 700, 3, generator=g, dtype=torch.float64)
    x[1] = x[1, :1] + 0.01 * x[1]  # a second run near synchronization
    monkeypatch.setattr(_spheresums, "SCALABLE_MIN_TOKENS", 10**12)
    exact = ob.mean_abs_cosine(x)
    monkeypatch.setattr(_spheresums, "SCALABLE_MIN_TOKENS", 1)
    monkeypatch.setattr(_spheresums, "SPHERE_ABS_MIN_TOKENS", 1)
    calls = []
    real = _abscos.abs_cosine_sum
    monkeypatch.setattr(_spheresums, "abs_cosine_sum_all", lambda u: calls.append(len(u)) or real(u))
    fast = ob.mean_abs_cosine(x)
    assert calls == [700, 700] and fast.shape == (2,)  # the octree, once per run
    torch.testing.assert_close(fast, exact, rtol=1e-13, atol=0)
    assert ob.mean_abs_cosine(x.float()).dtype == torch.float32


@pytest.mark.parametrize("name", ["spread", "clusters", "orthogonal clusters"])
def test_pieces_of_a_few_pairs_give_the_same_sum(monkeypatch, name):
    """Refining parents in pieces of at most ``PAIR_CHUNK`` children pairs (the memory bound) sums every pair
    once: with pieces of 1,000 pairs, cuts at the deeper levels, the sum is the pair sum's."""
    u = _cases()[name][:1500]
    monkeypatch.setattr(_abscos, "PAIR_CHUNK", 1000)
    assert _abscos.abs_cosine_sum(u) == pytest.approx(_pairs(u), rel=1e-13, abs=1e-13)


def test_the_switch_takes_the_octree_from_its_threshold_on_s2_only():
    """Below ``SPHERE_ABS_MIN_TOKENS`` the row blocks, from it the octree (d = 3 only; d = 2 sorts, d = 4 pairs),
    and at N = 10^6 (``simulate --tokens 1000000 --dim 3``) the octree."""
    n = _spheresums.SPHERE_ABS_MIN_TOKENS
    applies = [_spheresums.abs_cosine_applies(torch.empty(k, 3)) for k in (n - 1, n, 10**6)]
    assert applies == [False, True, True] and not _spheresums.abs_cosine_applies(torch.empty(n, 4))
    assert _spheresums.abs_cosine_bytes(n - 1, 3) == 0 < _spheresums.abs_cosine_bytes(n, 3)


CROSSOVER = Path(__file__).parents[1] / "benchmarks" / "results" / "abscos_crossover.jsonl"


@pytest.mark.skipif(not CROSSOVER.exists(), reason="the benchmarks' records are not shipped")
def test_the_switch_sits_where_the_octree_was_measured_faster_under_every_dispatch():
    """The standard for a path chosen automatically: from the threshold on, every measured size is faster by the
    octree under default, avx2 and avx512, on spread and clustered tokens, and the threshold itself was measured
    under all three; one size below it was measured slower (so it is not set lower than measured). A switch at
    2^15 fails (spread tokens: row blocks 1.5-3x faster there), one at 2^17 too (2^16 measured faster)."""
    rows = [json.loads(line) for line in CROSSOVER.read_text().splitlines() if line.strip()]
    n = _spheresums.SPHERE_ABS_MIN_TOKENS
    above = [r for r in rows if r["tokens"] >= n]
    assert all(r["rows_over_octree_cpu"] > 1 for r in above)
    at = {(r["env_cap"], r["cloud"]) for r in rows if r["tokens"] == n}
    assert at == {(cap, cloud) for cap in ("default", "avx2", "avx512") for cloud in ("spread", "clustered")}
    below = max(r["tokens"] for r in rows if r["tokens"] < n)
    assert any(r["rows_over_octree_cpu"] < 1 for r in rows if r["tokens"] == below)
