"""``context-chaos`` (docs/field.md, "Propagation of chaos in context length"): the deviation's slope against n
contains -1/2 and excludes the general-map rate -1/d; the infinite-context token does not move (the uniform
context's attention field is normal to the sphere), computed here independently."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.integrate import quad

from sdeformer.experiments._field import _context_chaos as cc


def test_uniform_context_field_is_normal_to_the_sphere():
    """E[e^{beta <x, y>} y] for y uniform on S^{d-1} is c x with c > 0 (its part orthogonal to x is odd under the
    reflection fixing x, so zero; c by quadrature over t = <x, y>): the infinite-context token stays put, which
    the experiment measures its deviation from; a context of 16 tokens moves it by far more than one of 1,024."""
    d, beta = 4, 2.0
    dens = lambda t: (1 - t * t) ** ((d - 3) / 2)
    along = quad(lambda t: t * math.exp(beta * t) * dens(t), -1, 1)[0]
    assert along > 0
    settings = cc.ContextChaosSettings(layers=4, contexts=16)
    assert cc.deviations(settings, 16, 0).mean() > 4 * cc.deviations(settings, 1024, 1).mean()


def test_slope_is_minus_one_half_and_rejects_minus_one_over_d():
    settings = cc.ContextChaosSettings(layers=8, first=5, last=9, contexts=24, train_last=7, train_steps=3)
    result = cc.run(settings)
    assert result.agrees and result.wrong_rejected, (result.slope, result.slope_lo, result.slope_hi)
    assert result.backward_agrees, (result.backward_slope, result.backward_slope_lo, result.backward_slope_hi)
    assert result.backward_deviation[0] > 1.2 * result.backward_deviation[-1]  # 4 times the context: ~2x closer
    assert result.holds  # the check: both parts


def test_command_json_names(tmp_path):
    from typer.testing import CliRunner

    from sdeformer.cli import app

    args = ["context-chaos", "--quick", "--json", "--out", str(tmp_path), "--set", "first=5", "--set", "last=7",
            "--set", "layers=4", "--set", "train_last=7", "--set", "train_steps=2", "--set", "contexts=8"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{") :])
    assert {"slope", "slope_lo", "slope_hi"} <= set(data) and data["slope_lo"] <= data["slope"] <= data["slope_hi"]
    assert np.isfinite(data["slope"])
    refused = CliRunner().invoke(app, ["context-chaos", "--out", str(tmp_path / "x"), "--set", "last=6"])
    assert refused.exit_code == 2 and "last" in refused.output and "Traceback" not in refused.output


@pytest.mark.parametrize("values,expected", [([0.1, 0.3, 0.5], 2.5), ([0.1, 0.2, 0.3], None)])
def test_crossing(values, expected):
    from sdeformer.experiments._field._independent_noise import crossing

    assert crossing([1.0, 2.0, 3.0], values, 0.4) == expected
