"""The noise-free limit (THEORY section 3 with W = 0): ``LimitSDE(None, attention)`` is the ODE
dX_i = P_{X_i} Attn(X) dt in every solver, and the schemes of BEYOND section 6 named as in a config."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.core._errors import ConfigError
from sdeformer.dynamics._norms.schemes import NGPT, MixLN, PeriLN, PreLN
from sdeformer.dynamics._sde import NO_FIELD, LimitSDE, make_solver
from sdeformer.registry import SOLVERS

BETA, T = 2.0, 2.0
ANGLES = [0.0, 0.7, 2.0, 4.0]


def ode_angles(beta: float, horizon: float) -> np.ndarray:
    """The circle ODE theta_i' = sum_j softmax_j(beta cos(theta_j - theta_i)) sin(theta_j - theta_i), by scipy."""

    def rhs(_t, th):
        diff = th[None, :] - th[:, None]  # (N, N): theta_j - theta_i
        w = np.exp(beta * np.cos(diff))
        return (w * np.sin(diff)).sum(1) / w.sum(1)

    return solve_ivp(rhs, (0, horizon), np.array(ANGLES), rtol=1e-11, atol=1e-12).y[:, -1]


@pytest.mark.parametrize("scheme", [n for n in SOLVERS.names() if SOLVERS[n].part().weak_order == 1])
def test_noise_free_limit_is_the_ode_in_every_solver(scheme):
    a = torch.tensor(ANGLES, dtype=torch.float64)
    x0 = torch.stack([a.cos(), a.sin()], -1)  # (N, 2)
    sde = LimitSDE(None, SoftmaxAttention(BETA))
    assert sde.field is NO_FIELD
    runs = [make_solver(sde, steps, T, scheme).run(x0, seed=s).final for steps, s in ((4000, 0), (8000, 1))]
    exact = ode_angles(BETA, T)
    errors = [float(np.abs(np.angle(np.exp(1j * (torch.atan2(x[:, 1], x[:, 0]).numpy() - exact)))).max()) for x in runs]
    assert errors[0] < 2e-3 and errors[1] < 0.6 * errors[0]  # first order, whatever the seed
    assert float(torch.linalg.vector_norm(runs[1], dim=-1).sub(1).abs().max()) < 1e-3


@pytest.mark.parametrize(("name", "scheme"), [("pre", PreLN()), ("peri", PeriLN()), ("ngpt:2", NGPT(2.0))])
def test_scheme_by_name_equals_the_scheme_object(name, scheme):
    x0 = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 2
    named = make_solver(LimitSDE(None, SoftmaxAttention(BETA), name), 50, T).run(x0, seed=[0, 1]).final
    given = make_solver(LimitSDE(None, SoftmaxAttention(BETA), scheme), 50, T).run(x0, seed=[5, 6]).final
    named, given = (v if isinstance(v, tuple) else (v,) for v in (named, given))
    assert all(torch.equal(a, b) and torch.isfinite(a).all() for a, b in zip(named, given, strict=True))


def test_mix_by_name_switches_at_its_fraction_of_the_horizon():
    mix = LimitSDE(None, SoftmaxAttention(BETA), "mix:0.5", horizon=4.0).norm
    assert isinstance(mix, MixLN) and mix.switch == pytest.approx(2.0)


def test_normalized_scheme_without_field_has_no_ito_term():
    """Peri-LN of no field: the direction moves by dt * unit(A) tangentially only; with the field's 1/d Ito
    term the tokens of a one-token run would shrink before projection."""
    x0 = torch.tensor([[[3.0, 4.0]]], dtype=torch.float64)  # (1, 1, 2): one token, A = its own direction
    theta, r = make_solver(LimitSDE(None, SoftmaxAttention(BETA), "peri"), 10, 1.0, "euler").run(x0).final
    torch.testing.assert_close(theta, x0 / 5, rtol=0, atol=1e-15)
    assert float(r.squeeze()) == pytest.approx(5.0 + 1.0)  # r + <theta, unit(A)> dt per step, 10 steps of 0.1
    assert math.isfinite(float(r.squeeze()))


@pytest.mark.parametrize("norm", ["nope", "pre:3", "mix:2"])
def test_bad_scheme_name_is_one_config_error(norm):
    with pytest.raises(ConfigError, match="norm"):
        LimitSDE(None, SoftmaxAttention(BETA), norm)
