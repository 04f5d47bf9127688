"""The step-size rule (``dynamics._step_guard``): (d-1) f^2 k dt and f dt beta |s| outside the explicit schemes'
range warn once (f the normalization scheme's speed, beta and |s| read from any attention's scales and matrices);
the density solver then reports the whole run below resolution."""

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from sdeformer.attention._softmax import MultiHeadAttention, RandomBatchAttention, SoftmaxAttention
from sdeformer.dynamics._sde import LimitSDE, make_solver
from sdeformer.dynamics._step_guard import ATTENTION_LIMIT, NOISE_LIMIT, attention_scales, check_step, step_ratios
from sdeformer.experiments._spde.run import SpdeSettings, run_spde
from sdeformer.noise._fields import GaussianField
from sdeformer.spde._attention import KernelAttention
from sdeformer.spde._diagnostics import resolution
from sdeformer.spde._fields import mlp_noise


def test_ratios_follow_the_rule():
    att = KernelAttention(3, beta=4.0, scale=0.5)
    q, a = step_ratios(3, 0.25, 0.1, att)
    assert q == pytest.approx(2 * 0.25 * 0.1) and a == pytest.approx(0.1 * 4.0 * 0.5)
    assert step_ratios(2, torch.tensor([[0.5], [2.0]]), 0.5)[0] == pytest.approx(1.0)  # the largest token's k
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not check_step(3, NOISE_LIMIT / 2, 1.0, KernelAttention(3, beta=ATTENTION_LIMIT))
    with pytest.warns(RuntimeWarning, match="saturates the step"):
        assert check_step(3, 0.0, 1.0, KernelAttention(3, beta=2 * ATTENTION_LIMIT))
    with pytest.warns(RuntimeWarning, match=r"\(d-1\) f\^2 k dt"):
        assert check_step(2, 3 * NOISE_LIMIT, 1.0)


