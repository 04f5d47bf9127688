"""Resampled attention heads (BEYOND section 3): zero mean drift, exact covariance at beta = 0, the one-step
moments, and the logistic law of the mean overlap at beta = 0 as d grows."""

import math

import pytest
import torch

from sdeformer.core.errors import ConfigError
from sdeformer.core.sphere import uniform_sphere
from sdeformer.dynamics.discrete import StochasticTransformer
from sdeformer.noise.heads import ResampledHeads
from sdeformer.noise.sources import BulkSource
from sdeformer.theory import checks_heads as ch
from sdeformer.theory.moments import measured_pair_moments, predicted_pair_moments


def test_bad_heads_is_config_error():
    with pytest.raises(ConfigError, match="heads"):
        ResampledHeads(0)


@pytest.mark.parametrize("beta", [0.0, 2.0])
def test_covariance_and_zero_mean(beta):
    draws, f = 40000, ResampledHeads(2, beta)
    x = uniform_sphere(3, 4, seed=0, dtype=torch.float64)
    xi = f.increment(x.expand(draws, 3, 4), 1.0, BulkSource.seeded(0, (draws,)))  # (R, N, d)
    scale = float(f.pair_covariance(x)[0, 0, 0, 0])
    assert xi.mean(0).abs().max() < 6 * math.sqrt(scale / draws)
    emp = torch.einsum("ria,rjb->ijab", xi, xi) / draws
    cov = f.pair_covariance(x, BulkSource.seeded(5, ())) if beta else f.pair_covariance(x)
    assert (emp - cov).abs().max() < 6 * scale * math.sqrt(2 / draws) + (0.02 * scale if beta else 0.0)


def test_one_step_moments_at_beta_zero(float64):
    h, f = 1e-3, ResampledHeads(1, 0.0)
    x = uniform_sphere(3, 6, seed=1, dtype=torch.float64)
    pred = predicted_pair_moments(x, f.pair_covariance(x))
    meas = measured_pair_moments(StochasticTransformer(1, h, noise=f).step, x, h, 20000)
    assert abs(meas.drift.mean - pred.drift) <= 3 * meas.drift.se + 10 * h
    assert abs(meas.variation.mean - pred.variation) <= 3 * meas.variation.se + 10 * h


def test_logistic_law_fast(one_thread):
    for c in ch.logistic_law(32, taus=(1.0, 2.0), eta=0.1, paths=32):
        assert c.holds, c


@pytest.mark.slow
def test_logistic_law_as_d_grows(one_thread):
    dev = {}
    for dim in (32, 128):
        cs = ch.logistic_law(dim, paths=48)
        assert all(c.holds for c in cs), cs
        dev[dim] = max(abs(c.measured - c.predicted) for c in cs)
    assert dev[128] <= dev[32] + 0.01, dev
