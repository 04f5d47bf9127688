"""``escape`` (docs/field.md, "Training-induced escape from clustering"): a per-layer linear map trained inside the
noisy model makes the tokens' mean cosine peak and turn down near the final layers; with the map frozen (W = 0) the
cosine only rises to its plateau. The mechanism, computed here independently of the training: at W = 0 the
gradient of the final mean cosine with respect to W_l is concentrated in the last layers (a perturbation of an
early layer relaxes back into the noisy cluster before the end), so an L2-penalised map grows there first.
"""

from __future__ import annotations

import dataclasses
import itertools
import json

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
    assert w.grad is not None
    g = w.grad.flatten(1).norm(dim=1)  # (L,)
    assert g[-1] > 10 * g[: s.layers // 2].max(), g
    wrong = torch.zeros_like(w, requires_grad=True)
    spread = sdf.uniform_sphere(12, 3, seed=1, dtype=torch.float64)
    es.mean_cosine(noisy_model(s.layers, 0.5, None, s.beta, LinearFeedForward(wrong)).run(spread).final).backward()
    assert wrong.grad is not None
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
    assert result.leave_seeds == SMALL.seeds and result.frozen_leave_seeds == 0
    assert result.leave is not None and result.leave_lo is not None
    assert result.leave > SMALL.layers - 2 and result.leave_lo > SMALL.layers / 2  # near the final layers


def test_command_json_names_and_a_bad_setting(tmp_path):
    from typer.testing import CliRunner

    from sdeformer.cli import app

    assert "field" in sdf.EXPERIMENTS["escape"].groups
    tiny = ["tokens=6", "layers=3", "horizon=3", "steps=2", "seeds=2", "paths=1", "eval_paths=1"]
    args = ["escape", "--quick", "--json", "--out", str(tmp_path), *[a for t in tiny for a in ("--set", t)]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{") :])
    for name in ("peak", "turn_down", "frozen_peak", "frozen_turn_down"):
        assert data[name + "_lo"] <= data[name] <= data[name + "_hi"], name
    assert len(data["cosine"]) == len(data["cosine_frozen"]) == 4 and isinstance(data["escapes"], bool)
    refused = CliRunner().invoke(app, ["escape", "--out", str(tmp_path / "x"), "--set", "share=2"])
    assert refused.exit_code == 2 and "share" in refused.output and "Traceback" not in refused.output
