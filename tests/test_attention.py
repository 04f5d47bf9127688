"""Attention drifts (THEORY section 1) against a direct softmax sum."""

from __future__ import annotations

import math

import torch

import sdeformer as sdf
from sdeformer.attention import MultiHeadAttention, NoAttention


def _naive(x, Q, K, V):
    out = torch.zeros_like(x)
    for i in range(len(x)):
        logits = torch.stack([(Q @ x[i]) @ (K @ x[j]) for j in range(len(x))])
        w = torch.softmax(logits, 0)
        out[i] = sum(w[j] * (V @ x[j]) for j in range(len(x)))
    return out


def test_softmax_drift_matches_direct_sum_and_shorthand():
    gen = torch.Generator().manual_seed(0)
    x = sdf.uniform_sphere(7, 4, generator=gen, dtype=torch.float64)
    Q, K, V = (torch.randn(4, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    explicit = sdf.SoftmaxAttention(Q=Q, K=K, V=V).drift(x)
    assert torch.allclose(explicit, _naive(x, Q, K, V), atol=1e-12)
    beta, s = 1.7, -1.0
    eye = torch.eye(4, dtype=torch.float64)
    shorthand = sdf.SoftmaxAttention(beta, s).drift(x)
    full = sdf.SoftmaxAttention(Q=math.sqrt(beta) * eye, K=math.sqrt(beta) * eye, V=s * eye).drift(x)
    assert torch.allclose(shorthand, full, atol=1e-12)


def test_multihead_is_sum_of_heads_and_off_is_zero():
    x = sdf.uniform_sphere(5, 3, seed=1, dtype=torch.float64)
    a, b = sdf.SoftmaxAttention(1.0, 0.5), sdf.SoftmaxAttention(2.0, -0.25)
    assert torch.allclose(MultiHeadAttention([a, b]).drift(x), a.drift(x) + b.drift(x))
    assert torch.equal(NoAttention().drift(x), torch.zeros_like(x))


def test_batched_parameters_match_per_setting_drifts():
    x = sdf.uniform_sphere(5, 3, batch=(3,), seed=2, dtype=torch.float64)
    betas, scales = torch.tensor([0.5, 1.0, 2.0]), torch.tensor([1.0, 0.0, -1.0])
    batched = sdf.SoftmaxAttention(betas, scales).drift(x)
    for k in range(3):
        single = sdf.SoftmaxAttention(float(betas[k]), float(scales[k])).drift(x[k])
        assert torch.allclose(batched[k], single, atol=1e-12)


def test_bad_attention_parameters():
    import pytest

    with pytest.raises(sdf.ConfigError):
        sdf.SoftmaxAttention(beta=-1.0)
    with pytest.raises(sdf.ConfigError):
        sdf.SoftmaxAttention(Q=torch.ones(2, 3))
    with pytest.raises(sdf.ConfigError):
        sdf.SoftmaxAttention(scale=float("nan"))
    per_run = [(torch.tensor([1.0, 0.0]), 1.0, "beta"), (1.0, torch.tensor([1.0, float("inf")]), "attention_scale")]
    for beta, scale, param in per_run:  # one value per run: every entry is checked
        with pytest.raises(sdf.ConfigError) as info:
            sdf.SoftmaxAttention(beta, scale)
        assert info.value.parameter == param


def test_softmax_attention_rejects_shorthand_with_matrices():
    import pytest

    eye = torch.eye(3)
    for kwargs in ({"beta": 2.0, "Q": eye}, {"scale": -1.0, "V": eye}, {"beta": 1.0, "K": eye}):
        with pytest.raises(sdf.ConfigError):
            sdf.SoftmaxAttention(**kwargs)
    assert (sdf.SoftmaxAttention().beta, sdf.SoftmaxAttention().scale) == (1.0, 1.0)  # the shorthand's defaults
    x = sdf.uniform_sphere(5, 3, seed=1, dtype=torch.float64)
    assert torch.allclose(sdf.SoftmaxAttention(V=-eye.double()).drift(x), sdf.SoftmaxAttention(scale=-1.0).drift(x))
