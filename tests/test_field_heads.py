"""``heads`` (docs/field.md, "Many heads"): at beta = 0 every head sees the token mean m, so the deviation from
the H -> infinity limit is the mean's, m(l+1) = ((1 + dt) I + dt G_l) m(l) with G_l = (1/H) sum_h V_h, and
E|x_i(L) - x_i^inf(L)|^2 = |m0|^2 [((1 + dt)^2 + dt^2 d sV^2 / H)^L - (1 + dt)^(2L)] exactly (computed here, not
by the experiment). The quick run at beta = 0 is held against it per H. The backward part: with the linear terminal
loss (kappa = 0) the first layer's adjoint is p_0 = A_0^T .. A_{L-1}^T e_1, so E|p_0 - p_0^inf|^2 is the same form with
|m0|^2 -> 1, and the layer average its mean over L - l; and the adjoints (heads replayed one layer at a time) equal
autograd through the whole run with the same draws.

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


def exact_square(s: hd.HeadsSettings, heads: float, norm2: float | None = None, steps: int | None = None) -> float:
    """|m0|^2 (or ``norm2``) [g^L - (1 + dt)^(2L)] over ``steps`` = L layers (fewer: an adjoint deeper in)."""
    m0 = sdf.uniform_sphere(s.tokens, s.dim, seed=s.seed, dtype=torch.float64).mean(0)
    dt, sv2 = s.horizon / s.layers, 1.0 / s.dim  # the resampled-heads part's default sV^2 = 1/d
    growth, n = (1 + dt) ** 2 + dt**2 * s.dim * sv2 / heads, s.layers if steps is None else steps
    return (float(m0 @ m0) if norm2 is None else norm2) * (growth**n - (1 + dt) ** (2 * n))


def within(rms: list[float], hi: list[float], exact: list[float]) -> None:
    """Each mean square within 4 standard errors of its exact value (hi: the square root of the 95 % bound)."""
    for m, h, e in zip(rms, hi, exact):
        se = (h**2 - m**2) / 1.959963984540054  # the mean square's standard error
        assert abs(m**2 - e) < 4 * se, (m**2, e, se)


def test_quick_run_at_beta_zero_against_the_closed_form():
    s = hd.HeadsSettings.quick()
    changes = {"beta": 0.0, "head_beta": 0.0, "seeds": 64, "depth_last": 6, "train_last": 2, "train_steps": 2,
               "curvature": 0.0, "adjoint_last": 3, "power_seeds": 1}  # fmt: skip
    s = hd.HeadsSettings(**{**s.__dict__, **changes})
    r = hd.run(s)
    within(r.deviation, r.deviation_hi, [exact_square(s, h) for h in r.heads])
    within(r.adjoint_deviation, r.adjoint_deviation_hi, [exact_square(s, h, 1.0) for h in r.adjoint_heads])
    layers = [float(np.mean([exact_square(s, h, 1.0, s.layers - n) for n in range(s.layers)])) for h in r.adjoint_heads]
    within(r.adjoint_layers_deviation, r.adjoint_layers_deviation_hi, layers)
    assert r.agrees and r.wrong_rejected and r.holds, (r.slope_lo, r.slope_hi, r.wrong_slope_lo, r.wrong_slope_hi)
    assert r.adjoint_agrees and r.adjoint_wrong_rejected and r.adjoint_catch_rate == 1.0, r.adjoint_slope_lo
    wrong = np.asarray(r.adjoint_wrong_deviation) ** 2 / exact_square(s, 1.0, 1.0)  # backward: H -> 1 as well
    assert np.all(np.abs(wrong - 1) < 0.3), wrong
    wrong = np.asarray(r.wrong_deviation) ** 2 / exact_square(s, 1.0)  # the wrong model: H -> 1 in the closed form
    assert np.all(np.abs(wrong - 1) < 0.25), wrong
    assert r.wrong_slope_lo <= 0.0 <= r.wrong_slope_hi


def test_exact_form_per_seed_mean_is_unbiased():
    from sdeformer.experiments._field._heads_model import deviations

    s = hd.HeadsSettings(beta=0.0, head_beta=0.0, layers=8, seeds=2000)
    for h in (1, 8):
        q = deviations(s, h, s.layers, seed=5).forward
        assert abs(q.mean() - exact_square(s, h)) < 4 * q.std(ddof=1) / math.sqrt(len(q)), (h, q.mean())


def test_replayed_adjoints_equal_autograd_through_the_whole_run():
    """The backward pass recomputes one layer at a time, the heads replayed from the generator's state; it equals
    autograd through one graph of the whole run on the same draws (beta > 0: the attention's Jacobian). Fails: the
    heads not replayed (fresh draws in the backward pass), or p propagated by the Jacobian instead of its transpose."""
    from sdeformer.attention._softmax import softmax_attention
    from sdeformer.experiments._field._heads_model import deviations, terminal
    from sdeformer.noise._heads import ResampledHeads
    from sdeformer.noise._sources import BulkSource

    s, heads, layers = hd.HeadsSettings(seeds=3, beta=1.5, head_beta=2.0, curvature=0.7), 4, 6
    dt = s.horizon / layers
    field, source = ResampledHeads(heads, s.head_beta), BulkSource.seeded(11, (s.seeds,))

    def adjoint(x0: torch.Tensor, noise: bool) -> torch.Tensor:
        x = x0.requires_grad_()
        y = x
        for _ in range(layers):
            heads_term = field.increment(y, dt**2 / heads, source) if noise else 0.0
            y = y + dt * softmax_attention(s.beta * y, y, y) + heads_term
        return torch.autograd.grad(terminal(y, s.curvature), x)[0]

    x0 = sdf.uniform_sphere(s.tokens, s.dim, seed=s.seed, dtype=torch.float64)
    p, p_inf = adjoint(x0.expand(s.seeds, -1, -1).clone(), True), adjoint(x0.clone(), False)  # (S, N, d), (N, d)
    expected = ((p - p_inf) ** 2).sum(-1).mean(-1).numpy()
    got = deviations(s, heads, layers, 11, backward=True)
    assert got.first is not None and got.layers is not None and np.all(got.layers > 0)
    np.testing.assert_allclose(got.first, expected, rtol=1e-10)


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

    tiny = ["last=3", "seeds=16", "layers=16", "depth_last=6", "train_last=2", "train_steps=2", "train_layers=4",
            "adjoint_last=2", "adjoint_seeds=8", "power_seeds=1"]  # fmt: skip
    args = ["heads", "--quick", "--json", "--out", str(tmp_path), *[a for t in tiny for a in ("--set", t)]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{") :])
    assert data["slope_lo"] <= data["slope"] <= data["slope_hi"] and data["heads"] == [1, 2, 4, 8]
    assert data["theory_slope"] == -0.5 and (tmp_path / "heads" / "heads.png").exists()
    assert data["adjoint_heads"] == [1, 2, 4] and data["adjoint_slope_lo"] <= data["adjoint_slope_hi"]
    assert data["adjoint_catch_seeds"] == 1 and 0 <= data["adjoint_false_alarm_rate"] <= 1
    refused = CliRunner().invoke(app, ["heads", "--out", str(tmp_path / "x"), "--set", "depth_last=5"])
    assert refused.exit_code == 2 and "depth_last" in refused.output and "Traceback" not in refused.output
