"""The noise-free limit ODE's named solvers (THEORY section 3 without noise): ``solver: geodesic`` steps the angle by
dt theta' on the circle (the peers' angle-Euler step), ``solver: rk4`` is fourth order; a config reaches each, and
a config they cannot step is refused in one line naming ``solver``."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

import sdeformer as sdf
from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.core._errors import ConfigError
from sdeformer.dynamics._sde import GeodesicEuler, LimitSDE, make_solver

BASE: dict[str, Any] = dict(tokens=6, dim=2, layers=40, horizon=2.0, beta=3.0, dtype="float64", noise="off")


def test_a_config_with_solver_geodesic_runs_the_geodesic_step():
    cfg = sdf.ModelConfig(**BASE, solver="geodesic")
    x0 = cfg.initial_tokens()
    got = cfg.build().run(x0).x
    want = GeodesicEuler(LimitSDE(None, SoftmaxAttention(3.0, 1.0)), 40, 2.0).run(x0).x
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert torch.equal(make_solver(LimitSDE(None, SoftmaxAttention(3.0, 1.0)), 40, 2.0, "geodesic").run(x0).x, want)
    projected = cfg.replace(solver="projected").build().run(x0).x
    assert not torch.allclose(got, projected, rtol=0, atol=1e-9)  # another step, not the projected one renamed


def test_on_the_circle_each_step_moves_the_angle_by_dt_times_its_velocity():
    """theta_i' = sum_j softmax_j(beta cos(theta_j - theta_i)) sin(theta_j - theta_i): Euler in the angle."""
    cfg = sdf.ModelConfig(**BASE, solver="geodesic")
    run = cfg.build().run(cfg.initial_tokens())
    theta = torch.atan2(run.x[..., 1], run.x[..., 0])  # (S, N)
    dt = 2.0 / 40
    for k in (0, 7, 39):
        diff = theta[k][None, :] - theta[k][:, None]  # theta_j - theta_i, (N, N)
        velocity = (torch.softmax(3.0 * diff.cos(), -1) * diff.sin()).sum(-1)
        moved = torch.remainder(theta[k + 1] - theta[k] + math.pi, 2 * math.pi) - math.pi
        torch.testing.assert_close(moved, dt * velocity, rtol=0, atol=1e-12)


def test_rk4_is_fourth_order_and_a_config_reaches_it():
    """Halving the step divides the error at T by 2^4 (against a run at 1/16 of the step)."""
    cfg = sdf.ModelConfig(**{**BASE, "layers": 10}, solver="rk4")
    x0 = cfg.initial_tokens()
    sde = LimitSDE(None, SoftmaxAttention(3.0, 1.0))
    assert torch.equal(cfg.build().run(x0).final, make_solver(sde, 10, 2.0, "rk4").run(x0).final)
    exact = make_solver(sde, 160, 2.0, "rk4").run(x0).final
    errors = [float((make_solver(sde, n, 2.0, "rk4").run(x0).final - exact).abs().max()) for n in (10, 20, 40)]
    for coarse, fine in zip(errors, errors[1:]):
        assert 12 < coarse / fine < 20  # 2^4 = 16
    assert torch.allclose(torch.linalg.vector_norm(exact, dim=-1), torch.ones(6, dtype=torch.float64))


@pytest.mark.parametrize("scheme", ["geodesic", "rk4"])
@pytest.mark.parametrize("change", [dict(noise="mlp"), dict(norm="pre")])
def test_a_config_a_noise_free_step_cannot_run_is_refused_naming_solver(change, scheme):
    with pytest.raises(ConfigError, match="solver"):
        sdf.ModelConfig(**{**BASE, **change}, solver=scheme)
