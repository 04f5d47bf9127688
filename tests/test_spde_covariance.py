"""The noise covariance read from the degree energies (docs/spde.md section 8): the reading recovers the covariance
scale of the solver it runs, the h / h/2 coupling measures the step bias far below the reading's noise, and the
report's check either catches a 10-20 % covariance error with the wrong model's own tolerance or says it cannot."""

import math

import pytest

from sdeformer.checks._power import SIZES
from sdeformer.checks._spde.covariance import covariance_check, covariance_scale


def test_the_reading_recovers_the_covariance_scale_and_the_coupling_resolves_the_step_bias(one_thread):
    right, right_bias = covariance_scale(2, 1.0, 400, 0)
    wrong, wrong_bias = covariance_scale(2, 1.5, 400, 1)
    for est, bias, truth in ((right, right_bias, 1.0), (wrong, wrong_bias, 1.5)):
        assert abs(est.mean - truth) <= 4 * est.se + abs(bias.mean), (est, bias)
        assert bias.se < 0.3 * est.se  # coupled: the bias is resolved far below the reading's s.e.
    assert wrong.mean - right.mean > 3 * math.hypot(right.se, wrong.se)


@pytest.mark.slow
@pytest.mark.parametrize("dim", [2, 3])
def test_the_covariance_check_never_fails_the_right_model_and_says_its_power(dim, one_thread):
    check = covariance_check(dim, quick=True)
    record = check.record()
    assert check.verdict != "fails" and [p.size for p in check.powers] == [0.2, -0.2]  # computed from these
    assert all(p.tolerance is not None and p.tolerance != check.tolerance for p in check.powers)
    assert record["smallest_error_caught"] in SIZES or record["reason"]
