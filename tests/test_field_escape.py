"""``escape`` (docs/field.md, "Training-induced escape from clustering"): a per-layer linear map trained inside the
noisy model makes the tokens' mean cosine peak and turn down near the final layers; with the map frozen (W = 0) the
cosine only rises to its plateau. The mechanism, computed here independently of the training: at W = 0 the
gradient of the final mean cosine with respect to W_l is concentrated in the last layers (a perturbation of an
early layer relaxes back into the noisy cluster before the end), so an L2-penalised map grows there first.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest
import torch

import sdeformer as sdf
from sdeformer.experiments._field import _escape as es

SMALL = es.EscapeSettings(tokens=12, layers=8, horizon=8.0, steps=30, paths=2, eval_paths=4, seeds=3)


def test_mean_cosine_is_the_pair_average():
    x = sdf.uniform_sphere(7, 4, seed=3, dtype=torch.float64)
    pairs = [float(x[i] @ x[j]) for i, j in itertools.permutations(range(7), 2)]
    assert abs(float(es.mean_cosine(x)) - sum(pairs) / len(pairs)) < 1e-14


def test_gradient_at_zero_map_sits_in_the_last_layers():
    """Wrong model it fails: a noise-free model started spread out (no cluster to relax into) spreads it evenly."""
    from sdeformer.noise import PartialNoise
    from sdeformer.noise._mlp import MLPNoise
    from sdeformer.noise._scaled import Scaled
    from sdeformer.train import LinearFeedForward, noisy_model

    s = SMALL
    x0 = es._tokens(s, 0).expand(8, -1, -1)
    noise = PartialNoise(Scaled(MLPNoise("tanh", 32, 0.5, 0.5), s.temperature), s.share)
    w = torch.zeros(s.layers, s.dim, s.dim, dtype=torch.float64, requires_grad=True)
    run = noisy_model(s.layers, s.horizon, noise, s.beta, LinearFeedForward(w)).run(x0, seed=list(range(8)))
    es.mean_cosine(run.final).mean().backward()
    g = w.grad.flatten(1).norm(dim=1)  # (L,)
    assert g[-1] > 10 * g[: s.layers // 2].max(), g
    wrong = torch.zeros_like(w, requires_grad=True)
    spread = sdf.uniform_sphere(12, 3, seed=1, dtype=torch.float64)
    es.mean_cosine(noisy_model(s.layers, 0.5, None, s.beta, LinearFeedForward(wrong)).run(spread).final).backward()
    g = wrong.grad.flatten(1).norm(dim=1)
    assert not g[-1] > 10 * g[: s.layers // 2].max(), g


def test_trained_map_escapes_and_frozen_map_does_not():
    per = es.one_seed(dataclasses.replace(SMALL, seeds=1), 0)
    trained, frozen = per["trained"], per["frozen"]
    assert trained.max() > 0.85 and trained.argmax() < SMALL.layers  # clustered, then leaves
    assert trained.max() - trained[-1] > 0.3, trained
    assert frozen.max() - frozen[-1] < SMALL.drop, frozen  # the wrong model: no turn-down
    assert per["norm"][-1] > 2 * per["norm"][: SMALL.layers // 2].max()  # the map sits in the last layers
    assert per["loss_end"] < 0.5 * per["loss_start"]


@pytest.mark.slow
def test_check_holds_over_seeds_and_fails_the_frozen_map():
    result = es.run(SMALL)
    assert result.escapes and not result.frozen_escapes, (result.turn_down_lo, result.frozen_turn_down_hi)
    assert result.holds


def test_registered_with_its_settings():
    exp = sdf.EXPERIMENTS["escape"]
    assert "field" in exp.groups
    assert [p.name for p in es.SETTINGS][:3] == ["dim", "tokens", "layers"]
