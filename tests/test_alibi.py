"""ALiBi (BEYOND section 7): the biased causal softmax, the retrieval-profile formulas of arXiv:2605.09213 as
our code evaluates them, the exact integration-by-parts estimator of the profile, and the turn-over time
against the simulation (slow); configs with common noise batched and in a sweep."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from sdeformer.attention._alibi import ALiBiAttention
from sdeformer.checks._power import COMPUTED, SIZES, Plan
from sdeformer.config import ModelConfig, _batches as engine
from sdeformer.core._errors import ConfigError
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.experiments._architectures import alibi as al
from sdeformer.noise._mlp import MLPNoise
from sdeformer.sweeps import parse_spec, run
from sdeformer.theory import _retrieval as retrieval

F64 = torch.float64


def test_alibi_weights_decay_with_distance_and_respect_causality():
    x = torch.tensor([[1.0, 0.0]], dtype=F64).expand(6, 2)  # equal contents: only the bias differs
    causal, _ = ALiBiAttention(3.0, 1.0, 0.7).weights(x)
    i = 4
    expected = torch.exp(-0.7 * (i - torch.arange(i + 1, dtype=F64)))
    torch.testing.assert_close(causal[i, : i + 1], expected / expected.sum())
    assert bool((causal.triu(1) == 0).all())
    both, _ = ALiBiAttention(3.0, 1.0, 0.7, causal=False).weights(x)
    dist = (torch.arange(6)[:, None] - torch.arange(6)[None, :]).abs().to(F64)
    torch.testing.assert_close(both, torch.softmax(-0.7 * dist, -1))  # |i - j| both ways without the mask
    batched = ALiBiAttention(torch.tensor([1.0, 2.0]), 1.0, torch.tensor([0.0, 0.7]))
    y = uniform_sphere(6, 3, batch=(2,), seed=0, dtype=F64)
    for k, (b, s) in enumerate(((1.0, 0.0), (2.0, 0.7))):
        torch.testing.assert_close(batched.drift(y)[k], ALiBiAttention(b, 1.0, s).drift(y[k]))
    with pytest.raises(ConfigError, match="alibi"):
        ALiBiAttention(1.0, 1.0, -0.1)


def series_psi(c: float, y: float, terms: int = 60) -> float:
    """psi_c(y) = sum_k c^{k+1} y^k / (k! (k+1)!), term by term (the paper's code)."""
    return sum(c ** (k + 1) * y**k / (math.factorial(k) * math.factorial(k + 1)) for k in range(terms))


def test_green_function_is_the_papers_series():
    s = np.array([0.05, 0.3, 0.7, 1.0])
    for a, t, lam in ((0.4, 2.0, 1.0), (1.3, 0.5, 3.0)):
        got = retrieval.green(np.array([a]), t, s, lam)[0]
        y = np.log(np.expm1(lam) / np.expm1(lam * s))
        want = lam * np.exp(lam * s) / np.expm1(lam) * np.array([series_psi(a * t, v) for v in y])
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("beta, lam", [(0.5, 0.5), (1.0, 1.0), (2.0, 3.0)])
@pytest.mark.parametrize("kernel", ["softmax", "paper"])
def test_threshold_is_where_the_recency_end_turns_over(beta, lam, kernel):
    """t_crit in closed form against the sign of the profile's slope at s = 1 (finite differences)."""
    tc = retrieval.threshold(beta, lam, kernel=kernel)

    def end_slope(t: float) -> float:
        s = np.array([1 - 1e-5, 1.0])
        v = retrieval.profile(s, beta, t, lam, kernel=kernel)
        return float(v[1] - v[0])

    assert end_slope(0.98 * tc) > 0 > end_slope(1.02 * tc)
    wrong = 2 * float(retrieval.smoothing(20, 8.0) @ retrieval.mode_rates(beta, 20, kernel))  # (1 - e^-lam) dropped
    wrong /= float(retrieval.smoothing(20, 8.0) @ retrieval.mode_rates(beta, 20, kernel) ** 2)
    assert not end_slope(0.98 * wrong) > 0 > end_slope(1.02 * wrong)


def test_softmax_rates_are_the_papers_divided_by_beta_i0():
    a, b = retrieval.mode_rates(1.5, 6, "softmax"), retrieval.mode_rates(1.5, 6, "paper")
    np.testing.assert_allclose(a * 1.5 * np.i0(1.5), b, rtol=1e-12)


@pytest.mark.parametrize("noise", [None, MLPNoise("relu", 16)])
def test_profile_estimator_is_exact_by_integration_by_parts(noise):
    """Two tokens (token 0 never moves): over a uniform grid of theta_0(0) (an exact quadrature of the periodic
    integrand) the estimator E[K J] equals the direct E[K(theta_1(t) - theta_0(0))], to the finite differences;
    with common noise too (one noise path for the whole grid: the identity holds path by path)."""
    grid = torch.linspace(0, 2 * math.pi, 401, dtype=F64)[:-1]
    theta0 = torch.stack([grid, torch.full_like(grid, 0.3)], -1)  # (B, 2)
    model = StochasticTransformer(40, 2.0, noise=noise, attention=ALiBiAttention(2.0, 1.0, 0.5))
    draws, states = retrieval.measure(model, theta0, [1.0, 2.0], [0], [7] * len(grid))
    est = draws[:, :, 1, 0].mean(1)  # (T,): target 1, source 0
    last = torch.atan2(states[..., 1, 1], states[..., 1, 0])  # (T, B)
    harmonics = torch.arange(1, 21, dtype=F64)
    kern = (torch.as_tensor(retrieval.smoothing(20, 8.0)) * torch.cos(harmonics * (last - grid)[..., None])).sum(-1)
    torch.testing.assert_close(est, kern.mean(1), rtol=0, atol=1e-4)
    assert float(kern.mean(1).abs().max()) > 0.05  # a real correlation, not zeros
    assert not torch.allclose(-est, kern.mean(1), atol=1e-2)  # J of the wrong sign would fail


@pytest.mark.slow
def test_turnover_time_against_simulation():
    times = list(al.REPORT_TIMES)
    full, half = al.alibi_profile(64, 96, times), al.alibi_profile(32, 96, times, seed=1)

    def wrong(s, k):
        return tuple(al.alibi_profile(n, 96, times, lam=1 + s, seed=2 * k + i) for i, n in enumerate((64, 32)))

    check = al.alibi_check(full, half, wrong, COMPUTED)
    record = check.record()
    assert check.accepts(check.measured) and record["wrong_input"]["caught"], record
    assert all(p.tolerance != check.tolerance for p in check.powers) and record["catch_basis"].startswith("computed")
    assert all(p.tolerance is not None and math.isfinite(p.tolerance) for p in check.powers)  # (times from 1.75: NaN)
    assert record["smallest_error_caught"] in SIZES or (record["reason"] and check.verdict == "not resolved")


def _profile(crossing: float, se: float, lam: float = 1.0) -> dict:
    return {"tokens": 64, "samples": 96, "beta": 1.0, "lam": lam, "measured_crossing": crossing,
            "crossing_se": se, "predicted_crossing": 2.586 * lam, "t_crit": 3.1, "paper_crossing": 2.04,
            "unscaled_crossing": 0.05}  # fmt: skip


def test_alibi_wrong_lambda_is_rerun_and_judged_with_its_own_tolerance():
    """The wrong model's crossing against the right prediction, with its own s.e. and token-halving bias: a
    shift of 0.3 (either sign) is caught with a tolerance of 0.2 on every seed, 0.15 is not, nor 0.3 with 1.2."""
    full, half = _profile(2.6, 0.05), _profile(2.65, 0.05)

    def tight(s, k):
        return _profile(2.6 + 1.5 * s, 0.05, 1 + s), _profile(2.6 + 1.5 * s + 0.05, 0.05, 1 + s)

    def loose(s, k):
        return _profile(2.6 + 2 * s, 0.3, 1 + s), _profile(2.6 + 2 * s - 0.3, 0.3, 1 + s)

    caught = al.alibi_check(full, half, tight, Plan(seeds=8))
    assert [p.caught for p in caught.powers] == [False, True, False, True] and caught.smallest_error_caught == 0.2
    assert caught.record()["catch_rate"] == {"0.1": 0.0, "0.2": 1.0, "-0.1": 0.0, "-0.2": 1.0}
    assert caught.predicted == 2.586 and caught.verdict == "holds" and caught.record()["wrong_input"]["caught"]
    missed = al.alibi_check(full, half, loose, Plan(seeds=8))
    assert not any(p.caught for p in missed.powers) and missed.verdict == "not resolved"
    assert missed.record()["size_80"] is None and all(p.tolerance == pytest.approx(1.2) for p in missed.powers)


def test_alibi_configs_run_batched_and_in_a_sweep_with_common_noise(tmp_path):
    base = ModelConfig(tokens=10, dim=3, width=32, layers=6, attention="alibi", causal=True, alibi=0.2, dtype="float64")
    configs = [base.replace(alibi=a, seed=s) for a, s in ((0.0, 0), (0.5, 1))]
    for cfg, traj in zip(configs, engine.run_sweep(configs)):  # one batched run: alibi is a batched field
        torch.testing.assert_close(traj.x, cfg.build().run(cfg.initial_tokens(), cfg.seed).x, rtol=0, atol=1e-12)
    assert engine.group_key(configs[0]) == engine.group_key(configs[1])
    fields = {k: v for k, v in base.to_dict().items() if k not in ("seed", "save_every", "alibi")}
    spec = parse_spec({"name": "alibi", "base": fields, "axes": {"alibi": [0.0, 0.5]}, "seeds": 2,
                       "observables": ["energy"], "times": "final"})  # fmt: skip
    out = run(spec, tmp_path)
    assert out["done"] == 4 and out["error"] == 0
    df = pd.read_parquet(tmp_path / "table")
    assert sorted(set(df["alibi"])) == [0.0, 0.5]
    assert not {"alibi", "mask", "cross"} & set(ModelConfig(tokens=4).to_dict())  # old config hashes unchanged
