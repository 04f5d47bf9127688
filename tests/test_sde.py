"""The limit SDE of THEORY section 3: strong orders, the Ito correction, solver mechanics."""

import math

import pytest
import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.contracts import LimitField
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import project, uniform_sphere
from sdeformer.dynamics._sde import EulerMaruyama, LimitSDE, NoiseFreeSolver, ProjectedEulerMaruyama, make_solver
from sdeformer.noise._fields import GaussianField
from sdeformer.noise._replay import BrownianPath, ReplayedNoise
from sdeformer.observables import loglog_slope
from sdeformer.registry import SOLVERS

ORDER_TOL = 0.15  # |measured RMS slope - declared strong order|
NORM_TOL = 0.01  # |E|X|^2 - 1| after the run, with the Ito drift
NO_ITO_MIN_GROWTH = 0.9  # without it E|X|^2 grows by >= (d-1) kappa(1) T (times this factor)

SDE_SCHEMES = [n for n in SOLVERS.names() if not issubclass(SOLVERS[n].part(), NoiseFreeSolver)]  # with noise


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("scheme", SDE_SCHEMES)
def test_strong_order_with_nested_grids_sharing_one_path(scheme):
    runs, n, d, fine, horizon = 48, 3, 4, 1024, 1.0
    x0 = uniform_sphere(n, d, batch=(runs,), seed=1, dtype=torch.float64)
    field, attn = GaussianField("relu", 0.2, 0.2), SoftmaxAttention(1.0, 1.0)
    path = BrownianPath((n, d), fine, seed=2, batch=(runs,), dtype=torch.float64)

    def final(steps):
        sde = LimitSDE(ReplayedNoise(field, path.normals(fine // steps)), attn)
        return make_solver(sde, steps, horizon, scheme).run(x0).final

    ref = final(fine)
    steps = [8, 16, 32, 64]
    rms = [math.sqrt(float((final(s) - ref).pow(2).sum(-1).mean())) for s in steps]
    slope = -loglog_slope(steps, rms)
    assert abs(slope - SOLVERS[scheme].part().strong_order) < ORDER_TOL, (rms, slope)


class _NoIto:
    """The same field with its variance hidden: the SDE then lacks the Ito correction."""

    def __init__(self, field):
        self.field = field

    def increment(self, y, dt, streams):
        return self.field.increment(y, dt, streams)

    def variance(self, y):
        return torch.zeros((), dtype=y.dtype)

    def increment_and_variance(self, y, dt, streams):
        return self.increment(y, dt, streams), self.variance(y)


def test_ito_drift_keeps_unit_norm_in_mean():
    runs, n, d, horizon = 256, 4, 6, 1.0
    field = GaussianField("relu", 0.1, 0.1)
    assert isinstance(_NoIto(field), LimitField)
    x0 = uniform_sphere(n, d, batch=(runs,), seed=3, dtype=torch.float64)
    with_ito = make_solver(LimitSDE(field), 100, horizon, "euler").run(x0, seed=4).final
    without = make_solver(LimitSDE(_NoIto(field)), 100, horizon, "euler").run(x0, seed=4).final
    norm2 = with_ito.pow(2).sum(-1).mean()
    assert abs(float(norm2) - 1.0) < NORM_TOL
    growth = float(without.pow(2).sum(-1).mean()) - 1.0  # at least (d-1) kappa(1) T to first order
    assert growth > NO_ITO_MIN_GROWTH * (d - 1) * field.theory(d).kappa1 * horizon


def test_projected_scheme_stays_on_sphere_and_saves():
    x0 = uniform_sphere(5, 4, batch=(2,), seed=0, dtype=torch.float64)
    sde = LimitSDE(GaussianField("tanh", 0.1, 0.1), SoftmaxAttention(1.0, -1.0))
    calls = []
    traj = make_solver(sde, 10, 2.0).run(x0, seed=1, saveat=4, progress=calls.append)
    assert traj.x.shape == (4, 2, 5, 4) and traj.steps.tolist() == [0, 4, 8, 10]
    assert traj.t[-1] == pytest.approx(2.0) and calls == list(range(1, 11))
    torch.testing.assert_close(traj.x.norm(dim=-1), torch.ones(4, 2, 5, dtype=torch.float64))


def test_euler_step_combines_the_sde_pieces():
    """One Euler-Maruyama step is x + b(x) dt + P_x dW(x) with the SDE's drift and diffusion (THEORY section 3),
    and the projected step is its LN; the orders are declared and shown."""
    x = uniform_sphere(6, 5, batch=(2,), seed=2, dtype=torch.float64)  # (2, 6, 5)
    sde = LimitSDE(GaussianField("relu", 0.1, 0.2), SoftmaxAttention(1.0, 1.0))
    dt = 0.01
    plain = EulerMaruyama(sde, 100, 1.0).step(x, Streams(7, (2,)))
    expected = x + sde.drift(x) * dt + sde.diffusion(x, dt, Streams(7, (2,)))
    torch.testing.assert_close(plain, expected, rtol=0, atol=1e-14)
    projected = ProjectedEulerMaruyama(sde, 100, 1.0)
    torch.testing.assert_close(projected.step(x, Streams(7, (2,))), project(plain), rtol=0, atol=0)
    assert (EulerMaruyama.strong_order, EulerMaruyama.weak_order) == (0.5, 1.0)
    assert repr(make_solver(sde, 500, 10.0)) == (
        "ProjectedEulerMaruyama(steps=500, horizon=10.0, strong_order=0.5, weak_order=1.0)"
    )


def test_solver_bad_input():
    sde = LimitSDE(GaussianField())
    with pytest.raises(ConfigError):
        make_solver(sde, 10, 1.0, "heun")
    with pytest.raises(ConfigError):
        make_solver(sde, 0, 1.0)
    with pytest.raises(ConfigError):
        make_solver(sde, 10, float("nan"))
