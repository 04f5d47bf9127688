"""Convergence rates of THEORY section 5 at a small scale (coupled noise, float64, fixed seeds)."""

import pytest

from sdeformer.errors import ConfigError
from sdeformer.experiments import rates

SLOPE_TOL = 0.2  # |measured log-log slope - theory| for depth and width
KEYS = {"kind", "x", "error", "slope", "slope_ci", "expected_slope"}


@pytest.mark.parametrize("kind", ["depth", "width"])
def test_depth_and_width_slopes_match_theory(kind):
    result = rates.measure(kind, quick=True)
    assert set(result.to_json()) >= KEYS
    assert abs(result.slope - result.expected_slope) < SLOPE_TOL, result.summary()
    lo, hi = result.slope_ci
    assert lo <= result.slope <= hi


def test_tokens_error_decreases_with_n():
    result = rates.measure("tokens", quick=True, x=[8, 64])
    assert result.expected_slope == -0.5  # d = 3: r_d(N) = N^{-1/2}
    assert result.error[1] < result.error[0]


def test_rates_bad_input():
    with pytest.raises(ConfigError):
        rates.settings_for("breadth")
    with pytest.raises(ConfigError):
        rates.settings_for("depth", runs=1)
    with pytest.raises(ConfigError):
        rates.measure("depth", quick=True, x=[3], fine=256)
    with pytest.raises(ConfigError):
        rates.measure("tokens", quick=True, x=[8, 512])
