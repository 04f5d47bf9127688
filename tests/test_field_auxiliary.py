"""``auxiliary`` (docs/field.md, "Auxiliary variables"): positions as auxiliary variables (the attention part
``positional``) make the token law's long-time limit the push-forward x_i = R_i^T c of the positions' law, not a
point mass (Imaizumi, Koyama, Isobe, Hayashi, arXiv 2605.30229).

The numbers compared here are computed in the test, independently of the experiment's code: the relative-position
form of the drift with explicit rotation matrices, the angles theta_i + phi_i = const of the push-forward on the
circle, the point mass's distance sqrt(2) to N equally spaced points (their mean is 0) and the layer's contraction
1 / (1 + dt) of the deviations. Wrong models it fails: the point-mass prediction (the distance to a point mass
stays sqrt(2), its interval away from 0) and the auxiliary part switched off (its tokens collapse: W2 to the
push-forward sqrt(2)).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from sdeformer.attention import PositionalAttention, SoftmaxAttention
from sdeformer.experiments._field import _auxiliary as aux


def _rotation(d: int, angle: float) -> np.ndarray:
    """R(angle) of the part: plane (2k, 2k + 1) turned by (k + 1) angle."""
    m = np.eye(d)
    for k in range(d // 2):
        c, s = math.cos((k + 1) * angle), math.sin((k + 1) * angle)
        m[2 * k : 2 * k + 2, 2 * k : 2 * k + 2] = [[c, -s], [s, c]]
    return m


@pytest.mark.parametrize("d", [2, 3, 5])
def test_drift_is_the_relative_position_softmax(d):
    n, beta, f = 7, 1.7, 0.6
    x = torch.nn.functional.normalize(
        torch.randn(n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(d))
    )
    phi = 2 * math.pi * f * np.arange(n) / n
    xs, want = x.numpy(), np.zeros((n, d))
    for i in range(n):
        values = [_rotation(d, phi[j] - phi[i]) @ xs[j] for j in range(n)]
        logits = beta * np.array([xs[i] @ v for v in values])
        w = np.exp(logits - logits.max())
        want[i] = sum(wj * v for wj, v in zip(w / w.sum(), values))
    got = PositionalAttention(beta, 1.0, f).drift(x).numpy()
    assert np.abs(got - want).max() < 1e-13
    plain = SoftmaxAttention(beta).drift(x)
    assert torch.allclose(PositionalAttention(beta, 1.0, 0.0).drift(x), plain, atol=1e-15)  # f = 0: switched off


def test_the_maximiser_is_a_fixed_point_with_the_largest_energy():
    part, n, d, beta = PositionalAttention(2.0, 1.0, 1.0), 16, 4, 2.0
    c = torch.nn.functional.normalize(torch.tensor([0.3, -1.0, 0.5, 0.2], dtype=torch.float64), dim=0)
    x = part.maximiser(c, n)  # (N, d)
    assert torch.allclose(x.norm(dim=-1), torch.ones(n, dtype=torch.float64))
    tangent = part.drift(x) - (part.drift(x) * x).sum(-1, keepdim=True) * x
    assert tangent.abs().max() < 1e-14  # a stationary point of every layer
    e_max = math.exp(beta) / (2 * beta)
    assert abs(float(part.energy(x)) - e_max) < 1e-12
    collapsed = c.expand(n, d)  # the point mass: a lower energy once the positions turn
    assert float(part.energy(collapsed)) < 0.5 * e_max
    assert float(PositionalAttention(2.0, 1.0, 0.0).energy(collapsed)) == pytest.approx(e_max)
    half = PositionalAttention(1.0, 1.0, 0.5).maximiser(torch.tensor([1.0, 0.0], dtype=torch.float64), 64)
    # the half circle's mean: |sum_{i < N} e^{i pi i / N}| / N = 1 / (N sin(pi / 2N))
    assert abs(float(half.mean(0).norm()) - 1 / (64 * math.sin(math.pi / 128))) < 1e-14


def test_the_part_through_a_config_and_its_parameter():
    import sdeformer as sdf
    from sdeformer.core._errors import ConfigError
    from sdeformer.testing import check_part

    cfg = sdf.ModelConfig.from_mapping(
        {"attention": "positional", "attention.frequency": 0.5, "tokens": 8, "dim": 3, "layers": 4, "mlp": False}
    )
    assert cfg.value("attention.frequency") == 0.5
    x = cfg.build().run(torch.nn.functional.normalize(torch.randn(8, 3), dim=-1)).x  # (saves, N, d)
    assert x.shape[-2:] == (8, 3) and torch.isfinite(x).all()
    check_part(PositionalAttention(1.0, 1.0, 0.5), entry="attention:positional")
    with pytest.raises(ConfigError, match="frequency"):
        sdf.ModelConfig.from_mapping({"attention": "positional", "attention.frequency": -1.0})


def test_quick_run_against_independent_numbers():
    s = aux.AuxiliarySettings(dim_first=2, dim_last=3, tokens=16, seeds=3, horizon=40.0, layers=120, every=3)
    result = aux.run(s)
    assert result.holds, (result.w2_final_max, result.rate, result.dirac_lo, result.w2_off_final_lo)
    # on the circle the push-forward of N equally spaced positions: theta_i + phi_i = c for every token
    summed = np.mod(np.asarray(result.example_angle) + np.asarray(result.example_position), 2 * math.pi)
    spread = np.angle(np.exp(1j * (summed - summed[0])))
    assert np.abs(spread).max() < 1e-8
    # its distance to any point mass is sqrt(2 - 2 |mean of the N-th roots of unity|) = sqrt(2)
    assert abs(result.dirac["2"] - math.sqrt(2)) < 1e-9 and abs(result.dirac_lo["2"] - math.sqrt(2)) < 1e-6
    # the wrong model (part off) collapses: W2 to the same push-forward is that distance, sqrt(2)
    assert abs(result.w2_off_final["2"] - math.sqrt(2)) < 1e-6 and result.off_fails
    # the layer divides the deviations by 1 + dt: rate ln(1 + dt) / dt
    dt = s.horizon / s.layers
    for k in ("2", "3"):
        assert abs(result.rate[k] - math.log1p(dt) / dt) < 1e-4, result.rate
        assert result.energy_ratio[k] > 1 - 1e-12


def test_command_json_names_and_a_bad_setting(tmp_path):
    from typer.testing import CliRunner

    from sdeformer.cli import app

    tiny = ["dim_last=2", "tokens=12", "seeds=3", "horizon=30", "layers=90", "every=3"]
    args = ["auxiliary", "--quick", "--json", "--out", str(tmp_path), *[a for t in tiny for a in ("--set", t)]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{") :])
    assert data["dims"] == [2] and data["agrees"] and len(data["w2"]["2"]) == 3
    assert (tmp_path / "auxiliary" / "auxiliary.png").stat().st_size > 0
    refused = CliRunner().invoke(app, ["auxiliary", "--out", str(tmp_path / "x"), "--set", "dim_first=3",
                                       "--set", "dim_last=2"])  # fmt: skip
    assert refused.exit_code == 2 and "dim_last" in refused.output and "Traceback" not in refused.output


@pytest.mark.slow
def test_common_noise_breaks_the_push_forward():
    """Beyond the paper: with the common MLP noise the tokens stay away from the push-forward (no claim; the
    setting's verdict is reported, and it fails)."""
    s = aux.AuxiliarySettings(dim_first=2, dim_last=2, tokens=12, seeds=3, horizon=30.0, layers=90, every=3, noise=0.3)
    result = aux.run(s)
    assert not result.agrees and result.w2_final["2"] > 1e-3 and result.noise == 0.3
