"""Softmax attention on S^1 and S^2 by harmonic expansion (issue 42): equal to exact float64 attention, the
truncation bound as stated, per-run beta (batched equals unbatched), one-line refusals."""

from __future__ import annotations

import math

import pytest
import torch

from sdeformer._harmonics import _expanded, degree, features, harmonic_energy_sum, weights
from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.config import ModelConfig
from sdeformer.core._errors import ConfigError


def _tokens(n: int, d: int, seed: int = 0) -> torch.Tensor:
    x = torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return x / x.norm(dim=-1, keepdim=True)


def _exact(x: torch.Tensor, beta: float) -> torch.Tensor:
    return torch.softmax(beta * (x @ x.mT), -1) @ x


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("beta", [0.3, 1.0, 4.0, 10.0])
def test_harmonic_attention_equals_exact_float64_attention(d, beta):
    """A wrong weight (I_k for 2 I_k), a missing degree or a wrong harmonic normalisation moves it by >= 1e-3."""
    x = _tokens(400, d, seed=d)
    got = SoftmaxAttention(beta, method="harmonic").drift(x)
    assert (got - _exact(x, beta)).abs().max() <= 1e-12
    clustered = torch.nn.functional.normalize(x[:1] + 0.1 * x, dim=-1)  # a tight cluster: large weights
    got = SoftmaxAttention(beta, method="harmonic").drift(clustered)
    assert (got - _exact(clustered, beta)).abs().max() <= 1e-12


@pytest.mark.parametrize("d", [2, 3])
def test_the_truncation_bound_holds_and_is_not_vacuous(d):
    """Truncated at tol = 1e-6, every scaled weight e^{beta (<u, v> - 1)} is within tol; one degree fewer is not."""
    u, v = _tokens(300, d, seed=1), _tokens(300, d, seed=2)
    exact = torch.exp(3.0 * (u @ v.T - 1))
    w = weights(d, 3.0, 1e-6)
    big = len(w) - 1

    def kernel(ws: torch.Tensor) -> torch.Tensor:
        k = len(ws) - 1
        return (features(u, k) * _expanded(ws, d)) @ features(v, k).T

    assert (kernel(w) - exact).abs().max() <= 1e-6
    assert (kernel(w[:-1]) - exact).abs().max() > 1e-9  # the last degree counted
    assert degree(d, 3.0, 1e-6) == big < degree(d, 3.0) < degree(d, 30.0)


def test_per_run_beta_batched_equals_unbatched():
    x = torch.stack([_tokens(200, 3, seed=s) for s in range(3)])  # (3, N, d)
    beta = torch.tensor([0.5, 2.0, 8.0])
    batched = SoftmaxAttention(beta, scale=torch.tensor([1.0, -1.0, 2.0]), method="harmonic").drift(x)
    for b in range(3):
        one = SoftmaxAttention(float(beta[b]), scale=[1.0, -1.0, 2.0][b], method="harmonic").drift(x[b])
        assert torch.equal(batched[b], one)
        assert (one - [1.0, -1.0, 2.0][b] * _exact(x[b], float(beta[b]))).abs().max() <= 1e-12


def test_float32_tokens_come_back_float32_within_their_rounding():
    x = _tokens(300, 2).float()
    got = SoftmaxAttention(2.0, method="harmonic").drift(x)
    assert got.dtype == torch.float32
    assert (got.double() - _exact(x.double(), 2.0)).abs().max() <= 1e-6


@pytest.mark.parametrize("d", [2, 3])
def test_the_energy_from_the_same_sums(d):
    x = _tokens(300, d)
    want = torch.exp(2.0 * (x @ x.T - 1)).mean()  # (1 / N^2) sum e^{beta (cos - 1)}, BEYOND section 10
    assert abs(float(harmonic_energy_sum(x, 2.0)) - float(want)) <= 1e-13


def test_auto_keeps_exact_where_harmonic_does_not_apply():
    x = _tokens(50, 5)
    assert torch.equal(SoftmaxAttention(1.0, method="auto").drift(x), SoftmaxAttention(1.0).drift(x))
    m = torch.eye(2)
    assert SoftmaxAttention(Q=m, K=m, method="auto").method == "exact"


def test_bad_methods_are_refused_naming_the_parameter():
    with pytest.raises(ConfigError, match="attention_method"):
        SoftmaxAttention(1.0, method="fast")
    with pytest.raises(ConfigError, match="attention_method"):
        SoftmaxAttention(1.0, method="harmonic").drift(_tokens(10, 4))
    with pytest.raises(ConfigError, match="attention_method"):
        SoftmaxAttention(Q=torch.eye(2), method="harmonic")
    with pytest.raises(ConfigError, match="attention_method"):
        ModelConfig(dim=64, attention_method="harmonic")
    with pytest.raises(ConfigError, match="attention_method"):
        ModelConfig(dim=2, attention="l2", attention_method="harmonic")  # USA's are test_attention_harmonic_usa's
    assert ModelConfig(dim=2, attention_method="harmonic").to_dict()["attention_method"] == "harmonic"
    assert "attention_method" not in ModelConfig().to_dict()  # the default keeps older runs' hashes
    assert math.isfinite(degree(2, 500.0))


def test_auto_picks_harmonic_from_its_measured_threshold_and_simulate_reports_it():
    from sdeformer.attention._harmonic import picks_harmonic
    from sdeformer.experiments._simulate import memory_estimate, simulate

    assert picks_harmonic("auto", 1000, 2, 1.0) and not picks_harmonic("auto", 500, 2, 1.0)  # F = 29 at beta = 1
    assert picks_harmonic("auto", 4_000, 3, 1.0) and not picks_harmonic("auto", 3_000, 3, 1.0)  # F = 225
    assert not picks_harmonic("exact", 10**6, 2, 1.0) and not picks_harmonic("auto", 10**6, 4, 1.0)
    cfg = ModelConfig(tokens=1000, dim=2, width=16, layers=1, attention_method="auto")
    result = simulate(cfg).to_json()
    assert result["attention_method"] == "harmonic" and result["memory_estimate_bytes"] == memory_estimate(cfg)
    assert simulate(ModelConfig(tokens=8, dim=2, width=16, layers=1)).attention_method == "exact"
