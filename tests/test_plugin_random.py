"""The plugin of docs/extending.md's "Randomness" (tests/plugin_random.py) draws its normals from ``source``:
check_part passes it, a run is reproduced by its seed, a batched sweep equals its runs alone; the same part
drawing from torch.randn instead fails check_part (the check can fail)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import sdeformer as sdf
from sdeformer import plugins
from sdeformer.config._batches import run_sweep
from sdeformer.registry import NOISES
from sdeformer.testing import PartCheckError, check_part

PLUGIN = Path(__file__).with_name("plugin_random.py")
CFG: dict[str, Any] = dict(noise="random_linear", tokens=5, dim=3, layers=8, horizon=1.0, dtype="float64")


@pytest.fixture(scope="module", autouse=True)
def plugin():
    plugins.load_plugins([str(PLUGIN)])
    yield sys.modules["sdeformer_plugin_plugin_random"]
    NOISES.entries.pop("random_linear", None)
    plugins._loaded.remove(str(PLUGIN.resolve()))
    plugins._sources.pop(str(PLUGIN.resolve()), None)
    sys.modules.pop("sdeformer_plugin_plugin_random", None)


def test_the_documented_plugin_passes_check_part():
    part = sdf.ModelConfig(**CFG).build().noise
    assert "increment: shape, dtype, finite; batched equals unbatched" in check_part(part, entry="noise:random_linear")


def test_its_runs_are_reproduced_by_their_seed_and_batch_alike():
    configs = [sdf.ModelConfig(**CFG, seed=s) for s in (0, 1, 0)]
    runs = [c.build().run(c.initial_tokens(), seed=c.seed).x for c in configs]
    assert torch.equal(runs[0], runs[2]) and not torch.allclose(runs[0], runs[1])
    batched = run_sweep([sdf.ModelConfig(**CFG, seed=s, beta=b) for s, b in ((0, 1.0), (1, 2.0))])
    for (s, b), traj in zip(((0, 1.0), (1, 2.0)), batched):
        alone = sdf.ModelConfig(**CFG, seed=s, beta=b)
        torch.testing.assert_close(traj.x, alone.build().run(alone.initial_tokens(), seed=s).x, rtol=0, atol=1e-12)


def test_drawing_from_torch_randn_instead_fails_check_part(plugin):
    class GlobalDraws(plugin.RandomLinear):
        def increment(self, y, dt, source):
            a = torch.randn(y.shape[-1], y.shape[-1], dtype=y.dtype)  # the global generator: wrong
            ay = y @ a.T
            return (dt * self.strength) ** 0.5 * (ay - (ay * y).sum(-1, keepdim=True) * y)

    with pytest.raises(PartCheckError, match="batched"):
        check_part(GlobalDraws())
