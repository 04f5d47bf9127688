"""The Brownian fields of THEORY section 3: covariance, random-feature convergence, replay, scale."""

import math

import pytest
import torch

from sdeformer.discrete import StochasticTransformer
from sdeformer.errors import ConfigError
from sdeformer.experiments.rates import torch_threads
from sdeformer.noise import BrownianPath, GaussianField, RandomFeatureField, ReplayedNoise
from sdeformer.rng import Streams
from sdeformer.sphere import uniform_sphere

COV_SAMPLES = 20000
COV_TOL_SE = 5.0  # tolerance in standard errors of a covariance estimate
RF_SLOPE_TOL = 0.15  # |slope + 1/2| for the random-feature covariance error against M


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):
        yield


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_gaussian_increment_covariance_is_dt_kappa(activation):
    field = GaussianField(activation, 0.1, 0.1)
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


def test_random_feature_covariance_converges_to_kappa():
    d, pts = 5, uniform_sphere(12, 5, seed=1, dtype=torch.float64)  # (12, 5)
    kappa = GaussianField("relu", 0.1, 0.1).covariance(pts)  # (12, 12)
    ms, errs = [64, 512, 4096], []
    for m in ms:
        rms = [(RandomFeatureField("relu", m, d, 0.1, 0.1, seed=s, dtype=torch.float64).covariance(pts, pts)
                - kappa).pow(2).mean() for s in range(6)]
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
