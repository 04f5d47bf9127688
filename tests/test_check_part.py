"""``sdeformer.testing.check_part``: every built-in and the plugin's parts pass; a part 10 % wrong in the
quantity a check is about, or breaking a contract, fails it (the power of each check)."""

from __future__ import annotations

import pytest
import torch

import sdeformer as sdf
from sdeformer.noise import QuadraticForm, ResampledHeads
from sdeformer.testing import PartCheckError, check_params, check_part

BUILT_IN = {
    "gaussian": lambda: sdf.GaussianField("relu", su=0.1, sw=0.1),
    "mlp": lambda: sdf.MLPNoise("tanh", 64, su=0.1, sw=0.2),
    "value": lambda: sdf.ValueNoise(beta=1.0),
    "heads": lambda: ResampledHeads(beta=1.0),
    "quadratic": lambda: QuadraticForm(),
    "partial": lambda: sdf.PartialNoise(sdf.GaussianField("relu"), 0.3),
    "softmax": lambda: sdf.SoftmaxAttention(beta=2.0),
}


@pytest.mark.parametrize("name", list(BUILT_IN))
def test_the_family_passes(name):
    assert check_part(BUILT_IN[name](), copies=20000)


def test_the_plugins_parts_pass(plugin_parts):
    for part in (
        plugin_parts.HalfGaussian("relu", 0.1, 0.1),
        plugin_parts.ShiftedSoftmax(1.0, 1.0),
        plugin_parts.order,
    ):
        assert check_part(part, copies=20000)


class Scaled(sdf.GaussianField):
    """The Gaussian field whose declared moments are off by ``factor`` in one method (a 10 % error)."""

    def __init__(self, method: str, factor: float = 1.1):
        super().__init__("relu", 0.1, 0.1)
        self.wrong_method, self.wrong_factor = method, factor

    def variance(self, y):
        return super().variance(y) * (self.wrong_factor if self.wrong_method == "variance" else 1.0)

    def pair_covariance(self, x):
        return super().pair_covariance(x) * (self.wrong_factor if self.wrong_method == "pair_covariance" else 1.0)

    def one_point(self, y, dt, source):
        return super().one_point(y, dt * (self.wrong_factor if self.wrong_method == "one_point" else 1.0), source)


@pytest.mark.parametrize("method", ["variance", "pair_covariance", "one_point"])
@pytest.mark.parametrize("factor", [1.1, 0.9])
def test_a_10_percent_error_in_a_declared_moment_fails(method, factor):
    with pytest.raises(PartCheckError, match=method):
        check_part(Scaled(method, factor), copies=20000)


class GlobalRandom(sdf.GaussianField):
    """Draws from torch's global generator, not the run's source: batched no longer equals unbatched."""

    def increment(self, y, dt, source):
        return torch.randn(y.shape, dtype=y.dtype) * dt**0.5


class WrongShape(sdf.SoftmaxAttention):
    def drift(self, x, source=None):
        return super().drift(x).mean(-2)  # (..., d): one drift for all tokens


def test_contract_breaches_fail_naming_the_check():
    with pytest.raises(PartCheckError, match="batched equals unbatched"):
        check_part(GlobalRandom())
    with pytest.raises(PartCheckError, match="drift: shape"):
        check_part(WrongShape(beta=1.0))
    with pytest.raises(TypeError, match="no part"):
        check_part(object())


def test_declared_parameters_are_checked(plugin_parts):
    ran = check_part(plugin_parts.HalfGaussian("relu", 0.1, 0.1), entry="noise:half_gaussian", copies=20000)
    assert "noise.fraction: default builds; NaN, wrong type, below low, above high refused" in ran
    ran = check_part(plugin_parts.ShiftedSoftmax(1.0, 1.0), entry="attention:shifted_softmax")
    assert "attention.shift: default builds; NaN, wrong type, below low refused" in ran
    # the fields it reads are parameters it declares, checked alike (under their KIND.NAME names)
    assert "attention.scale: default builds; NaN, wrong type refused" in ran
    assert "noise.su: default builds; NaN, wrong type, below low refused" in check_part(
        plugin_parts.HalfGaussian("relu", 0.1, 0.1), entry="noise:half_gaussian", copies=200
    )


def test_a_declared_range_the_config_does_not_enforce_fails(plugin_parts, monkeypatch):
    """The power of the parameter check: declared ranges that the config does not enforce (``Param.check``
    accepting anything) are caught."""
    from sdeformer.params import Param

    monkeypatch.setattr(Param, "check", lambda self, key, value: value)
    # (NaN is refused by the config for every key; the wrong type is what the declaration alone refuses)
    with pytest.raises(PartCheckError, match="noise.fraction: wrong type"):
        check_params("noise", "half_gaussian")
