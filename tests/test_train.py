"""The training loop over the noisy model's parameters (``sdeformer.train``; docs/field.md, "Training through the
model"): recovering a known linear feed-forward map and beta from a teacher run on the same seeded noise paths.

Power: with the map frozen (only beta trained) the loss stays far above the recovered one; a per-layer map reads
its layer from the model's clock, checked against a shared map; bad arguments are one-line errors.
"""

import pytest
import torch

import sdeformer as sdf
from sdeformer.core._errors import ConfigError
from sdeformer.noise._mlp import MLPNoise
from sdeformer.train import LinearFeedForward, noisy_model, train

D, N, L, T = 3, 8, 6, 1.5
F64 = torch.float64


def _teacher():
    g = torch.Generator().manual_seed(3)
    a = torch.randn(D, D, generator=g, dtype=F64)
    a = a - a.trace() / D * torch.eye(D, dtype=F64)  # traceless: W and W + cI act alike (module docstring)
    return 0.8 * a / a.norm(), torch.tensor(1.5, dtype=F64)


def _fit(train_map: bool, steps: int = 80):
    x0 = sdf.uniform_sphere(N, D, batch=(4,), seed=0, dtype=F64)
    noise = MLPNoise("tanh", 16, 0.3, 0.3)
    w_star, beta_star = _teacher()

    def final(w, beta, seed):
        return noisy_model(L, T, noise, beta, LinearFeedForward(w)).run(x0, seed=seed).final

    w = torch.zeros(D, D, dtype=F64, requires_grad=train_map)
    beta = torch.tensor(1.0, dtype=F64, requires_grad=True)

    def loss(seed):
        with torch.no_grad():
            target = final(w_star, beta_star, seed)  # the teacher on the same noise path
        return (final(w, beta, seed) - target).pow(2).sum(-1).mean()

    params = {"W": w, "beta": beta} if train_map else {"beta": beta}
    return train(loss, params, steps, 0.05, decay=0.96), w.detach(), beta.detach(), w_star, beta_star


def test_training_recovers_a_known_map_and_beta():
    run, w, beta, w_star, beta_star = _fit(True)
    assert run.losses[-1] < 0.01 * run.losses[0]
    traceless = w - w.trace() / D * torch.eye(D, dtype=F64)
    assert (traceless - w_star).norm() / w_star.norm() < 0.1  # from 1.0 at the start
    assert abs(float(beta - beta_star)) < 0.03
    frozen = _fit(False, 20)[0]  # wrong model: the map frozen at zero
    assert min(frozen.losses) > 10 * run.losses[-1]


def test_per_layer_map_reads_the_layer():
    x0 = sdf.uniform_sphere(N, D, seed=1, dtype=F64)
    w = 0.5 * torch.randn(D, D, generator=torch.Generator().manual_seed(0), dtype=F64)
    layered = torch.zeros(L, D, D, dtype=F64)
    layered[2] = w  # only layer 3 carries the map
    shared = noisy_model(1, T / L, None, 1.0, LinearFeedForward(w))
    plain = noisy_model(1, T / L, None, 1.0, LinearFeedForward(torch.zeros(D, D, dtype=F64)))
    run = noisy_model(L, T, None, 1.0, LinearFeedForward(layered)).run(x0)
    for k in range(L):
        expect = (shared if k == 2 else plain).run(run.x[k], start=0).final
        torch.testing.assert_close(run.x[k + 1], expect, rtol=0, atol=1e-14)
    again = noisy_model(L, T, None, 1.0, LinearFeedForward(layered)).run(x0, checkpoint=2)
    torch.testing.assert_close(again.final, run.final, rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"steps": 0}, "steps"), ({"lr": -1.0}, "lr"), ({"optimizer": "lbfgs"}, "optimizer"),
     ({"penalty": {"V": 1.0}}, "penalty"), ({"decay": 0.0}, "decay")],
)  # fmt: skip
def test_bad_arguments_name_the_parameter(kwargs, name):
    w = torch.zeros(D, D, requires_grad=True)
    args = {"steps": 1, "lr": 0.1} | kwargs
    with pytest.raises(ConfigError, match=f"invalid {name}="):
        train(lambda _s: w.sum(), {"W": w}, **args)
    with pytest.raises(ConfigError, match="invalid weight="):
        LinearFeedForward(torch.zeros(2, 3))
