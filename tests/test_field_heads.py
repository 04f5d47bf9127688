"""``heads`` (docs/field.md, "Many heads"): at beta = 0 every head sees the token mean m, so the deviation from
the H -> infinity limit is the mean's, m(l+1) = ((1 + dt) I + dt G_l) m(l) with G_l = (1/H) sum_h V_h, and
E|x_i(L) - x_i^inf(L)|^2 = |m0|^2 [((1 + dt)^2 + dt^2 d sV^2 / H)^L - (1 + dt)^(2L)] exactly (computed here, not
by the experiment). The quick run at beta = 0 is held against it per H.

Wrong model it fails: heads scaled 1/sqrt(H) (the deviation does not fall with H): its slope interval excludes
-1/2 and its deviation matches the closed form with H replaced by 1. The training part: AdamW lowers the loss,
and the trained states spread less over initialisations with more heads.
"""

from __future__ import annotations

import json
import math

import numpy as np
import torch

import sdeformer as sdf
from sdeformer.experiments._field import _heads as hd


def exact_square(s: hd.HeadsSettings, heads: float) -> float:
    m0 = sdf.uniform_sphere(s.tokens, s.dim, seed=s.seed, dtype=torch.float64).mean(0)
    dt, sv2 = s.horizon / s.layers, 1.0 / s.dim  # the resampled-heads part's default sV^2 = 1/d
    growth = (1 + dt) ** 2 + dt**2 * s.dim * sv2 / heads
    return float(m0 @ m0) * (growth**s.layers - (1 + dt) ** (2 * s.layers))


def test_quick_run_at_beta_zero_against_the_closed_form():
    s = hd.HeadsSettings.quick()
    changes = {"beta": 0.0, "head_beta": 0.0, "seeds": 64, "depth_last": 6, "train_last": 2, "train_steps": 2}
    s = hd.HeadsSettings(**{**s.__dict__, **changes})
    r = hd.run(s)
    for h, rms, hi in zip(r.heads, r.deviation, r.deviation_hi):
        se = (hi**2 - rms**2) / 1.959963984540054  # the mean square's standard error
        assert abs(rms**2 - exact_square(s, h)) < 4 * se, (h, rms**2, exact_square(s, h), se)
    assert r.agrees and r.wrong_rejected and r.holds, (r.slope_lo, r.slope_hi, r.wrong_slope_lo, r.wrong_slope_hi)
    wrong = np.asarray(r.wrong_deviation) ** 2 / exact_square(s, 1.0)  # the wrong model: H -> 1 in the closed form
    assert np.all(np.abs(wrong - 1) < 0.25), wrong
    assert r.wrong_slope_lo <= 0.0 <= r.wrong_slope_hi


def test_exact_form_per_seed_mean_is_unbiased():
    s = hd.HeadsSettings(beta=0.0, head_beta=0.0, layers=8, seeds=2000)
    for h in (1, 8):
        q = hd.squared_deviations(s, h, s.layers, seed=5)
        assert abs(q.mean() - exact_square(s, h)) < 4 * q.std(ddof=1) / math.sqrt(len(q)), (h, q.mean())


def test_training_lowers_the_loss_and_more_heads_spread_less():
    """The training part: AdamW lowers the loss; the trained hidden states' spread over initialisations is smaller
    with 16 heads than with one (H^-1/2 predicts 4x; asserted > 2x)."""
    from sdeformer.experiments._field._heads_training import spread

    def run(heads: int, steps: int):
        return spread(4, 6, 1.0, 4, 1.0, heads, 8, steps, 0.05, 0.01, 4, 3)

    _, before = run(2, 0)
    _, after = run(2, 15)
    assert after < 0.8 * before, (before, after)
    one, _ = run(1, 15)
    many, _ = run(16, 15)
    assert one.mean() > 4 * many.mean(), (one.mean(), many.mean())  # squares: 16x predicted


def test_command_json_names_and_a_bad_setting(tmp_path):
    from typer.testing import CliRunner

    from sdeformer.cli import app

    tiny = ["last=3", "seeds=16", "layers=16", "depth_last=6", "train_last=2", "train_steps=2", "train_layers=4"]
    args = ["heads", "--quick", "--json", "--out", str(tmp_path), *[a for t in tiny for a in ("--set", t)]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{") :])
    assert data["slope_lo"] <= data["slope"] <= data["slope_hi"] and data["heads"] == [1, 2, 4, 8]
    assert data["theory_slope"] == -0.5 and (tmp_path / "heads" / "heads.png").exists()
    refused = CliRunner().invoke(app, ["heads", "--out", str(tmp_path / "x"), "--set", "depth_last=5"])
    assert refused.exit_code == 2 and "depth_last" in refused.output and "Traceback" not in refused.output
