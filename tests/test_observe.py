"""Observing a run (THEORY sections 1, 3): ``SaveAt(steps=...)`` keeps exactly the listed steps, ``times`` the first
step reaching each time, ``final_only`` the last, and an observer ``(k, t, x)`` sees every step, for the discrete
model and the SDE solvers alike (one verb, ``run``)."""

import pytest
import torch

import sdeformer as sdf
from sdeformer.core import Streams
from sdeformer.core._errors import ConfigError
from sdeformer.dynamics._loop import SaveAt, integrate
from sdeformer.dynamics._sde import LimitSDE, make_solver
from sdeformer.noise._fields import GaussianField

pytestmark = pytest.mark.usefixtures("one_thread")

STEPS, HORIZON = 12, 1.5


def _discrete():
    mlp = sdf.MLPNoise("relu", 16, 0.1, 0.1)
    return sdf.StochasticTransformer(STEPS, HORIZON, noise=mlp, attention=sdf.SoftmaxAttention()).run


def _sde():
    sde = LimitSDE(GaussianField("relu", 0.1, 0.1), sdf.SoftmaxAttention())
    return make_solver(sde, STEPS, HORIZON).run


RUNNERS = {"discrete": _discrete, "sde": _sde}


@pytest.fixture
def x0():
    return sdf.uniform_sphere(5, 4, batch=(2,), seed=0, dtype=torch.float64)  # (2, 5, 4)


@pytest.mark.parametrize("model", sorted(RUNNERS))
def test_save_at_keeps_exactly_those_steps(model, x0):
    run = RUNNERS[model]()
    every = run(x0, seed=3)  # save_every=1: (STEPS + 1, 2, 5, 4)
    keep = [2, 5, 6, STEPS]
    traj = run(x0, seed=3, saveat=SaveAt(steps=keep))
    assert traj.steps.tolist() == [0, *keep]
    assert torch.equal(traj.x, every.x[[0, *keep]])
    torch.testing.assert_close(traj.t, every.t[[0, *keep]], rtol=0, atol=0)
    start_only = run(x0, seed=3, saveat=SaveAt(steps=[]))
    assert start_only.steps.tolist() == [0] and torch.equal(start_only.final, every.x[0])


@pytest.mark.parametrize("model", sorted(RUNNERS))
def test_observer_sees_every_step_with_its_time_and_state(model, x0):
    run = RUNNERS[model]()
    every = run(x0, seed=4)
    seen, ticks = [], []
    observe = SaveAt(final_only=True, observers=(lambda k, t, x: seen.append((k, t, x.clone())),))
    traj = run(x0, seed=4, saveat=observe, progress=ticks.append)
    assert traj.steps.tolist() == [0, STEPS] and traj.stats["steps"] == STEPS and "wall_s" in traj.stats
    assert [k for k, _, _ in seen] == list(range(1, STEPS + 1)) == ticks
    for k, t, x in seen:
        assert t == k * (HORIZON / STEPS) == float(every.t[k])
        assert torch.equal(x, every.x[k])
    assert torch.equal(traj.final, every.final)


def test_observer_keeps_statistics_of_a_segmented_discrete_run(x0):
    model = sdf.StochasticTransformer(STEPS, HORIZON, noise=sdf.MLPNoise("relu", 16, 0.1, 0.1))
    energy = {}
    streams = Streams(5, (2,))
    first = model.run(
        x0,
        streams=streams,
        stop=5,
        saveat=SaveAt(steps=[5], observers=(lambda k, t, x: energy.setdefault(k, sdf.interaction_energy(x)),)),
    )
    model.run(
        first.final,
        streams=streams,
        start=5,
        saveat=SaveAt(steps=[], observers=(lambda k, t, x: energy.setdefault(k, sdf.interaction_energy(x)),)),
    )
    whole = model.run(x0, seed=5)
    assert sorted(energy) == list(range(1, STEPS + 1))
    for k, e in energy.items():
        torch.testing.assert_close(e, sdf.interaction_energy(whole.x[k]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("model", sorted(RUNNERS))
@pytest.mark.parametrize("save_at", [[3, 2], [2, 2], [-1], [STEPS + 1], [1.5], [True], "3", torch.tensor([1])])
def test_bad_save_at(model, save_at, x0):
    with pytest.raises(ConfigError) as info:
        RUNNERS[model]()(x0, saveat=SaveAt(steps=save_at))
    assert info.value.parameter == "save_at" and "\n" not in str(info.value)


def test_bad_observer(x0):
    with pytest.raises(ConfigError) as info:
        _sde()(x0, saveat=SaveAt(observers=("print",)))  # pyright: ignore[reportArgumentType]  # bad on purpose
    assert info.value.parameter == "observer"


@pytest.mark.parametrize("model", sorted(RUNNERS))
def test_save_times_take_the_first_step_reaching_each_time(model, x0):
    run = RUNNERS[model]()
    every = run(x0, seed=6)
    dt = HORIZON / STEPS  # 0.125
    traj = run(x0, seed=6, saveat=SaveAt(times=[0.3, 0.5, HORIZON]))  # steps 3 (0.375 >= 0.3), 4, 12
    assert traj.steps.tolist() == [0, 3, 4, STEPS]
    assert torch.equal(traj.x, every.x[[0, 3, 4, STEPS]]) and float(traj.t[1]) == 3 * dt
    with pytest.raises(ConfigError):
        run(x0, saveat=SaveAt(times=[HORIZON + 1]))


def test_saveat_takes_one_rule_and_an_int_means_every(x0):
    with pytest.raises(ConfigError) as info:
        SaveAt(every=2, steps=[1])
    assert info.value.parameter == "saveat"
    run = RUNNERS["discrete"]()
    assert run(x0, seed=1, saveat=5).steps.tolist() == [0, 5, 10, STEPS]
    with pytest.raises(ConfigError):
        run(x0, saveat="5")  # pyright: ignore[reportArgumentType]  # bad on purpose


def test_the_loop_takes_any_state():
    """A state that is not tokens (here a tuple of a radius and a direction) runs through the same loop."""
    state0 = (torch.ones(3), torch.zeros(3))

    def step(state, source):
        r, x = state
        return r * 2, x + source.randn((), torch.float64)

    traj = integrate(step, state0, 0.5, 4, source=Streams([0, 1, 2], (3,)), saveat=SaveAt(steps=[2, 4]))
    assert isinstance(traj.x, tuple) and traj.x[0].shape == (3, 3) and traj.steps.tolist() == [0, 2, 4]
    assert torch.equal(traj.final[0], torch.full((3,), 16.0)) and traj.t.tolist() == [0.0, 1.0, 2.0]
