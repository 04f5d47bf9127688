"""The S^1 / S^2 forms of the observables (``_spheresums``: harmonic energy, clusters and mean |cosine| by sorting)
give the pair sums' values: both computed on the same tokens, the forms switched on from N = 1."""

from __future__ import annotations

import math

import pytest
import torch

import sdeformer.observables as ob
from sdeformer import _spheresums
from sdeformer.core._errors import ConfigError


def _both(monkeypatch, f, *args, **kw):
    """(pair sums, forms) of ``f(*args)``."""
    monkeypatch.setattr(_spheresums, "SCALABLE_MIN_TOKENS", 10**12)
    exact = f(*args, **kw)
    monkeypatch.setattr(_spheresums, "SCALABLE_MIN_TOKENS", 1)
    return exact, f(*args, **kw)


def _clusters_on_circle(centres, sizes, spread, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.cat([c + spread * torch.randn(n, generator=g, dtype=torch.float64) for c, n in zip(centres, sizes)])
    return torch.stack([t.cos(), t.sin()], -1)  # (N, 2)


def _states(d: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(d)
    spread = torch.randn(3, 257, d, generator=g, dtype=torch.float64)  # a batch of 3 runs
    tight = torch.randn(1, d, generator=g, dtype=torch.float64) + 1e-3 * torch.randn(200, d, generator=g).double()
    return [spread, tight, torch.randn(2, d, generator=g, dtype=torch.float64)]


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("beta", [0.3, 1.0, 4.0, 10.0])
def test_energy_equals_the_pair_sums(monkeypatch, d, beta):
    for x in _states(d):
        exact, fast = _both(monkeypatch, ob.interaction_energy, x, beta)
        assert fast.shape == exact.shape
        assert torch.allclose(fast, exact, rtol=0, atol=_spheresums.ENERGY_ATOL * math.exp(beta))
        exact, fast = _both(monkeypatch, ob.normalized_energy, x, beta)
        assert torch.allclose(fast, exact, rtol=0, atol=2 * _spheresums.ENERGY_ATOL)


def test_energy_is_the_harmonic_one_and_keeps_large_beta_exact(monkeypatch):
    x = _states(2)[0]
    monkeypatch.setattr(_spheresums, "SCALABLE_MIN_TOKENS", 1)
    calls = []
    monkeypatch.setattr(_spheresums, "scaled_energy", lambda u, b: calls.append(b) or torch.zeros(u.shape[:-2]))
    assert ob.interaction_energy(x, 1.0).eq(0).all() and calls == [1.0]  # the form is what is returned
    ob.interaction_energy(x, 200.0)  # beyond ENERGY_BETA_MAX: pair sums
    assert calls == [1.0]


def test_a_gradient_keeps_the_pair_sums(monkeypatch):
    x = _states(3)[0].clone().requires_grad_()
    monkeypatch.setattr(_spheresums, "SCALABLE_MIN_TOKENS", 1)
    ob.interaction_energy(x, 1.0).sum().backward()  # the loss of nn.InteractionEnergy: differentiable
    assert x.grad is not None and bool(x.grad.abs().sum() > 0)


def test_circle_clusters_equal_the_graph_components(monkeypatch):
    cases = [
        _clusters_on_circle([0.0, 2.0, 4.0], [50, 30, 20], 0.01),
        _clusters_on_circle([math.pi - 0.005, -math.pi + 0.005], [40, 40], 0.002),  # one cluster across +-pi
        _clusters_on_circle([0.0], [1], 0.0),
        _clusters_on_circle([0.0, 0.5], [1, 1], 0.0),
        torch.stack([torch.linspace(0, 3, 40).cos(), torch.linspace(0, 3, 40).sin()], -1).double(),  # a chain
        torch.randn(4, 300, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64),
    ]
    for x in cases:
        for threshold in (0.999, 0.99, 0.5, -0.5):
            exact, fast = _both(monkeypatch, ob.cluster_count, x, threshold)
            assert torch.equal(fast, exact), (threshold, exact, fast)
    exact, fast = _both(monkeypatch, ob.cluster_count, cases[0], 0.999)
    assert int(fast) == 3 and int(_both(monkeypatch, ob.cluster_count, cases[1], 0.999)[1]) == 1


def test_circle_mean_abs_cosine_equals_the_pair_sums(monkeypatch):
    cases = _states(2) + [_clusters_on_circle([0.3, 0.3 + math.pi / 2, 2.0], [30, 30, 5], 0.2)]
    for x in cases:
        exact, fast = _both(monkeypatch, ob.mean_abs_cosine, x)
        assert torch.allclose(fast, exact, rtol=1e-12, atol=0)
    exact, fast = _both(monkeypatch, ob.mean_abs_cosine, cases[0].float())
    assert fast.dtype == torch.float32 and torch.allclose(fast, exact, rtol=1e-6)


def _clusters_on_sphere(n_clusters, size, spread, seed):
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(n_clusters, 1, 3, generator=g, dtype=torch.float64)
    centres = centres / centres.norm(dim=-1, keepdim=True)
    return (centres + spread * torch.randn(n_clusters, size, 3, generator=g, dtype=torch.float64)).reshape(-1, 3)


@pytest.mark.parametrize("budget", [0, 10**9])  # by cubes always; by the linked pairs always
def test_sphere_clusters_equal_the_graph_components(monkeypatch, budget):
    monkeypatch.setattr(_spheresums, "PAIR_BUDGET", budget)
    g = torch.Generator().manual_seed(5)
    cases = [
        _clusters_on_sphere(6, 40, 0.01, 0),
        _clusters_on_sphere(12, 30, 0.05, 1),  # clusters that touch at 0.99, chains across cubes
        torch.randn(3, 400, 3, generator=g, dtype=torch.float64),  # spread: singletons at 0.999, groups at 0.9
        torch.randn(1, 3, dtype=torch.float64),
        torch.stack([torch.linspace(0, 2, 80).cos(), torch.linspace(0, 2, 80).sin(), torch.zeros(80)], -1).double(),
    ]
    counts = set()
    for x in cases:
        for threshold in (0.999, 0.99, 0.95, 0.9):
            exact, fast = _both(monkeypatch, ob.cluster_count, x, threshold)
            assert torch.equal(fast, exact), (threshold, exact, fast)
            counts |= set(exact.reshape(-1).tolist())
    assert len(counts) > 10  # the cases cover one, a few and many components


def test_sphere_keeps_pair_sums_below_the_grid_and_for_abs_cosine(monkeypatch):
    x = _states(3)[0]
    monkeypatch.setattr(_spheresums, "sphere_components", None)  # not called below GRID_MIN_COS
    exact, fast = _both(monkeypatch, ob.cluster_count, x, 0.5)
    assert torch.equal(fast, exact)
    exact, fast = _both(monkeypatch, ob.mean_abs_cosine, x)
    assert torch.equal(fast, exact)


def test_meta_tokens_are_refused_in_one_line():
    x = torch.empty(5, 3, device="meta")
    for f in (ob.interaction_energy, ob.mean_abs_cosine, ob.cluster_count, ob.mean_cosine):
        with pytest.raises(ConfigError, match="meta") as err:
            f(x)
        assert err.value.parameter == "x" and "\n" not in str(err.value)
