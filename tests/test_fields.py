"""The Brownian fields of THEORY section 3: covariance, random-feature convergence, replay, scale."""

import math

import pytest
import torch

from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.noise._fields import GaussianField, RandomFeatureField
from sdeformer.noise._replay import BrownianPath, ReplayedNoise

COV_SAMPLES = 20000
COV_TOL_SE = 5.0  # tolerance in standard errors of a covariance estimate
RF_SLOPE_TOL = 0.15  # |slope + 1/2| for the random-feature covariance error against M


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("activation,root", [("relu", "cholesky"), ("tanh", "cholesky"), ("relu", "eigh")])
def test_gaussian_increment_covariance_is_dt_kappa(activation, root):
    field = GaussianField(activation, 0.1, 0.1, root=root)
    y = uniform_sphere(3, 4, seed=5, dtype=torch.float64)  # (3, 4)
    dt = 0.25
    g = torch.Generator().manual_seed(0)
    inc = field.increment(y.expand(COV_SAMPLES, 3, 4), dt, Streams.from_generator(g, (COV_SAMPLES,)))  # (S, 3, 4)
    flat = inc.reshape(COV_SAMPLES, 12)
    emp = flat.T @ flat / COV_SAMPLES  # (12, 12): index (token, coordinate)
    kappa = field.theory(4).kappa(y @ y.T)  # (3, 3), exact kernel
    expected = dt * torch.kron(kappa, torch.eye(4, dtype=torch.float64))
    se = dt * field.theory(4).kappa1 * math.sqrt(2.0 / COV_SAMPLES)
    assert (emp - expected).abs().max() < COV_TOL_SE * se


def _with_coinciding_tokens(dtype: torch.dtype) -> torch.Tensor:
    y = uniform_sphere(9, 64, batch=(5,), seed=1, dtype=dtype)  # (5, 9, 64)
    y[:, 3], y[:, 7], y[:, 8] = y[:, 0], y[:, 0], y[:, 2]  # tokens 0 = 3 = 7 and 2 = 8
    return y


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_eigh_root_gives_coinciding_tokens_identical_increments(dtype):
    y = _with_coinciding_tokens(dtype)
    z = torch.randn(5, 9, 64, generator=torch.Generator().manual_seed(0), dtype=dtype)
    inc = GaussianField("relu", 0.1, 0.1, root="eigh").apply(y, 0.1, z)  # (5, 9, 64)
    for i, j in ((0, 3), (0, 7), (2, 8)):
        assert torch.equal(inc[:, i], inc[:, j])
    jittered = GaussianField("relu", 0.1, 0.1).apply(y, 0.1, z)  # Cholesky + jitter: independent noise per token
    assert float((jittered[:, 0] - jittered[:, 3]).abs().max()) > 1e-6


def test_eigh_root_is_exact_without_jitter():
    field = GaussianField("relu", 0.1, 0.1, root="eigh")
    for y in (uniform_sphere(12, 16, batch=(3,), seed=2, dtype=torch.float64), _with_coinciding_tokens(torch.float64)):
        k = field.covariance(y)  # (R, N, N); rank 6 for the second set
        r = field.factor(y)
        assert float((r @ r.mT - k).abs().max()) < 1e-13 * field.theory(y.shape[-1]).kappa1


def test_random_feature_covariance_converges_to_kappa():
    d, pts = 5, uniform_sphere(12, 5, seed=1, dtype=torch.float64)  # (12, 5)
    kappa = GaussianField("relu", 0.1, 0.1).covariance(pts)  # (12, 12)
    ms, errs = [64, 512, 4096], []
    for m in ms:
        rms = [
            (RandomFeatureField("relu", m, d, 0.1, 0.1, seed=s, dtype=torch.float64).covariance(pts, pts) - kappa)
            .pow(2)
            .mean()
            for s in range(6)
        ]
        errs.append(math.sqrt(float(torch.stack(rms).mean())))
    slope = (math.log(errs[-1]) - math.log(errs[0])) / (math.log(ms[-1]) - math.log(ms[0]))
    assert errs[0] > errs[1] > errs[2]
    assert abs(slope + 0.5) < RF_SLOPE_TOL


