"""Fast attention paths: chunked/fused softmax attention equals the plain O(N^2) formula,
its memory is O(N d), and random-batch attention equals full attention at p = N with an error that
falls with p (THEORY sections 1 and 7)."""

import subprocess
import sys

import pytest
import torch

from sdeformer import MLPNoise, StochasticTransformer, uniform_sphere
from sdeformer.attention._softmax import (
    RandomBatchAttention,
    SoftmaxAttention,
    random_batch_attention,
    softmax_attention,
)
from sdeformer.core._errors import ConfigError

EXACT = 1e-6  # fp64 agreement required of the fast paths (observed ~1e-15)


def plain_attention(q, k, v):
    """The textbook softmax(q k^T) v with the full N x N score matrix."""
    return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v


def _x(shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("shape", [(50, 3), (4, 37, 6), (2, 3, 1, 33, 5)])
@pytest.mark.parametrize("chunk", [None, 1, 8, 1000])
def test_chunked_equals_full_attention(shape, chunk):
    x = _x(shape)
    q = 0.7 * x
    assert (softmax_attention(q, x, x, chunk=chunk) - plain_attention(q, x, x)).abs().max() < EXACT


def test_softmax_attention_broadcasts_batch_shapes():
    q, k, v = _x((3, 1, 20, 4), 1), _x((2, 20, 4), 2), _x((20, 5), 3)
    out = softmax_attention(q, k, v, chunk=3)
    assert out.shape == (3, 2, 20, 5)
    assert (out - plain_attention(q, k, v)).abs().max() < EXACT


def test_default_chunking_splits_large_problems(monkeypatch):
    import sdeformer.attention._softmax as attention

    monkeypatch.setattr(attention, "SCORE_BUDGET", 64)  # forces 64 // (2 * 40) -> 1-row chunks
    x = _x((2, 40, 3))
    assert (softmax_attention(x, x, x) - plain_attention(x, x, x)).abs().max() < EXACT


MEMORY_PROBE = """
import resource, torch
from sdeformer.attention._softmax import softmax_attention
x = torch.randn(8192, 64, generator=torch.Generator().manual_seed(0))  # unbatched (N, d) input
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
softmax_attention(x, x, x)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""
EXTRA_MB = 96  # the N x N scores alone would take 256 MB at N = 8192 in fp32


def test_attention_memory_is_linear_in_tokens():
    extra = float(
        subprocess.run([sys.executable, "-c", MEMORY_PROBE], capture_output=True, text=True, check=True).stdout.strip()
    )
    assert extra < EXTRA_MB


@pytest.mark.parametrize("p", [64, 100, 1000])
def test_random_batch_function_with_one_batch_is_full_attention(p):
    x = _x((3, 64, 4))
    out = random_batch_attention(0.5 * x, x, x, p, torch.Generator().manual_seed(1))
    assert (out - plain_attention(0.5 * x, x, x)).abs().max() < EXACT


def test_random_batch_wrapper_with_p_equal_n_is_inner_attention():
    x = _x((3, 2, 30, 5))
    inner = SoftmaxAttention(torch.tensor([[1.0, 2.0], [0.5, 1.0], [3.0, 1.0]]), torch.tensor([1.0, -1.0]))
    assert (RandomBatchAttention(inner, 30).drift(x) - inner.drift(x)).abs().max() < EXACT


def test_random_batches_partition_the_tokens():
    """With Q = 0 the softmax is uniform, so each token's drift is the mean of its batch: the outputs
    take one value per batch, shared by exactly p tokens (the remainder batch by N mod p)."""
    n, p, d = 50, 8, 3
    x = _x((n, d))
    inner = SoftmaxAttention(Q=torch.zeros(d, d), K=torch.eye(d), V=torch.eye(d))
    out = RandomBatchAttention(inner, p, seed=4).drift(x)
    _, counts = torch.unique(out.round(decimals=9), dim=0, return_counts=True)
    assert sorted(counts.tolist()) == sorted([p] * (n // p) + [n % p])


@pytest.mark.kernels
def test_random_batch_batched_equals_unbatched_and_reset_replays():
    x = _x((2, 3, 40, 4))
    seeds = [11, 12, 13, 14, 15, 16]
    batched = RandomBatchAttention(SoftmaxAttention(), 7, seed=seeds)
    first = batched.drift(x)
    for k, seed in enumerate(seeds):
        single = RandomBatchAttention(SoftmaxAttention(), 7, seed=seed).drift(x.flatten(0, 1)[k])
        assert torch.equal(single, first.flatten(0, 1)[k])
    assert not torch.equal(batched.drift(x), first)  # a fresh shuffle every call
    batched.reset()
    assert torch.equal(batched.drift(x), first)


def test_random_batch_drift_error_falls_with_batch_size():
    """Mean-square error against full attention over 16 shuffles: decreasing in p, zero at p = N, and
    close to the (1/p - 1/N) law of sampling without replacement (ratio p=8 vs p=128 is ~21)."""
    n, d = 512, 8
    x = uniform_sphere(n, d, batch=(16,), seed=0, dtype=torch.float64)
    inner = SoftmaxAttention(beta=2.0)
    full = inner.drift(x)
    mse = [
        (RandomBatchAttention(inner, p, seed=1).drift(x) - full).pow(2).sum(-1).mean().item() for p in (8, 32, 128, 512)
    ]
    assert mse[0] > mse[1] > mse[2] > mse[3]
    assert mse[3] < EXACT
    assert mse[0] / mse[2] > 8


def test_random_batch_plugs_into_the_discrete_model():
    x0 = uniform_sphere(24, 5, batch=(2,), seed=3, dtype=torch.float64)
    mlp = MLPNoise("relu", 64, 0.1, 0.1)
    full = StochasticTransformer(10, 1.0, noise=mlp, attention=SoftmaxAttention()).run(x0, seed=[1, 2])
    rb = StochasticTransformer(10, 1.0, noise=mlp, attention=RandomBatchAttention(SoftmaxAttention(), 24))
    assert (rb.run(x0, seed=[1, 2]).x - full.x).abs().max() < EXACT
    small = StochasticTransformer(10, 1.0, noise=mlp, attention=RandomBatchAttention(SoftmaxAttention(), 4))
    first = small.run(x0, seed=[1, 2]).x  # (L + 1, 2, N, d)
    assert torch.equal(small.run(x0, seed=[1, 2]).x, first)  # shuffles come from the run's streams
    assert torch.equal(small.run(x0[1], seed=2).x, first[:, 1])  # batched equals unbatched


@pytest.mark.parametrize("p", [0, -3, 2.5, True])
def test_bad_batch_size_raises(p):
    with pytest.raises(ConfigError):
        RandomBatchAttention(SoftmaxAttention(), p)
    with pytest.raises(ConfigError):
        random_batch_attention(_x((4, 2)), _x((4, 2)), _x((4, 2)), p)


def test_random_batch_plugs_into_the_sde():
    from sdeformer.dynamics._sde import LimitSDE, ProjectedEulerMaruyama
    from sdeformer.noise._fields import GaussianField

    x0 = uniform_sphere(16, 4, batch=(2,), seed=5, dtype=torch.float64)
    field = GaussianField("relu", 0.1, 0.1)

    def solve(attention):
        return ProjectedEulerMaruyama(LimitSDE(field, attention), 8, 0.5).run(x0, seed=[3, 4]).x

    full = solve(SoftmaxAttention())
    assert (solve(RandomBatchAttention(SoftmaxAttention(), 16)) - full).abs().max() < EXACT
    assert (solve(RandomBatchAttention(SoftmaxAttention(), 4)) - full).abs().max() > 1e-3  # p < N: the batches act


@pytest.mark.usefixtures("one_thread")
def test_random_batch_shuffles_come_from_the_run_seed():
    x0 = uniform_sphere(12, 3, seed=0, dtype=torch.float64)
    attention = RandomBatchAttention(SoftmaxAttention(), 3)
    model = StochasticTransformer(8, 1.0, noise=MLPNoise("relu", 16, 0.1, 0.1), attention=attention)
    assert torch.equal(model.run(x0, seed=7).x, model.run(x0, seed=7).x)
    assert not torch.equal(model.run(x0, seed=7).x, model.run(x0, seed=8).x)


@pytest.mark.usefixtures("one_thread")
def test_random_batch_attention_in_the_sde_draws_from_the_run_streams():
    """Two SDE solves with the same seed and random-batch attention are identical (no hidden generator)."""
    from sdeformer import GaussianField, LimitSDE, make_solver

    x0 = uniform_sphere(12, 4, seed=3, dtype=torch.float64)
    sde = LimitSDE(GaussianField("relu", 0.1, 0.1), RandomBatchAttention(SoftmaxAttention(), 4))
    first, second = (make_solver(sde, 20, 1.0).run(x0, seed=7).final for _ in range(2))
    assert torch.equal(first, second)
