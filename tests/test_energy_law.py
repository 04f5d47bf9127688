"""The interaction energy of N i.i.d. tokens on S^1 (``theory.energy_law``): mean (1 - 1/N) E_beta(mu), sd N^{-1}
for the uniform law (degenerate: rotation invariance) and N^{-1/2} for a von Mises law, the constants included."""

from __future__ import annotations

import math

import pytest
from scipy.special import iv

from sdeformer.theory import energy_law
from sdeformer.theory._energy_law import predicted

TOKENS, RUNS = [50, 200, 800], 400


def test_predicted_law_closed_forms():
    law = predicted(100, 1.0, 0.0)
    assert law["mean"] == pytest.approx(0.99 * (math.e - iv(0, 1.0)) / 2, rel=1e-12)  # (1 - 1/N) E(uniform)
    assert law["sd"] == pytest.approx(math.sqrt(sum(iv(k, 1.0) ** 2 for k in range(1, 40)) * 99 / 100**3), rel=1e-12)
    assert predicted(100, 1.0, 1.0)["exponent"] == -0.5 and predicted(400, 1.0, 1.0)["sd"] == pytest.approx(
        predicted(100, 1.0, 1.0)["sd"] / 2, rel=1e-12
    )


@pytest.mark.parametrize(("kappa", "exponent", "other"), [(0.0, -1.0, -0.5), (1.0, -0.5, -1.0)])
def test_measured_law_matches_the_prediction(kappa, exponent, other):
    out = energy_law(TOKENS, RUNS, beta=1.0, kappa=kappa, seed=3)
    lo, hi = out["interval"]
    assert out["predicted_exponent"] == exponent
    assert lo <= exponent <= hi and not lo <= other <= hi  # the slope tells the two laws apart
    for row in out["rows"]:
        assert abs(row["mean"] - row["predicted_mean"]) <= 5 * row["predicted_sd"] / math.sqrt(RUNS)
        assert row["sd"] == pytest.approx(row["predicted_sd"], rel=0.25)
