"""What the peers' codes do with matrices, in every attention that takes them: one (d, d) matrix per run of a
batch (``(B, d, d)``, batched equal to one run per element), Q and K in the unnormalized attention (the GLPR
script's exp(beta x_i^T BF x_j) / N), and a causal mask with explicit matrices (simuformer's ``--sequential``)."""

from __future__ import annotations

import pytest
import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.attention._variants import CausalSoftmaxAttention, L2Attention, UnnormalizedAttention
from sdeformer.core._errors import ConfigError
from sdeformer.core._sphere import uniform_sphere

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

B, N, D = 3, 5, 4


def _matrices(seed: int) -> torch.Tensor:
    return torch.randn(B, D, D, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) / D**0.5


@pytest.mark.parametrize(
    "make",
    [
        lambda q, k, v: SoftmaxAttention(Q=q, K=k, V=v),
        lambda q, k, v: SoftmaxAttention(Q=q, K=k, V=v, causal=True),
        lambda q, k, v: UnnormalizedAttention(Q=q, K=k, V=v),
        lambda q, k, v: L2Attention(Q=q, K=k, V=v, causal=True),
    ],
    ids=["softmax", "softmax causal", "unnormalized", "l2 causal"],
)
def test_matrices_per_run_equal_one_run_per_element(make):
    x = uniform_sphere(N, D, batch=(B,), seed=4, dtype=torch.float64)
    q, k, v = _matrices(1), _matrices(2), _matrices(3)
    batched = make(q, k, v).drift(x)
    for b in range(B):
        assert torch.allclose(batched[b], make(q[b], k[b], v[b]).drift(x[b]), atol=1e-13, rtol=0)
    assert not torch.allclose(batched[1], make(q[0], k[0], v[0]).drift(x[1]), atol=1e-6)  # not one shared matrix


def test_unnormalized_attention_with_a_bilinear_form():
    """exp(x_i^T A x_j) / N with Q = A^T, K = I; Q = beta I is beta's own attention."""
    x = uniform_sphere(N, D, seed=5, dtype=torch.float64)
    a = _matrices(6)[0]
    expected = torch.exp(x @ a @ x.T) / N @ x
    assert torch.allclose(UnnormalizedAttention(Q=a.T).drift(x), expected, atol=1e-13)
    eye = torch.eye(D, dtype=torch.float64)
    assert torch.allclose(UnnormalizedAttention(Q=2.5 * eye).drift(x), UnnormalizedAttention(2.5).drift(x))
    with pytest.raises(ConfigError, match="beta"):
        UnnormalizedAttention(2.0, Q=eye)


def test_causal_softmax_with_matrices():
    x = uniform_sphere(N, D, batch=(B,), seed=7, dtype=torch.float64)
    eye = torch.eye(D, dtype=torch.float64)
    ours = SoftmaxAttention(Q=1.5 * eye, causal=True).drift(x)
    assert torch.allclose(ours, CausalSoftmaxAttention(1.5).drift(x), atol=1e-13)
    assert torch.allclose(ours[:, 0], x[:, 0])  # the first token attends to itself only
    assert not torch.allclose(ours, SoftmaxAttention(1.5).drift(x), atol=1e-3)
