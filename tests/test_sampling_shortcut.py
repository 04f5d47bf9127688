"""The MLP noise fast paths: the conditional-Gaussian sampling shortcut draws G_l at the tokens
with the same law as the direct MLP (fixed-seed statistical tests, THEORY sections 1-2), keeps its
invariants, and the bf16 option is close to fp32; the default mode's stream is unchanged."""

import math
from typing import Any, cast

import pytest
import torch
from scipy.stats import ks_2samp

from sdeformer.core._errors import ConfigError
from sdeformer.core._kernel import kernel_theory
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import uniform_sphere
from sdeformer.noise._mlp import MLPNoise

SAMPLES = 20000  # independent MLP draws per law
Z_MAX = 4.5  # largest allowed z-score of an empirical second moment against kappa
P_MIN = 1e-3  # smallest allowed two-sample KS p-value for equal laws
P_POWER = 1e-6  # the KS statistics must reject a different law (Gaussian, same covariance) this strongly
BF16_REL = 0.03  # relative error of bf16 matmuls (8-bit mantissa) on the increment


def _pvalue(a: torch.Tensor, b: torch.Tensor) -> float:
    """The two-sample Kolmogorov-Smirnov p-value of two samples."""
    return float(cast(Any, ks_2samp(a.numpy(), b.numpy())).pvalue)  # scipy's result type is not declared


def _tokens(n, d, seed=0):
    return uniform_sphere(n, d, seed=seed, dtype=torch.float64)


def _draws(mlp, y, seed):
    """SAMPLES independent G(y) ``(S, N, d)`` (one batch element per draw)."""
    ys = y.expand((SAMPLES,) + y.shape)
    return mlp.increment(ys, 1.0, Streams.from_generator(torch.Generator().manual_seed(seed), (SAMPLES,)))


def _statistics(g):
    """Scalar functions of a draw whose laws the tests compare: a coordinate, a cross-token product,
    and the squared norm at one token (which sees the dependence between coordinates)."""
    return {"g11": g[:, 0, 0], "g11*g21": g[:, 0, 0] * g[:, 1, 0], "|g1|^2": g[:, 0].pow(2).sum(-1)}


# N = 3 tokens, d = 12, m = 4: both stages of the conditional mode use the N x N root (d+1 > N, m > N),
# and m is small enough that G is far from Gaussian.
N, D, M, SU, SW = 3, 12, 4, 0.3, 0.2


@pytest.fixture(scope="module")
def samples():
    y = _tokens(N, D)
    direct = _draws(MLPNoise("relu", M, SU, SW), y, seed=1)
    conditional = _draws(MLPNoise("relu", M, SU, SW, sampling="conditional"), y, seed=2)
    return y, direct, conditional


def test_second_moments_match_kappa(samples):
    """E[G(x_i) G(x_j)^T] = kappa(<x_i, x_j>) I for any width m (THEORY section 1), in both modes."""
    y, direct, conditional = samples
    kappa = kernel_theory("relu", D, su=SU, sw=SW).kappa(y @ y.T)  # (N, N)
    for g in (direct, conditional):
        prod = torch.einsum("sia,sja->sij", g, g) / D  # (S, N, N): coordinate-averaged products
        z = (prod.mean(0) - kappa) / (prod.std(0) / math.sqrt(SAMPLES))
        assert z.abs().max() < Z_MAX
        cross = g[:, 0, :, None] * g[:, 1, None, :]  # (S, d, d): G_a(x_1) G_b(x_2), zero mean for a != b
        z_cross = cross.mean(0) / (cross.std(0) / math.sqrt(SAMPLES))
        assert z_cross[~torch.eye(D, dtype=torch.bool)].abs().max() < Z_MAX


def test_conditional_sampling_has_the_law_of_the_direct_mlp(samples):
    _, direct, conditional = samples
    for name, a in _statistics(direct).items():
        assert _pvalue(a, _statistics(conditional)[name]) > P_MIN, name


