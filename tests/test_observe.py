"""Observing a run (THEORY sections 1, 3): ``save_at`` keeps exactly the listed steps and ``observer(k, t, x)``
sees every step, for the discrete model and the SDE solvers alike."""

import pytest
import torch

import sdeformer as sdf
from sdeformer.errors import ConfigError
from sdeformer.fields import GaussianField
from sdeformer.sde import LimitSDE, make_solver

pytestmark = pytest.mark.usefixtures("one_thread")

STEPS, HORIZON = 12, 1.5


def _discrete():
    mlp = sdf.MLPNoise("relu", 16, 0.1, 0.1)
    return sdf.StochasticTransformer(STEPS, HORIZON, mlp=mlp, attention=sdf.SoftmaxAttention()).run


def _sde():
    sde = LimitSDE(GaussianField("relu", 0.1, 0.1), sdf.SoftmaxAttention())
    return make_solver(sde, STEPS, HORIZON).solve


RUNNERS = {"discrete": _discrete, "sde": _sde}


@pytest.fixture
def x0():
    return sdf.uniform_sphere(5, 4, batch=(2,), seed=0, dtype=torch.float64)  # (2, 5, 4)


@pytest.mark.parametrize("model", sorted(RUNNERS))
def test_save_at_keeps_exactly_those_steps(model, x0):
    run = RUNNERS[model]()
    every = run(x0, seed=3)  # save_every=1: (STEPS + 1, 2, 5, 4)
    keep = [2, 5, 6, STEPS]
    traj = run(x0, seed=3, save_every=4, save_at=keep)  # save_every ignored
    assert traj.layers.tolist() == [0, *keep]
    assert torch.equal(traj.x, every.x[[0, *keep]])
    torch.testing.assert_close(traj.t, every.t[[0, *keep]], rtol=0, atol=0)
    start_only = run(x0, seed=3, save_at=[])
    assert start_only.layers.tolist() == [0] and torch.equal(start_only.final, every.x[0])


@pytest.mark.parametrize("model", sorted(RUNNERS))
def test_observer_sees_every_step_with_its_time_and_state(model, x0):
    run = RUNNERS[model]()
    every = run(x0, seed=4)
    seen, ticks = [], []
    traj = run(
        x0, seed=4, save_at=[STEPS], observer=lambda k, t, x: seen.append((k, t, x.clone())), progress=ticks.append
    )
    assert [k for k, _, _ in seen] == list(range(1, STEPS + 1)) == ticks
    for k, t, x in seen:
        assert t == k * (HORIZON / STEPS) == float(every.t[k])
        assert torch.equal(x, every.x[k])
    assert torch.equal(traj.final, every.final)


def test_observer_keeps_statistics_of_a_segmented_discrete_run(x0):
    model = sdf.StochasticTransformer(STEPS, HORIZON, mlp=sdf.MLPNoise("relu", 16, 0.1, 0.1))
    energy = {}
    streams = sdf.Streams(5, (2,))
    first = model.run(
        x0,
        streams=streams,
        stop_layer=5,
        save_at=[5],
        observer=lambda k, t, x: energy.setdefault(k, sdf.interaction_energy(x)),
    )
    model.run(
        first.final,
        streams=streams,
        start_layer=5,
        save_at=[],
        observer=lambda k, t, x: energy.setdefault(k, sdf.interaction_energy(x)),
    )
    whole = model.run(x0, seed=5)
    assert sorted(energy) == list(range(1, STEPS + 1))
    for k, e in energy.items():
        torch.testing.assert_close(e, sdf.interaction_energy(whole.x[k]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("model", sorted(RUNNERS))
@pytest.mark.parametrize("save_at", [[3, 2], [2, 2], [-1], [STEPS + 1], [1.5], [True], "3", torch.tensor([1])])
def test_bad_save_at(model, save_at, x0):
    with pytest.raises(ConfigError) as info:
        RUNNERS[model]()(x0, save_at=save_at)
    assert info.value.parameter == "save_at" and "\n" not in str(info.value)


def test_bad_observer(x0):
    with pytest.raises(ConfigError) as info:
        _sde()(x0, observer="print")
    assert info.value.parameter == "observer"
