"""USA attention (BEYOND section 5) by the harmonic sums on S^1 and S^2 (issue 42 item 1: "the unnormalized / USA
variants where the same sums serve"): equal to the exact (N, N) weights in float64, through the part, the config
and the command line; refused where the sums do not serve (a causal mask, explicit matrices)."""

from __future__ import annotations

import json
import math

import pytest
import torch
from typer.testing import CliRunner

from sdeformer.attention._variants import UnnormalizedAttention
from sdeformer.cli import app
from sdeformer.config import ModelConfig
from sdeformer.core._errors import ConfigError


def _tokens(n: int, d: int, seed: int = 0, dtype=torch.float64) -> torch.Tensor:
    x = torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    return x / x.norm(dim=-1, keepdim=True)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("beta", [0.3, 1.0, 4.0, 10.0])
def test_harmonic_usa_equals_the_exact_weights_in_float64(d, beta):
    """Within e^beta 1e-12 (the module's bound e^beta tol with rounding) on spread and clustered tokens. Wrong
    models it fails: the softmax's normalised output (off by the factor D_i / N), a factor e^beta dropped."""
    for x in (_tokens(400, d, seed=d), torch.nn.functional.normalize(_tokens(1, d) + 0.1 * _tokens(400, d), dim=-1)):
        exact = UnnormalizedAttention(beta).drift(x)
        got = UnnormalizedAttention(beta, method="harmonic").drift(x)
        assert (got - exact).abs().max() <= 1e-12 * math.exp(beta)
        assert (got / math.exp(beta) - exact).abs().max() > 1e-3 * exact.abs().max() / math.exp(beta)


def test_scale_batched_runs_and_auto():
    """V = s I scales the output; a batch of runs equals each run alone; ``auto`` takes the sums from its
    measured size and keeps the exact weights below it (the same values either way)."""
    x = torch.stack([_tokens(300, 3, seed=s) for s in range(3)])  # (3, N, d)
    exact = UnnormalizedAttention(2.0, -0.5).drift(x)
    batched = UnnormalizedAttention(2.0, -0.5, method="harmonic").drift(x)
    assert (batched - exact).abs().max() <= 1e-12 * math.exp(2.0)
    for b in range(3):
        assert torch.equal(UnnormalizedAttention(2.0, -0.5, method="harmonic").drift(x[b]), batched[b])
    big = _tokens(8192, 2, seed=5)
    auto = UnnormalizedAttention(1.0, method="auto").drift(big)
    assert (auto - UnnormalizedAttention(1.0).drift(big)).abs().max() <= 1e-12 * math.e


def test_refusals_name_the_parameter():
    with pytest.raises(ConfigError, match="attention_method"):
        UnnormalizedAttention(1.0, method="harmonic", causal=True)
    with pytest.raises(ConfigError, match="attention_method"):
        UnnormalizedAttention(Q=torch.eye(3), method="harmonic")
    assert UnnormalizedAttention(Q=torch.eye(3), method="auto").method == "exact"  # the sums do not serve Q
    with pytest.raises(ConfigError, match="attention_method"):
        UnnormalizedAttention(1.0, method="harmonic").drift(_tokens(10, 4))  # d = 4: no expansion here
    with pytest.raises(ConfigError, match="beta"):  # e^beta beyond float32, as the exact weights' check
        UnnormalizedAttention(100.0, method="harmonic").drift(_tokens(10, 3, dtype=torch.float32))
    with pytest.raises(ConfigError, match="attention_method"):
        ModelConfig(tokens=8, dim=3, attention="l2", attention_method="harmonic")


def test_a_usa_config_and_the_command_line_run_it():
    cfg = ModelConfig(tokens=64, dim=3, attention="usa", attention_method="harmonic", beta=2.0)
    x = _tokens(64, 3, dtype=torch.float32)
    drift = cfg.build().attention.drift(x)
    assert (drift - UnnormalizedAttention(2.0).drift(x)).abs().max() <= 1e-5 * math.exp(2.0)
    args = ["simulate", "--tokens", "64", "--dim", "2", "--layers", "2", "--attention", "usa"]
    res = CliRunner().invoke(app, [*args, "--attention-method", "harmonic", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["attention_method"] == "harmonic"
    res = CliRunner().invoke(app, [*args, "--attention-method", "harmonic", "--causal"])
    assert res.exit_code == 2 and "attention_method" in res.stderr and "Traceback" not in res.output