def test_law_test_has_power(samples):
    """The same statistics reject a Gaussian field with the same covariance (the infinite-width law)."""
    y, direct, _ = samples
    kappa = kernel_theory("relu", D, su=SU, sw=SW).kappa(y @ y.T)
    z = torch.randn((SAMPLES, N, D), generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    gauss = torch.linalg.cholesky(kappa) @ z  # (S, N, D)
    assert min(_pvalue(a, _statistics(gauss)[k]) for k, a in _statistics(direct).items()) < P_POWER


def test_conditional_mode_counts_fewer_normals():
    assert MLPNoise("relu", 2048).normals_per_layer(64, 128) == 2 * 2048 * 128 + 2048 + 128
    assert MLPNoise("relu", 2048, sampling="conditional").normals_per_layer(64, 128) == 64 * 2048 + 64 * 128 + 128
    # d = 5: the 2048 x 64 QR would cost more than the 1984 x 5 normals it saves, so W is drawn directly
    assert MLPNoise("relu", 2048, sampling="conditional").normals_per_layer(64, 5) == 6 * 2048 + 2048 * 5 + 5


def test_conditional_mode_keeps_identical_tokens_identical_and_odd_fields_odd():
    y = _tokens(5, 16, seed=4)
    y = torch.cat([y, y[:1], -y[1:2]])  # token 5 = token 0, token 6 = -token 1
    ys = y.expand(3, *y.shape)
    relu = MLPNoise("relu", 64, 0.1, 0.1, sampling="conditional").increment(ys, 0.1, Streams(0, (3,)))
    assert (relu[:, 5] - relu[:, 0]).abs().max() < 1e-10
    tanh = MLPNoise("tanh", 64, sampling="conditional").increment(ys, 0.1, Streams(0, (3,)))
    assert (tanh[:, 6] + tanh[:, 1]).abs().max() < 1e-10  # tanh without biases: an odd field


@pytest.mark.kernels
def test_conditional_batched_equals_unbatched():
    y = uniform_sphere(10, 16, batch=(2,), seed=5, dtype=torch.float64)
    su, sw = torch.tensor([0.0, 0.2], dtype=torch.float64), torch.tensor([0.1, 0.0], dtype=torch.float64)
    mlp = MLPNoise("silu", 32, su, sw, sampling="conditional")
    batched = mlp.increment(y, 0.1, Streams([7, 8], (2,)))
    for k, (seed, su, sw) in enumerate([(7, 0.0, 0.1), (8, 0.2, 0.0)]):
        single = MLPNoise("silu", 32, su, sw, sampling="conditional").increment(y[k], 0.1, Streams(seed, ()))
        assert torch.allclose(single, batched[k], rtol=0, atol=1e-12)


def test_default_mode_stream_is_unchanged():
    """Direct mode = G(y) from U, bU, W, bW drawn in this order from the element's generator."""
    y = _tokens(7, 5)
    out = MLPNoise("relu", 16, 0.3, 0.2).increment(y, 0.25, Streams(9, ()))
    g = torch.Generator().manual_seed(9)
    U, bU = torch.randn(16, 5, generator=g, dtype=y.dtype), 0.3 * torch.randn(16, generator=g, dtype=y.dtype)
    W, bW = torch.randn(5, 16, generator=g, dtype=y.dtype), 0.2 * torch.randn(5, generator=g, dtype=y.dtype)
    expected = 0.5 * (torch.relu(y @ U.T / math.sqrt(5) + bU) @ W.T / 4.0 + bW)
    assert torch.allclose(out, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("sampling", ["direct", "conditional"])
def test_bf16_matmuls_are_close_to_fp32(sampling):
    y = uniform_sphere(64, 64, batch=(2,), seed=6)
    full = MLPNoise("relu", 2048, 0.1, 0.1, sampling=sampling).increment(y, 0.1, Streams([1, 2], (2,)))
    low = MLPNoise("relu", 2048, 0.1, 0.1, sampling=sampling, matmul_dtype=torch.bfloat16)
    half = low.increment(y, 0.1, Streams([1, 2], (2,)))
    assert half.dtype == torch.float32
    assert ((half - full).norm() / full.norm()).item() < BF16_REL


@pytest.mark.parametrize("kwargs", [{"sampling": "fast"}, {"matmul_dtype": torch.int32}, {"matmul_dtype": "bf16"}])
def test_bad_fast_path_options_raise(kwargs):
    with pytest.raises(ConfigError):
        MLPNoise("relu", 8, **kwargs)
