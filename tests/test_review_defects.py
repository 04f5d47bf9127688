"""Defects found by review, each pinned by a test that failed before its fix: cached results keyed by the
full config, random-batch shuffles from the run's streams, no silently ignored attention parameters,
ConfigError from the sweep engine, atomic practice figures, derived (not adjacent) seeds in the width coupling."""

import json

import pytest
import torch

import sdeformer.dynamics.coupling as coupling
import sdeformer.plots as plots
from sdeformer import MLPNoise, StochasticTransformer, uniform_sphere
from sdeformer.attention.softmax import RandomBatchAttention, SoftmaxAttention
from sdeformer.config import ModelConfig
from sdeformer.core.errors import ConfigError
from sdeformer.dynamics.engine import run_group
from sdeformer.experiments import figure1
from sdeformer.practice.report import probe_section

pytestmark = pytest.mark.usefixtures("one_thread")


def _tiny_figure1_configs(seed: int = 0) -> dict[str, ModelConfig]:
    base = ModelConfig(
        tokens=6, dim=4, width=16, layers=20, horizon=1.0, attention="off", su=0.0, sw=0.0, seed=seed, save_every=5
    )
    return {act: base.replace(activation=act) for act in ("relu", "tanh")}


def test_figure1_cache_is_keyed_by_the_full_config(tmp_path, monkeypatch):
    """A seed-1 run in a folder holding a seed-0 run must simulate seed 1, not relabel the seed-0 arrays."""
    monkeypatch.setattr(figure1, "figure1_configs", _tiny_figure1_configs)
    calls = []
    monkeypatch.setattr(figure1, "run_sweep", lambda configs, **kw: calls.append(1) or _run_sweep(configs, **kw))
    seed0 = figure1.run_and_write(tmp_path / "shared", seed=0)
    seed1 = figure1.run_and_write(tmp_path / "shared", seed=1)
    fresh1 = figure1.run_and_write(tmp_path / "fresh", seed=1)
    assert seed1.final == fresh1.final and seed1.final != seed0.final
    assert len(calls) == 3 * 2  # one job per activation
    again = figure1.run_and_write(tmp_path / "shared", seed=1)  # now the cache matches: reused
    assert len(calls) == 3 * 2 and again.final == seed1.final


_run_sweep = figure1.run_sweep


def test_random_batch_shuffles_come_from_the_run_seed():
    x0 = uniform_sphere(12, 3, seed=0, dtype=torch.float64)
    attention = RandomBatchAttention(SoftmaxAttention(), 3)
    model = StochasticTransformer(8, 1.0, noise=MLPNoise("relu", 16, 0.1, 0.1), attention=attention)
    assert torch.equal(model.run(x0, seed=7).x, model.run(x0, seed=7).x)
    assert not torch.equal(model.run(x0, seed=7).x, model.run(x0, seed=8).x)


def test_softmax_attention_rejects_shorthand_with_matrices():
    eye = torch.eye(3)
    for kwargs in ({"beta": 2.0, "Q": eye}, {"scale": -1.0, "V": eye}, {"beta": 1.0, "K": eye}):
        with pytest.raises(ConfigError):
            SoftmaxAttention(**kwargs)
    assert (SoftmaxAttention().beta, SoftmaxAttention().scale) == (1.0, 1.0)  # the shorthand's defaults
    x = uniform_sphere(5, 3, seed=1, dtype=torch.float64)
    assert torch.allclose(SoftmaxAttention(V=-eye.double()).drift(x), SoftmaxAttention(scale=-1.0).drift(x))


def test_run_group_raises_config_error_for_mixed_groups():
    configs = [ModelConfig(tokens=4, dim=3, layers=2), ModelConfig(tokens=5, dim=3, layers=2)]
    with pytest.raises(ConfigError):
        run_group(configs)


def _probe_record() -> dict:
    stats = {"mean_cos": [0.1, 0.2], "energy": [0.7, 0.6], "clusters": [4.0, 3.0]}
    noise = {"activation": "gelu", "su": 0.2, "sw": 0.0, "width": 8, "dt": 1.0, "samples": 1, "cluster_threshold": 0.95}
    theory = {"horizon": 1.0, "dim": 384, "kappa1": 0.01, "lambda_bar": -1.0, "lambda_bar_prime": -0.5}
    return {
        "text": "a b c",
        "n_tokens": 4,
        "layers": ["embeddings", "layer1"],
        **stats,
        "noise": noise,
        "theory": {**theory, "synchronizes": True},
        "noise_scales": [{"scale": 1.0, **stats}],
    }


def test_practice_report_writes_figures_atomically(tmp_path, monkeypatch):
    written = []
    real = plots.atomic_write_bytes
    monkeypatch.setattr(plots, "atomic_write_bytes", lambda path, data: written.append(path) or real(path, data))
    (tmp_path / "probe_x.json").write_text(json.dumps(_probe_record()))
    section = probe_section(tmp_path, tmp_path)
    assert section is not None and written == [tmp_path / "probe_x.png"]
    assert "sU = 0.2, sW = 0" in section.paragraphs[0]


def test_width_coupling_replicates_use_disjoint_seeds(monkeypatch):
    """Replicate seeds s and s + 1 must not share a random stream (seed + 1 reused the next replicate's path)."""
    used: dict[int, set] = {}
    real_path, real_run = coupling.BrownianPath, StochasticTransformer.run

    def path(shape, steps, seed, *args):
        used[current].add(seed)
        return real_path(shape, steps, seed, *args)

    def run(self, x0, seed=None, *args, **kwargs):
        if seed is not None:
            used[current].add(seed)
        return real_run(self, x0, *((seed,) if seed is not None else ()), *args, **kwargs)

    monkeypatch.setattr(coupling, "BrownianPath", path)
    monkeypatch.setattr(StochasticTransformer, "run", run)
    x0 = uniform_sphere(3, 3, batch=(2,), seed=0, dtype=torch.float64)
    for current in (0, 1):
        used[current] = set()
        coupling.width_coupled(x0, [8], 2, 1.0, "relu", 0.1, 0.1, None, seed=current)
    assert used[0] and used[1] and not used[0] & used[1]


def test_random_batch_attention_in_the_sde_draws_from_the_run_streams():
    """Two SDE solves with the same seed and random-batch attention are identical (no hidden generator)."""
    from sdeformer import GaussianField, LimitSDE, make_solver

    x0 = uniform_sphere(12, 4, seed=3, dtype=torch.float64)
    sde = LimitSDE(GaussianField("relu", 0.1, 0.1), RandomBatchAttention(SoftmaxAttention(), 4))
    first, second = (make_solver(sde, 20, 1.0).run(x0, seed=7).final for _ in range(2))
    assert torch.equal(first, second)