def test_random_feature_field_is_consistent_and_handles_1e5_points():
    field = RandomFeatureField("relu", 256, 3, 0.1, 0.1, seed=2, chunk_elements=1 << 20)
    y = uniform_sphere(100_000, 3, seed=3)  # (1e5, 3)
    z = torch.randn(257, 3, generator=torch.Generator().manual_seed(4))
    full = field.apply(y, 0.01, z)  # (1e5, 3)
    assert full.shape == y.shape and torch.isfinite(full).all()
    sub = field.apply(y[:100], 0.01, z)  # same field at a subset of the points
    torch.testing.assert_close(full[:100], sub, rtol=1e-5, atol=1e-6)
    assert field.variance(y).shape == (100_000, 1)


def test_brownian_path_replays_and_sums_onto_coarse_grids():
    path = BrownianPath((2, 3), 8, seed=7, batch=(2,), dtype=torch.float64)
    fine = list(path.normals(1))
    assert all(torch.equal(a, b) for a, b in zip(fine, path.normals(1)))
    coarse = list(path.normals(4))
    assert len(coarse) == 2
    torch.testing.assert_close(coarse[1], sum(fine[4:8]) / 2.0)
    with pytest.raises(ConfigError):
        list(path.normals(3))


def test_replayed_noise_feeds_the_discrete_model():
    x0 = uniform_sphere(4, 5, batch=(2,), seed=0, dtype=torch.float64)
    field = GaussianField("relu", 0.1, 0.1)
    path = BrownianPath((4, 5), 6, seed=3, batch=(2,), dtype=torch.float64)
    a = StochasticTransformer(6, 1.0, ReplayedNoise(field, path.normals())).run(x0).final
    b = StochasticTransformer(6, 1.0, field).run(x0, seed=3).final  # draws the same normals itself
    torch.testing.assert_close(a, b)


def test_field_bad_input():
    with pytest.raises(ConfigError):
        GaussianField("relu", root="qr")
    with pytest.raises(ConfigError):
        RandomFeatureField("relu", 0, 3)
    with pytest.raises(ConfigError):
        GaussianField("relu", su=-1.0)


KAPPA_TOL = {torch.float64: 1e-13, torch.float32: 1e-6}  # |kappa - KernelTheory.kappa| / kappa(1), closed form
TABLE_TOL = 1e-6  # the same for the interpolated quadrature table (float64 input)


