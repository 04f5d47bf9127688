"""The limit SDE of each normalization scheme (BEYOND section 6) through the solvers: Post-LN step for step as
before, every other scheme's state with its radius, the discrete model converging to the SDE's law as dt halves
(the gap at time T halving, extrapolating to 0), and the same test failing for a wrong limit."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.config import ModelConfig, _blocks as blocks
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import project, uniform_sphere
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.dynamics._loop import SaveAt
from sdeformer.dynamics._norms import NGPT, MixLN, PeriLN, PostLN, PreLN, SqrtScaling
from sdeformer.dynamics._norms.schemes import Normalization
from sdeformer.dynamics._sde import LimitSDE, NoiseFreeSolver, make_solver
from sdeformer.noise._fields import GaussianField
from sdeformer.noise._sources import Antithetic, BulkSource
from sdeformer.noise._value import ValueNoise
from sdeformer.registry import SOLVERS
from sdeformer.theory._moments import PairMoments
from sdeformer.theory._montecarlo import Estimate
from sdeformer.theory._norm_moments import Moments, predicted_moments

F64 = torch.float64
RUNS, N, D, T = 4000, 3, 3, 1.0  # RUNS: runs per estimate (4 x for sqrt-scaling, whose gap is smaller)
FIELD, ATTENTION = GaussianField("relu", 0.3, 0.3), SoftmaxAttention(1.0, 1.0)
RADII = torch.tensor([[1.0], [1.5], [2.0]], dtype=F64)  # the residual streams start off the sphere
X0 = uniform_sphere(N, D, seed=5, dtype=F64) * RADII  # (N, d)
SIGMAS = 4.0  # Monte Carlo tolerance, in standard errors

pytestmark = pytest.mark.usefixtures("one_thread")

SDE_SCHEMES = [n for n in SOLVERS.names() if not issubclass(SOLVERS[n].part(), NoiseFreeSolver)]  # with noise


@dataclass(frozen=True)
class Gap:
    """E[discrete - SDE] of an observable at T over RUNS runs on the same seeds, with its standard error."""

    mean: float
    se: float


def observables(theta: torch.Tensor, r: torch.Tensor) -> dict[str, torch.Tensor]:
    """The mean cosine of the directions and the mean radius, per run ``(RUNS,)``."""
    gram = theta @ theta.transpose(-1, -2)
    return {"cos": (gram.sum((-1, -2)) - N) / (N * (N - 1)), "radius": r.mean(-1)}


def discrete(norm, layers: int, runs: int) -> dict[str, torch.Tensor]:
    model = StochasticTransformer(layers, T, noise=FIELD, attention=ATTENTION, norm=norm)
    x = model.run(X0.expand(runs, N, D), seed=list(range(runs)), saveat=SaveAt(final_only=True)).final
    return observables(project(x), torch.linalg.vector_norm(x, dim=-1))


def limit(norm, layers: int, runs: int, field=FIELD) -> dict[str, torch.Tensor]:
    sde = LimitSDE(field, ATTENTION, norm)
    state = make_solver(sde, layers, T).run(X0.expand(runs, N, D), seed=list(range(runs))).final
    theta, r = state if isinstance(state, tuple) else (state, torch.ones(state.shape[:-1], dtype=F64))
    return observables(project(theta), r)


def gaps(norm, sde_norm, layers: int, key: str, field=FIELD) -> list[Gap]:
    """The discrete model of ``norm`` against the SDE of ``sde_norm`` at ``layers`` and 2 ``layers`` steps, on
    the same seeds (the two draw the same normals each step)."""
    out, runs = [], RUNS * (4 if isinstance(norm, SqrtScaling) else 1)
    for steps in (layers, 2 * layers):
        diff = discrete(norm, steps, runs)[key] - limit(sde_norm, steps, runs, field)[key]
        out.append(Gap(float(diff.mean()), float(diff.std()) / math.sqrt(runs)))
    return out


def converges(g: list[Gap]) -> bool:
    """The gap at dt/2 is smaller (resolved) and the two extrapolate to 0 at weak order 1 (2 g(dt/2) - g(dt)),
    both within SIGMAS standard errors."""
    coarse, fine = g
    shrinks = abs(fine.mean) < abs(coarse.mean) - SIGMAS / 2 * math.hypot(coarse.se, fine.se)
    return shrinks and abs(2 * fine.mean - coarse.mean) < SIGMAS * math.hypot(2 * fine.se, coarse.se)


class NoIto:
    """The field with its variance hidden: the limit without its Ito terms (direction and radius)."""

    def __init__(self, field):
        self.field = field

    def increment(self, y, dt, source):
        return self.field.increment(y, dt, source)

    def variance(self, y):
        return torch.zeros((), dtype=y.dtype)

    def increment_and_variance(self, y, dt, source):
        return self.increment(y, dt, source), self.variance(y)


CASES = [  # scheme, steps at dt, observable
    (PreLN(), 10, "radius"),
    (PreLN(), 10, "cos"),
    (PeriLN(), 5, "cos"),
    (SqrtScaling(), 4, "cos"),
    (MixLN(0.4), 5, "radius"),
]


@pytest.mark.parametrize("norm, layers, key", CASES, ids=[f"{c[0].name}-{c[2]}" for c in CASES])
def test_the_discrete_model_converges_to_the_schemes_limit(norm, layers, key, float64):
    g = gaps(norm, norm, layers, key)
    assert converges(g), g


WRONG = [  # the discrete scheme, the wrong limit, steps, observable
    ("Pre-LN read as Post-LN", PreLN(), None, FIELD, 10, "cos"),
    ("Pre-LN without the Ito terms", PreLN(), PreLN(), NoIto(FIELD), 10, "radius"),
    ("Peri-LN read as Pre-LN", PeriLN(), PreLN(), FIELD, 5, "cos"),
    ("sqrt-scaling read as Post-LN", SqrtScaling(), None, FIELD, 4, "cos"),
    ("Mix-LN read as Pre-LN", MixLN(0.4), PreLN(), FIELD, 5, "radius"),
]


@pytest.mark.parametrize("case", WRONG, ids=[w[0] for w in WRONG])
def test_the_same_test_fails_for_a_wrong_limit(case, float64):
    _, norm, wrong, field, layers, key = case
    g = gaps(norm, wrong, layers, key, field)
    assert not converges(g), g


def test_post_ln_is_the_sde_of_before_step_for_step(float64):
    """norm = PostLN() is the default, and one projected step is LN(x + P_x (dW + dt A) - (d-1)/2 k x dt)."""
    x0 = uniform_sphere(N, D, batch=(2,), seed=1, dtype=F64)
    default = make_solver(LimitSDE(FIELD, ATTENTION), 8, T).run(x0, seed=[1, 2]).x
    assert torch.equal(make_solver(LimitSDE(FIELD, ATTENTION, PostLN()), 8, T).run(x0, seed=[1, 2]).x, default)
    source, x, dt = Streams([1, 2], (2,)), x0, T / 8
    for _ in range(8):
        dw = FIELD.increment(x, dt, source) + dt * ATTENTION.drift(x)
        x = project(x + (dw - (dw * x).sum(-1, keepdim=True) * x) - (D - 1) / 2 * FIELD.variance(x) * x * dt)
    torch.testing.assert_close(default[-1], x, rtol=0, atol=1e-14)


@pytest.mark.parametrize("scheme", SDE_SCHEMES)
@pytest.mark.parametrize("name", ["pre", "mix:0.5", "peri", "ngpt:0.5", "sqrt"])
def test_every_scheme_runs_through_every_solver_from_a_config(name, scheme, float64):
    cfg = ModelConfig(tokens=N, dim=D, layers=8, horizon=T, norm=name)
    norm = blocks.norm(cfg)
    traj = make_solver(LimitSDE(FIELD, ATTENTION, norm), 8, T, scheme).run(X0, seed=3)
    if norm.on_sphere:
        assert isinstance(traj.x, torch.Tensor) and traj.x.shape == (9, N, D)
        theta, r = traj.x[-1], torch.ones(N, dtype=F64)
    else:
        theta, r = traj.x[0][-1], traj.x[1][-1]
        assert traj.x[1].shape == (9, N)
        torch.testing.assert_close(traj.x[1][0], RADII.squeeze(-1))  # the residual stream's radius at t = 0
    norms = torch.linalg.vector_norm(theta, dim=-1)
    assert torch.isfinite(theta).all() and bool((r > 0).all())
    if scheme == "projected":
        torch.testing.assert_close(norms, torch.ones(N, dtype=F64))
    else:
        assert float((norms - 1).abs().max()) > 1e-8  # plain Euler-Maruyama leaves the sphere


def test_mix_ln_is_post_ln_with_unit_radius_before_its_switch(float64):
    mix = make_solver(LimitSDE(FIELD, ATTENTION, MixLN(0.5)), 10, T).run(X0, seed=4).x
    post = make_solver(LimitSDE(FIELD, ATTENTION), 10, T).run(X0, seed=4).x
    assert torch.equal(mix[0][1:6], post[1:6]) and bool((mix[1][1:6] == 1).all())
    assert bool((mix[1][6:] != 1).all()) and not torch.equal(mix[0][6:], post[6:])


class Unknown(Normalization):
    """A scheme without a derived limit (its layer is Pre-LN's, but the SDE must not guess)."""

    name, on_sphere = "unknown", False

    def sub(self, x, out, step, t):
        return x + out


def test_schemes_without_a_derived_limit_are_refused_naming_norm():
    with pytest.raises(ConfigError, match="norm") as info:
        LimitSDE(FIELD, ATTENTION, Unknown())
    with pytest.raises(ConfigError, match="norm.*kernel"):
        LimitSDE(ValueNoise(), ATTENTION, PeriLN())  # the normalized limit is derived for Gaussian fields
    with pytest.raises(ConfigError, match="norm.*Post-LN"):
        LimitSDE(FIELD, ATTENTION, PreLN()).drift(X0)  # drift(x) is the Post-LN equation's
    with pytest.raises(ConfigError, match="norm"):
        LimitSDE(FIELD, ATTENTION, NGPT(0.5)).diffusion(X0, 0.1, Streams(0, ()))
    assert "\n" not in str(info.value)


H, COPIES = 1e-6, 20000
THETA = uniform_sphere(3, 4, seed=3, dtype=F64)
STREAM = THETA * torch.tensor([[1.5], [2.5], [4.0]], dtype=F64)
MOMENT_FIELD = GaussianField("relu", 0.5, 0.5)
MOMENT_CASES = {  # scheme, state (the residual stream), time (tests/test_norms.py's cases), a wrong SDE
    "pre": (PreLN(), STREAM, 0.0, (PreLN(), NoIto(MOMENT_FIELD))),  # the Ito terms dropped
    "peri": (PeriLN(), STREAM, 0.0, (PreLN(), MOMENT_FIELD)),  # the block outputs not normalized
    "ngpt": (NGPT(0.7), THETA, 0.0, (NGPT(1.0), MOMENT_FIELD)),  # the wrong rate alpha
    "sqrt": (SqrtScaling(), THETA, 3.0, (None, MOMENT_FIELD)),  # Post-LN: no 1 / sqrt(1 + t)
    "mix_post_phase": (MixLN(1.0), THETA, 0.5, (MixLN(1.0), NoIto(MOMENT_FIELD))),
    "mix_pre_phase": (MixLN(1.0), STREAM, 2.0, (PostLN(), MOMENT_FIELD)),  # the radius ignored
}


def sde_step_moments(norm, x: torch.Tensor, t: float, field) -> Moments:
    """E du / h, E du^2 / h of u = <theta_0, theta_1> and E dr / h, E dr^2 / h of r_0 over one plain
    Euler-Maruyama step of the SDE at time t from x ``(N, d)`` (the projected step would hide the direction's
    radial Ito term), over 2 x COPIES antithetic copies."""
    solver = make_solver(LimitSDE(field, ATTENTION, norm), 1, H, "euler")
    solver.clock = round(t / H)
    start = solver.start_state(x.expand(2, COPIES, *x.shape))
    end = solver.step(start, Antithetic(BulkSource.seeded(0, (COPIES,))))
    (a, ra), (b, rb) = [s if isinstance(s, tuple) else (s, torch.ones(s.shape[:-1], dtype=F64)) for s in (start, end)]
    du = (b[..., 0, :] * b[..., 1, :]).sum(-1) - (a[..., 0, :] * a[..., 1, :]).sum(-1)  # (2, COPIES)
    dr = rb[..., 0] - ra[..., 0]
    return Moments(
        PairMoments(Estimate.of(du / H), Estimate.of(du * du / H)),
        PairMoments(Estimate.of(dr / H), Estimate.of(dr * dr / H)),
    )


def agree(pred: Moments, meas: Moments) -> bool:
    """Within 4 standard errors plus 50 h, as the discrete model's moment test (tests/test_norms.py)."""
    pairs = ((pred.overlap, meas.overlap), (pred.radius, meas.radius))
    return all(abs(getattr(m, k).mean - getattr(p, k)) <= 4 * getattr(m, k).se + 50 * H
               for p, m in pairs for k in ("drift", "variation"))  # fmt: skip


@pytest.mark.parametrize("case", MOMENT_CASES)
def test_one_sde_step_has_the_moments_of_the_derived_limit(case, float64):
    """The solvers' step is the table of BEYOND section 6 (``limits.limit``), nGPT's and Mix-LN's included."""
    norm, x, t, (wrong, field) = MOMENT_CASES[case]
    pred = predicted_moments(norm, x, ATTENTION, MOMENT_FIELD, t)
    assert agree(pred, sde_step_moments(norm, x, t, MOMENT_FIELD)), pred
    assert not agree(pred, sde_step_moments(wrong, x, t, field))  # the check can fail
