"""Every noise model's limit SDE (``sde.LimitSDE`` with the model's ``variance`` = tr(P C_ii) / (d - 1)) has the
one-step pair moments of BEYOND section 0, with and without attention, and runs with the attention variants."""

import pytest
import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._sde import LimitSDE, make_solver
from sdeformer.noise import PartialNoise, QuadraticForm, ResampledHeads, Scaled, ValueNoise
from sdeformer.noise._covariance import pair_covariance
from sdeformer.noise._fields import GaussianField
from sdeformer.theory._moments import measured_pair_moments, predicted_pair_moments
from sdeformer.theory._montecarlo import Estimate

MODELS = {
    "partial": lambda: PartialNoise(GaussianField("relu", 0.1, 0.1), 0.7),
    "value": lambda: ValueNoise(2.0),
    "quadratic_forced": lambda: QuadraticForm(0.5),
    "heads_beta0": lambda: ResampledHeads(2, 0.0),
    "scaled_quadratic": lambda: Scaled(QuadraticForm(), 0.3),
}
H, COPIES = 1e-3, 20000


@pytest.mark.parametrize("attention", [None, SoftmaxAttention(1.0)])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_sde_step_has_beyond_0_moments(name, attention, float64):
    field = MODELS[name]()
    x = uniform_sphere(3, 5, seed=4, dtype=torch.float64)
    drift = None if attention is None else attention.drift(x)
    pred = predicted_pair_moments(x, pair_covariance(field, x), drift)
    step = make_solver(LimitSDE(field, attention), 1, H).step
    meas = measured_pair_moments(step, x, H, COPIES)
    assert isinstance(pred.drift, float) and isinstance(pred.variation, float)  # predicted
    assert isinstance(meas.drift, Estimate) and isinstance(meas.variation, Estimate)  # measured
    slack = 20 * H * (1 + abs(pred.drift) + pred.variation)
    assert abs(meas.drift.mean - pred.drift) <= 3 * meas.drift.se + slack, (pred, meas)
    assert abs(meas.variation.mean - pred.variation) <= 3 * meas.variation.se + slack, (pred, meas)