@pytest.mark.parametrize("activation", ["relu", "leaky_relu:0.2", "tanh", "silu"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_field_kappa_matches_the_kernel_theory(activation, dtype):
    """kappa in the tokens' dtype (closed form, or the table for quadrature activations) against the float64
    KernelTheory.kappa, on a fine grid of t that also covers rounding just outside [-1, 1]."""
    field = GaussianField(activation, 0.1, 0.2)
    th = field.theory(7)
    t = torch.linspace(-1.0 - 1e-6, 1.0 + 1e-6, 20001, dtype=torch.float64)
    err = (field.kappa(t.to(dtype), 7).double() - th.kappa(t)).abs().max() / th.kappa1
    tol = KAPPA_TOL[dtype] if th.activation.leak is not None or dtype == torch.float32 else TABLE_TOL
    assert float(err) < tol
    assert field.kappa(t.to(dtype), 7).dtype == dtype


def test_factor_over_blocks_of_runs_equals_one_block(monkeypatch):
    from sdeformer.noise import _fields as noise

    field = GaussianField("relu", 0.1, 0.1)
    y = uniform_sphere(6, 4, batch=(3, 5), seed=8, dtype=torch.float64)  # (3, 5, 6, 4)
    whole = field.factor(y)
    monkeypatch.setattr(noise, "FACTOR_BLOCK", 2 * 36)  # two runs per block
    blocked = field.factor(y)
    assert blocked.shape == (3, 5, 6, 6)
    torch.testing.assert_close(blocked, whole, rtol=0, atol=1e-15)
    torch.testing.assert_close(blocked @ blocked.transpose(-1, -2), field.covariance(y), rtol=0, atol=1e-9)


def test_random_feature_joint_evaluation_equals_separate_calls_in_any_blocks():
    y = uniform_sphere(50, 3, batch=(2,), seed=9, dtype=torch.float64)  # (2, 50, 3)
    z = torch.randn(2, 65, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    ref = RandomFeatureField("relu", 64, 3, 0.1, 0.2, seed=4, batch=(2,), dtype=torch.float64)
    small = RandomFeatureField(
        "relu", 64, 3, 0.1, 0.2, seed=4, batch=(2,), dtype=torch.float64, chunk_elements=64 * 2 * 7
    )  # blocks of 7 points
    inc, var = small.apply_and_variance(y, 0.1, z)
    phi = ref.phi(y)  # (2, 50, 64), unblocked
    torch.testing.assert_close(inc, 0.1**0.5 * (phi @ z[:, :64] / 8.0 + 0.2 * z[:, 64:]))
    torch.testing.assert_close(var, phi.pow(2).mean(-1, keepdim=True) + 0.04)
    torch.testing.assert_close(small.apply(y, 0.1, z), inc)
    torch.testing.assert_close(small.variance(y), var)


def test_every_part_conforms_to_its_protocol():
    """The interfaces of protocols.py: random sources, noise fields, limit fields, replayable fields."""
    from sdeformer.contracts import LimitField, NoiseField, RandomSource, Replayable
    from sdeformer.nn import _BatchDraw
    from sdeformer.noise._gram import GramMLPField
    from sdeformer.noise._mlp import MLPNoise

    assert isinstance(Streams(0, (2,)), RandomSource)
    assert isinstance(_BatchDraw(torch.Generator(), (2,)), RandomSource)
    gaussian, features = GaussianField(), RandomFeatureField("relu", 8, 3)
    for field in (gaussian, features, ReplayedNoise(gaussian, [])):
        assert isinstance(field, LimitField)
    for field in (gaussian, features, GramMLPField("relu", 8)):
        assert isinstance(field, Replayable) and isinstance(field, NoiseField)
    assert isinstance(MLPNoise(), NoiseField) and not isinstance(MLPNoise(), LimitField)


@pytest.mark.parametrize(
    "field",
    [GaussianField("tanh", 0.1, 0.2), RandomFeatureField("relu", 16, 4, 0.1, 0.2, dtype=torch.float64)],
    ids=["gaussian", "random_feature"],
)
def test_increment_and_variance_equals_the_separate_calls(field):
    y = uniform_sphere(5, 4, batch=(2,), seed=3, dtype=torch.float64)  # (2, 5, 4)
    inc, var = field.increment_and_variance(y, 0.1, Streams(6, (2,)))
    torch.testing.assert_close(inc, field.increment(y, 0.1, Streams(6, (2,))), rtol=0, atol=1e-15)
    torch.testing.assert_close(var, field.variance(y), rtol=0, atol=0)


def test_a_zero_bias_std_skips_its_draw_and_changes_no_value():
    """A bias std that is the number 0 adds no bias (``MLPParams`` holds None) and its draw is skipped: every other
    number of the layer is the one a drawn bias leaves (U and W equal those of nonzero stds, for every source),
    and the result equals the MLP written out with its +-0 biases. Wrong models: a skip that does not count the
    draw moves W; a nonzero std skipped changes the value."""
    from sdeformer.core._rng import RNG_KINDS, make_streams
    from sdeformer.core._splitmix import SplitMixStreams
    from sdeformer.noise._mlp import MLPNoise

    y = uniform_sphere(6, 4, batch=(3,), seed=2)  # (3, N, d)
    zero_mlp = MLPNoise("relu", 16, 0.0, 0.0)
    for rng in RNG_KINDS:
        zero = zero_mlp.sample(4, make_streams(rng, [1, 2, 3], (3,)), y)
        drawn = MLPNoise("relu", 16, 0.2, 0.3).sample(4, make_streams(rng, [1, 2, 3], (3,)), y)
        assert zero.bU is None and zero.bW is None and drawn.bU is not None and drawn.bW is not None
        assert torch.equal(zero.U, drawn.U) and torch.equal(zero.W, drawn.W)
        pre = torch.relu((y / 2.0) @ zero.U.transpose(-1, -2) + 0.0 * drawn.bU.unsqueeze(-2))
        written = (pre @ zero.W.transpose(-1, -2)) * (1 / 4.0) + 0.0 * drawn.bW.unsqueeze(-2)
        assert torch.equal(zero_mlp.apply(zero, y), written)

    class Uncounted(SplitMixStreams):
        def skip(self, shape, dtype=torch.float32) -> None:  # the wrong model: the draw not counted
            pass

    uncounted = zero_mlp.sample(4, Uncounted([1, 2, 3], (3,)), y)
    assert not torch.equal(uncounted.W, zero_mlp.sample(4, SplitMixStreams([1, 2, 3], (3,)), y).W)
    mlp = MLPNoise("relu", 16, 0.2, 0.3)
    p = mlp.sample(4, Streams([1, 2, 3], (3,)), y)
    skipped = (torch.relu((y / 2.0) @ p.U.transpose(-1, -2)) @ p.W.transpose(-1, -2)) * (1 / 4.0)
    assert not torch.allclose(mlp.apply(p, y), skipped)
