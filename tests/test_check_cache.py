"""Finished theorem checks are reused on a rerun with the same settings and recomputed for other settings."""

from __future__ import annotations

from sdeformer.experiments import lyapunov as lyap
from sdeformer.experiments import rates


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
