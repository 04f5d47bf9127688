"""``observables.loglog_slope``: the least-squares slope of log y against log x, with the rule for points that
have no logarithm (y zero, negative or not finite: left out, nan below two points) and positive x required."""

import math
import warnings

import numpy as np
import pytest

from sdeformer.observables import loglog_slope


def test_a_power_law_gives_its_exponent():
    x = np.array([10.0, 100.0, 1000.0])
    assert loglog_slope(x, 3.0 * x**-0.5) == pytest.approx(-0.5, rel=1e-12)


def test_zeros_are_left_out_without_a_warning():
    """A zero (below resolution) is not a point of the fit: the slope of the others, and no log-of-zero warning."""
    x = [10.0, 100.0, 1000.0, 10000.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert loglog_slope(x, [1.0, 0.1, 0.01, 0.0]) == pytest.approx(-1.0, rel=1e-12)
        assert math.isnan(loglog_slope(x, [0.0, 0.1, -1.0, float("nan")]))  # one point left: no slope


def test_non_positive_x_is_refused():
    with pytest.raises(ValueError, match="x must be positive"):
        loglog_slope([0.0, 1.0], [1.0, 2.0])
