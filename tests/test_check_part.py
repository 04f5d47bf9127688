"""``sdeformer.testing.check_part``: every built-in and the plugin's parts pass; a part 10 % wrong in the
quantity a check is about, or breaking a contract, fails it (the power of each check)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

import sdeformer as sdf
from sdeformer.registry import load_plugins
from sdeformer.testing import PartCheckError, check_part

load_plugins([str(Path(__file__).with_name("plugin_parts.py"))])  # as `--plugin FILE` loads it (registers once)
_plugin = sys.modules["sdeformer_plugin_plugin_parts"]
HalfGaussian, ShiftedSoftmax, order = _plugin.HalfGaussian, _plugin.ShiftedSoftmax, _plugin.order


@pytest.mark.parametrize(
    "part",
    [
        sdf.GaussianField("relu", su=0.1, sw=0.1),
        sdf.MLPNoise("tanh", 64, su=0.1, sw=0.2),
        sdf.ValueNoise(beta=1.0),
        sdf.ResampledHeads(beta=1.0),
        sdf.QuadraticForm(),
        sdf.PartialNoise(sdf.GaussianField("relu"), 0.3),
        sdf.SoftmaxAttention(beta=2.0),
        HalfGaussian("relu", 0.1, 0.1),
        ShiftedSoftmax(1.0, 1.0),
        order,
    ],
    ids=lambda p: getattr(p, "__name__", type(p).__name__),
)
def test_the_family_and_the_plugin_pass(part):
    assert check_part(part, copies=20000)


class Scaled(HalfGaussian):
    """HalfGaussian whose declared moments are off by ``factor`` in one method (a 10 % error)."""

    def __init__(self, method: str, factor: float = 1.1):
        super().__init__("relu", 0.1, 0.1)
        self.method, self.factor = method, factor

    def variance(self, y):
        return super().variance(y) * (self.factor if self.method == "variance" else 1.0)

    def pair_covariance(self, x):
        return super().pair_covariance(x) * (self.factor if self.method == "pair_covariance" else 1.0)

    def one_point(self, y, dt, source):
        return super().one_point(y, dt * (self.factor if self.method == "one_point" else 1.0), source)


@pytest.mark.parametrize("method", ["variance", "pair_covariance", "one_point"])
@pytest.mark.parametrize("factor", [1.1, 0.9])
def test_a_10_percent_error_in_a_declared_moment_fails(method, factor):
    with pytest.raises(PartCheckError, match=method):
        check_part(Scaled(method, factor), copies=20000)


class GlobalRandom(HalfGaussian):
    """Draws from torch's global generator, not the run's source: batched no longer equals unbatched."""

    def increment(self, y, dt, source):
        return torch.randn(y.shape, dtype=y.dtype) * dt**0.5


class WrongShape(ShiftedSoftmax):
    def drift(self, x, source=None):
        return super().drift(x).mean(-2)  # (..., d): one drift for all tokens


def test_contract_breaches_fail_naming_the_check():
    with pytest.raises(PartCheckError, match="batched equals unbatched"):
        check_part(GlobalRandom())
    with pytest.raises(PartCheckError, match="drift: shape"):
        check_part(WrongShape(1.0, 1.0))
    with pytest.raises(TypeError, match="no part"):
        check_part(object())