def test_sde_solver_warns_on_its_first_step_only():
    field = mlp_noise(3, "relu", 0.5, 0.5, 2, scale=30.0)  # k about 900 x kappa(1)
    solver = make_solver(LimitSDE(field, None), 4, 1.0)
    x = torch.nn.functional.normalize(torch.randn(1, 8, 3, dtype=torch.float64), dim=-1)
    with pytest.warns(RuntimeWarning) as record:
        solver.run(x)
    assert len([w for w in record if "saturates" in str(w.message)]) == 1
    fine = make_solver(LimitSDE(mlp_noise(3, "relu", 0.5, 0.5, 2, scale=0.3), None), 100, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fine.run(x)


def test_a_saturated_density_run_is_below_resolution_from_the_first_step():
    """Large noise in 4 steps: the tail can look small, but the run is marked below resolution at t = dt."""
    with pytest.warns(RuntimeWarning, match="saturates"):
        run = run_spde(SpdeSettings(noise_scale=1e3, steps=4, modes=16))
    assert run.resolution["first_unresolved_time"] == pytest.approx(0.5)
    assert run.arrays["resolved"][0] and not run.arrays["resolved"][1:].any()
    assert "below resolution from t = 0.5" in run.summary()


def test_resolution_with_a_saturated_step_keeps_only_the_start():
    t = np.array([0.0, 0.5, 1.0])
    verdict = resolution(t, np.zeros(3), saturated=0.5)
    assert verdict.resolved.tolist() == [True, False, False] and verdict.first_unresolved == 0.5
    assert resolution(t, np.zeros(3)).first_unresolved is None


FIELD = GaussianField("relu", 0.3, 0.3)  # k = 0.30 in d = 3: (d-1) k dt = 0.60 at dt = 1, inside the range


def saturated(norm, radius: float = 1.0, steps: int = 1, attention=None, scheme: str = "projected") -> int:
    """How many saturation warnings one run of the limit SDE of ``norm`` gives from tokens of norm ``radius``."""
    x = radius * torch.nn.functional.normalize(torch.randn(2, 6, 3, dtype=torch.float64), dim=-1)
    field = None if scheme in ("geodesic", "rk4") else FIELD
    solver = make_solver(LimitSDE(field, attention, norm, horizon=float(steps)), steps, float(steps), scheme)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        solver.run(x, seed=1)
    return sum("saturates the step" in str(w.message) for w in seen)


@pytest.mark.parametrize("scheme", ["projected", "euler"])
def test_every_scheme_reads_its_speed(scheme):
    """Post-LN moves at f = 1: inside the range; Pre- and Peri-LN at 1 / r: outside from r = 1/2 (q = 4 x 0.60,
    Peri-LN's normalized field 4 x (d-1)/d); nGPT at alpha: outside at alpha = 2, inside at alpha = 1."""
    assert saturated(None, 0.5) == saturated("pre") == saturated("peri") == saturated("ngpt:1") == 0
    assert saturated("pre", 0.5) == saturated("peri", 0.5) == saturated("ngpt:2") == 1
    assert saturated("sqrt", 0.5) == 0  # f = 1 / sqrt(1 + t) <= 1, and no radius


def test_mix_ln_is_checked_in_each_phase():
    """Mix-LN is Post-LN before its switch (checked there) and Pre-LN after (checked again at the switch)."""
    q = step_ratios(3, FIELD.variance(torch.eye(3, dtype=torch.float64)), 1.0)[0]
    assert q < NOISE_LIMIT < 4 * q  # one step of dt = 1 is inside the range at r = 1, outside at r = 1/2
    assert saturated("mix:0.5", 1.0, steps=4) == 0
    strong = GaussianField("relu", 1.0, 1.0)
    x = torch.nn.functional.normalize(torch.randn(1, 6, 3, dtype=torch.float64), dim=-1)
    solver = make_solver(LimitSDE(strong, None, "mix:0.5", horizon=4.0), 4, 4.0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        solver.run(x, seed=1)
    assert sum("saturates the step" in str(w.message) for w in seen) == 2  # once per phase, not per step


def test_attention_scales_come_from_matrices_heads_and_wrappers():
    eye = torch.eye(3, dtype=torch.float64)
    assert attention_scales(SoftmaxAttention(2.0, 0.5)) == (2.0, 0.5)
    beta, value = attention_scales(SoftmaxAttention(Q=4 * eye, V=torch.stack([eye, 3 * eye])))
    assert beta == pytest.approx(4.0) and value == pytest.approx(3.0)  # the largest run's spectral norm
    heads = [SoftmaxAttention(2.0, 1.0), SoftmaxAttention(1.0, 3.0)]
    for combine, lipschitz in (("sum", 5.0), ("mean", 2.5)):
        beta, value = attention_scales(MultiHeadAttention(heads, combine=combine))
        assert beta == 2.0 and beta * value == pytest.approx(lipschitz)  # sum_h beta_h |s_h| (averaged)
    assert attention_scales(RandomBatchAttention(SoftmaxAttention(7.0, 1.0), 2)) == (7.0, 1.0)
    assert attention_scales(None) == (0.0, 0.0)
    q, k = torch.diag(torch.tensor([2.0, 0.1, 0.1])), torch.diag(torch.tensor([0.1, 2.0, 2.0]))
    assert attention_scales(SoftmaxAttention(Q=q, K=k))[0] == pytest.approx(0.2)  # |Q^T K|, not |Q| |K| = 4
    plugin = SimpleNamespace(heads=4, inner="not an attention", beta="learned")  # a plugin's own attributes
    assert attention_scales(plugin) == (0.0, 0.0)
    # a scheme that normalizes the attention's output moves a token by f dt: the values' scale drops out
    assert step_ratios(3, 0.0, 0.5, SoftmaxAttention(2.0, 10.0), normalized=True)[1] == pytest.approx(1.0)


@pytest.mark.parametrize("scheme", ["projected", "geodesic", "rk4"])
def test_a_strong_attention_saturates_every_solver(scheme):
    """dt beta |s| = 3 x 1 from Q = 3 I (no beta given): the matrix's scale is read; the noise-free geodesic
    and RK4 schemes check it too (RK4 against its own bound, 2.78: 3 is outside it, 0.5 inside)."""
    strong = SoftmaxAttention(Q=3 * torch.eye(3, dtype=torch.float64))
    assert saturated(None, attention=strong, scheme=scheme) == 1
    assert saturated(None, attention=SoftmaxAttention(Q=0.5 * torch.eye(3, dtype=torch.float64)), scheme=scheme) == 0


def test_unnormalized_weights_count_their_growth():
    """USA's weights reach e^beta / N (not a convex combination): the attention number carries e^beta, so a step
    softmax takes is saturated for USA at the same beta."""
    from sdeformer.attention._variants import UnnormalizedAttention

    soft, usa = SoftmaxAttention(3.0, 1.0), UnnormalizedAttention(3.0, 1.0)
    assert attention_scales(usa) == pytest.approx((3.0, math.exp(3.0)))
    dt = 0.2  # softmax: a = 0.6 (resolved); USA: a = 0.6 e^3 = 12 (saturated)
    assert step_ratios(3, 0.0, dt, soft)[1] < ATTENTION_LIMIT < step_ratios(3, 0.0, dt, usa)[1]
