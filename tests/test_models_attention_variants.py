"""Attention variants (BEYOND section 5): each one's defining property, batched == unbatched, the error for
beta / scale given with explicit matrices, and every variant with every noise model in the discrete model."""

import math
import warnings
from typing import cast

import pytest
import torch

from sdeformer.attention._sinkhorn import SinkhornAttention, SinkhornWarning
from sdeformer.attention._variants import (
    L2Attention,
    RandomMatrixAttention,
    UnnormalizedAttention,
    random_qk,
)
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import uniform_sphere as _uniform
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.experiments._sync.eps import adversarial_starts
from sdeformer.noise._fields import GaussianField
from sdeformer.noise._heads import ResampledHeads
from sdeformer.noise._mlp import MLPNoise
from sdeformer.noise._partial import PartialNoise
from sdeformer.noise._quadratic import QuadraticForm
from sdeformer.noise._value import ValueNoise
from sdeformer.observables import antipodal_pairs, one_cluster


def uniform_sphere(*args, **kwargs):
    return _uniform(*args, dtype=torch.float64, **kwargs)


VARIANTS = {
    "usa": lambda: UnnormalizedAttention(1.5, 0.5),
    "usa_causal": lambda: UnnormalizedAttention(1.0, causal=True),
    "l2": lambda: L2Attention(2.0),
    "l2_causal": lambda: L2Attention(1.0, causal=True),
    "sinkhorn": lambda: SinkhornAttention(2.0),
    "random_gaussian": lambda: RandomMatrixAttention("gaussian", "gaussian", seed=[3, 4]),
    "random_goe_psd": lambda: RandomMatrixAttention("goe", "psd", redraw_every=2, seed=[3, 4]),
    "random_minus_qk_causal": lambda: RandomMatrixAttention("gaussian", "-qk", seed=[3, 4], causal=True),
}


def test_usa_equals_its_formula(float64):
    x, beta, s = uniform_sphere(5, 3, seed=0), 1.5, 0.5
    expected = torch.stack(
        [
            cast(torch.Tensor, sum(math.exp(beta * float(x[i] @ x[j])) * s * x[j] for j in range(5))) / 5
            for i in range(5)
        ]
    )
    assert torch.allclose(UnnormalizedAttention(beta, s).drift(x), expected)


def test_sinkhorn_matrix_is_doubly_stochastic(float64):
    att = SinkhornAttention(3.0, iterations=500, tol=1e-9)
    p = att.weights(uniform_sphere(7, 4, batch=(3,), seed=1))
    assert (p.sum(-1) - 1).abs().max() <= 1e-12 and (p.sum(-2) - 1).abs().max() <= att.tol


@pytest.mark.parametrize("beta", [10.0, 50.0])
def test_sinkhorn_converges_on_clustered_tokens(beta, float64):
    """Point 9: N = 32 clustered tokens, beta = 10 and 50: the alternate normalisation stopped at 200 rounds
    with columns off by 1e-4; the symmetric log-domain iteration reaches 1e-6 without a warning."""
    starts = adversarial_starts(4, 32, 8, seed=0)
    att = SinkhornAttention(beta)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SinkhornWarning)
        for x in starts.values():
            p = att.weights(x)
            assert (p.sum(-2) - 1).abs().max() <= 1e-6 and (p.sum(-1) - 1).abs().max() <= 1e-12
            assert att.last_error <= 1e-6 and torch.allclose(p, p.mT, atol=1e-9)


def test_sinkhorn_that_stops_short_warns_never_silently():
    att = SinkhornAttention(50.0, iterations=2)
    x = adversarial_starts(2, 32, 8, seed=0)["spread 0.3"]
    with pytest.warns(SinkhornWarning, match="did not converge in 2 iterations"):
        att.weights(x)
    assert att.last_error > att.tol


@pytest.mark.parametrize("name", [n for n in VARIANTS if "causal" in n])
def test_causal_output_unchanged_by_future_tokens(name, float64):
    x = uniform_sphere(6, 4, batch=(2,), seed=2)
    y = x.clone()
    y[..., 4:, :] = uniform_sphere(2, 4, batch=(2,), seed=9)
    a, b = VARIANTS[name]().drift(x), VARIANTS[name]().drift(y)
    assert torch.allclose(a[..., :4, :], b[..., :4, :]) and not torch.allclose(a, b)


@pytest.mark.parametrize("name", sorted(VARIANTS))
@pytest.mark.kernels
def test_batched_equals_unbatched(name, float64):
    x = uniform_sphere(5, 4, batch=(2,), seed=5)
    batched = VARIANTS[name]().drift(x)
    for k, seed in enumerate([3, 4]):
        single = VARIANTS[name]()
        if isinstance(single, RandomMatrixAttention):
            single.seed = seed
        assert torch.allclose(batched[k], single.drift(x[k]), atol=1e-12)


def test_explicit_matrices_with_beta_or_scale_are_errors():
    eye = torch.eye(3)
    with pytest.raises(ConfigError, match="beta"):
        L2Attention(2.0, Q=eye, K=eye)
    with pytest.raises(ConfigError, match="scale"):
        UnnormalizedAttention(1.0, 2.0, V=eye)


def test_random_matrices_redraw_and_kinds(float64):
    x = uniform_sphere(4, 3, seed=0)
    att = RandomMatrixAttention("goe", "+qk", redraw_every=2, seed=1)
    first = att.matrices(x)[0].clone()
    assert torch.equal(att.matrices(x)[0], first) and not torch.equal(att.matrices(x)[0], first)
    assert att.A is not None and att.V is not None
    assert torch.equal(att.A, att.A.T) and torch.equal(att.V, att.A)
    a = random_qk(64, Streams(0, (200,)), "gaussian", torch.float64)  # A A'^T / sqrt(d): entries of variance 1
    assert a.var().item() == pytest.approx(1.0, rel=0.05)


def test_cluster_criteria():
    e = torch.eye(3)
    chain = torch.stack([e[0], (e[0] + 0.05 * e[1]), (e[0] + 0.1 * e[1])])
    assert not bool(one_cluster(chain, 0.999)) and bool(one_cluster(chain, 0.99))
    assert float(antipodal_pairs(torch.stack([e[0], -e[0], e[1]]))) == pytest.approx(1 / 3)


NOISES = {
    "mlp": lambda: MLPNoise("relu", 16, 0.1, 0.1),
    "partial_gaussian": lambda: PartialNoise(GaussianField("relu", 0.1, 0.1), 0.5),
    "value": lambda: ValueNoise(1.0),
    "quadratic": lambda: QuadraticForm(0.5),
    "heads": lambda: ResampledHeads(2, beta=1.0),
}


@pytest.mark.parametrize("noise", sorted(NOISES))
@pytest.mark.parametrize("variant", ["usa", "l2_causal", "sinkhorn", "random_goe_psd"])
def test_every_variant_runs_with_every_noise_model(variant, noise):
    model = StochasticTransformer(5, 0.5, noise=NOISES[noise](), attention=VARIANTS[variant]())
    out = model.run(uniform_sphere(4, 5, batch=(2,), seed=0), seed=[3, 4]).final
    assert out.shape == (2, 4, 5) and torch.isfinite(out).all()
    assert torch.allclose(out.norm(dim=-1), torch.ones(2, 4, dtype=out.dtype), atol=1e-9)
