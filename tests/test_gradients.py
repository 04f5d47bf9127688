"""Training through the model (docs/field.md, "Training through the model"): the gradients of a whole run of the
discrete model (THEORY section 1) and of the limit SDE's solver (THEORY section 3) against central finite
differences in float64, the noise held fixed by the seed; ``checkpoint=`` gives the same numbers and gradients.

Power: the finite-difference check fails a gradient that misses one path (the noise's dependence on the tokens
detached: relative error ~1e-1), and the checkpoint check fails a recomputation that does not replay the draws.
"""

import pytest
import torch

import sdeformer as sdf
from sdeformer.attention._softmax import MultiHeadAttention, SoftmaxAttention
from sdeformer.core._errors import ConfigError
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.dynamics._sde import LimitSDE, ProjectedEulerMaruyama
from sdeformer.noise._fields import GaussianField, RandomFeatureField
from sdeformer.noise._mlp import MLPNoise

FD_TOL = 1e-6  # relative error of the gradient against central differences (the bound)
H = 1e-5  # central-difference step: truncation ~ H^2, rounding ~ 1e-16 / H, both far below FD_TOL
N, D, LAYERS, SEED = 5, 3, 12, 7


class LinearDrift:
    """A trainable feed-forward map x -> W x added to the attention (an ``AttentionDrift``)."""

    def __init__(self, w: torch.Tensor):
        self.w = w

    def drift(self, x: torch.Tensor, source=None) -> torch.Tensor:
        return x @ self.w.mT  # (..., N, d)


def _params() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(11)
    return {
        "x0": sdf.uniform_sphere(N, D, seed=0, dtype=torch.float64),
        "beta": torch.tensor(1.3, dtype=torch.float64),
        "su": torch.tensor(0.4, dtype=torch.float64),
        "sw": torch.tensor(0.3, dtype=torch.float64),
        "Q": torch.eye(D, dtype=torch.float64) + 0.2 * torch.randn(D, D, generator=g, dtype=torch.float64),
        "W": 0.3 * torch.randn(D, D, generator=g, dtype=torch.float64),
    }


def _attention(p) -> MultiHeadAttention:
    """beta I, an explicit Q (K = I) and the trainable linear map, summed."""
    eye = torch.eye(D, dtype=torch.float64)
    return MultiHeadAttention([SoftmaxAttention(p["beta"]), SoftmaxAttention(Q=p["Q"], K=eye), LinearDrift(p["W"])])


def _discrete(p, checkpoint=None, rng="generator"):
    model = StochasticTransformer(LAYERS, 2.0, MLPNoise("tanh", 16, p["su"], p["sw"]), _attention(p))
    return model.run(p["x0"], seed=SEED, saveat=3, checkpoint=checkpoint, rng=rng)


def _limit(p, checkpoint=None, rng="generator"):
    field = RandomFeatureField("tanh", 32, D, p["su"], p["sw"], seed=2, dtype=torch.float64)
    solver = ProjectedEulerMaruyama(LimitSDE(field, _attention(p)), LAYERS, 2.0)
    return solver.run(p["x0"], seed=SEED, saveat=3, checkpoint=checkpoint, rng=rng)


def _loss(traj) -> torch.Tensor:
    w = torch.linspace(-1.0, 1.0, N * D, dtype=torch.float64).reshape(N, D)
    return (traj.final * w).sum() + traj.x[2].pow(2).sum(-1).mul(w[:, 0]).sum()  # final and a middle state


def worst_relative_error(run) -> dict[str, float]:
    """Per parameter: |<grad, v> - central difference along v| / |central difference| for a fixed direction v."""
    base = _params()
    leaves = {k: v.clone().requires_grad_(True) for k, v in base.items()}
    _loss(run(leaves)).backward()
    g = torch.Generator().manual_seed(5)
    errors = {}
    for name, value in base.items():
        v = torch.randn(value.shape, generator=g, dtype=torch.float64)
        plus, minus = dict(base), dict(base)
        plus[name], minus[name] = value + H * v, value - H * v
        with torch.no_grad():
            fd = (_loss(run(plus)) - _loss(run(minus))) / (2 * H)
        ad = (leaves[name].grad * v).sum()  # pyright: ignore[reportOptionalOperand]
        errors[name] = float((ad - fd).abs() / fd.abs())
    return errors


@pytest.mark.parametrize("run", [_discrete, _limit], ids=["discrete", "limit_sde"])
def test_whole_run_gradients_match_central_differences(run):
    errors = worst_relative_error(run)
    assert max(errors.values()) <= FD_TOL, errors


def test_check_fails_a_gradient_missing_a_path(monkeypatch):
    """The wrong model: the noise's input detached (no gradient through the field's dependence on the tokens)."""
    increment = MLPNoise.increment
    monkeypatch.setattr(MLPNoise, "increment", lambda self, y, dt, src: increment(self, y.detach(), dt, src))
    assert worst_relative_error(_discrete)["x0"] > 100 * FD_TOL


@pytest.mark.parametrize(
    "run,rng",
    [(_discrete, "generator"), (_discrete, "counter"), (_discrete, "splitmix"), (_limit, "generator")],
    ids=["discrete-generator", "discrete-counter", "discrete-splitmix", "limit_sde-generator"],
)
def test_checkpoint_gives_the_same_states_and_gradients(run, rng):
    out = []
    for checkpoint in (None, 5, True):
        leaves = {k: v.clone().requires_grad_(True) for k, v in _params().items()}
        traj = run(leaves, checkpoint, rng)
        _loss(traj).backward()
        out.append([traj.x.detach(), traj.steps, *(leaves[k].grad for k in sorted(leaves))])
    for other in out[1:]:
        assert torch.equal(other[0], out[0][0]) and torch.equal(other[1], out[0][1])  # the states: bit for bit
        for a, b in zip(out[0][2:], other[2:], strict=True):  # gradients: summed per segment, so to rounding
            torch.testing.assert_close(b, a, rtol=1e-12, atol=1e-14)


def test_checkpoint_without_replayed_draws_differs(monkeypatch):
    """The wrong model: segments recomputed from wherever the source stands (no replay) give other gradients."""
    from sdeformer.core._rng import Streams

    grads = []
    for replay in (True, False):
        if not replay:
            monkeypatch.setattr(Streams, "set_state", lambda self, states: None)
        leaves = {k: v.clone().requires_grad_(True) for k, v in _params().items()}
        _loss(_discrete(leaves, 4)).backward()
        grads.append(leaves["x0"].grad)
    assert not torch.allclose(grads[0], grads[1], rtol=1e-3)


def test_refusals_name_the_parameter():
    with pytest.raises(ConfigError, match="su.*no gradient"):
        GaussianField("tanh", torch.tensor(0.1, requires_grad=True))  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigError, match="checkpoint"):
        _discrete(_params(), checkpoint=0)
