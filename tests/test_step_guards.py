"""The step-size rule (``dynamics._step_guard``): (d-1) k dt and dt beta |s| outside the explicit schemes' range
warn once; the density solver then reports the whole run below resolution."""

import warnings

import numpy as np
import pytest
import torch

from sdeformer.dynamics._sde import LimitSDE, make_solver
from sdeformer.dynamics._step_guard import ATTENTION_LIMIT, NOISE_LIMIT, check_step, step_ratios
from sdeformer.experiments._spde.run import SpdeSettings, run_spde
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
    with pytest.warns(RuntimeWarning, match=r"\(d-1\) k dt"):
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
