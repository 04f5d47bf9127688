"""``low-temperature`` (docs/field.md, "Low temperature"): W2 between the token law at fixed T and mu_0 (the
zero-temperature push-forward for Q^T K = beta I, V = I) falls like 1/beta with Laplace's constant, below the
abstract's bound rate beta^(-1/2); the escape time grows like beta, not like log beta. The constant kappa is
computed here by quadrature, independently of the closed form the experiment uses.

Wrong models it fails: the bound's rate -1/2 taken as the actual rate (outside the slope's interval), and an
escape time ~ log beta (its slope outside the escape slope's interval).
"""

from __future__ import annotations

import json
import math

import numpy as np
from scipy.integrate import quad

from sdeformer.experiments._field import _low_temperature as lt


def test_kappa_by_quadrature_and_quantiles():
    def score2(a: float) -> float:  # integral of (rho'/rho)^2 rho
        return quad(lambda t: (a * math.sin(t)) ** 2 / (1 + a * math.cos(t)) / (2 * math.pi), -math.pi, math.pi)[0]

    for a in (0.2, 0.5, 0.9):
        assert abs(math.sqrt(score2(a)) - lt.kappa(a)) < 1e-10
    theta = lt.quantile_angles(101, 0.5)
    cdf = [quad(lambda t: (1 + 0.5 * math.cos(t)) / (2 * math.pi), -math.pi, th)[0] for th in theta[::25]]
    assert np.allclose(cdf, (np.arange(101)[::25] + 0.5) / 101, atol=1e-12)
    assert (theta[50] - theta[49]) < (theta[1] - theta[0])  # denser near theta = 0 (a > 0)


def test_w2_circle_is_the_rotation_for_a_rotation():
    theta0 = lt.quantile_angles(64, 0.0)  # uniform: a rotation by 0.01 is a W2 distance of 0.01
    assert abs(float(lt.w2_circle(theta0 + 0.01, theta0)) - 0.01) < 1e-12


def test_slopes_and_the_laplace_constant():
    s = lt.LowTemperatureSettings(tokens=512, first=4, last=7, escape_first=3, escape_last=5)
    result = lt.run(s)
    assert result.agrees and result.bound_rejected, (result.slope, result.slope_lo, result.slope_hi)
    ratio = np.asarray(result.w2) / np.asarray(result.w2_predicted) - 1
    assert np.all(ratio > 0) and 0.4 < ratio[-1] / ratio[-2] < 0.6  # the correction halves as beta doubles
    assert result.escape_agrees and result.log_model_rejected, (result.escape_slope, result.log_model_slope)
    assert result.holds


def test_command_json_names_and_a_bad_setting(tmp_path):
    from typer.testing import CliRunner

    from sdeformer.cli import app

    tiny = ["tokens=256", "last=6", "escape_first=2", "escape_last=4"]
    args = ["low-temperature", "--quick", "--json", "--out", str(tmp_path), *[a for t in tiny for a in ("--set", t)]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{") :])
    assert data["slope_lo"] <= data["slope"] <= data["slope_hi"] and len(data["w2"]) == 3
    refused = CliRunner().invoke(app, ["low-temperature", "--out", str(tmp_path / "x"), "--set", "last=5"])
    assert refused.exit_code == 2 and "last" in refused.output and "Traceback" not in refused.output
