"""Finished theorem checks are reused on a rerun with the same settings and recomputed for other settings."""

from __future__ import annotations

import pytest

from sdeformer.config import ModelConfig
from sdeformer.experiments import _figure1 as figure1, _lyapunov as lyap
from sdeformer.experiments._rates import measure as rates


def test_lyapunov_check_is_cached_by_its_settings(tmp_path, monkeypatch):
    settings = [("relu", 4, 0.1)]
    first = lyap.run_and_write(tmp_path, settings, runs=4, steps=20, horizon=0.5)
    calls = []
    real = lyap.lyapunov
    monkeypatch.setattr(lyap, "lyapunov", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = lyap.run_and_write(tmp_path, settings, runs=4, steps=20, horizon=0.5)
    assert calls == [] and again == first
    lyap.run_and_write(tmp_path, settings, runs=4, steps=21, horizon=0.5)
    assert calls == [1]


def test_rate_check_is_cached_by_its_settings(tmp_path, monkeypatch):
    first = rates.run_and_write(tmp_path, "width", quick=True, runs=4)
    calls = []
    real = rates.measure
    monkeypatch.setattr(rates, "measure", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = rates.run_and_write(tmp_path, "width", quick=True, runs=4)
    assert calls == [] and again.slope == first.slope and (again.samples == first.samples).all()
    rates.run_and_write(tmp_path, "width", quick=True, runs=5)
    assert calls == [1]


def _tiny_figure1_configs(seed: int = 0) -> dict[str, ModelConfig]:
    base = ModelConfig(
        tokens=6, dim=4, width=16, layers=20, horizon=1.0, attention="off", su=0.0, sw=0.0, seed=seed, save_every=5
    )
    return {act: base.replace(activation=act) for act in ("relu", "tanh")}


@pytest.mark.usefixtures("one_thread")
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
