"""Every stage of the SPDE report is a cached part (experiments._results.cached_stage): a rerun of a finished
folder computes nothing, another seed or quick flag recomputes, a missing output or a damaged part is redone."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from sdeformer.experiments import _results as results
from sdeformer.experiments._spde import run as sp


def test_a_stage_is_computed_once_per_key(tmp_path):
    calls = Counter()

    def compute():
        calls["n"] += 1
        return {"rows": [1.5, 2]}

    first = results.cached_stage(tmp_path, {"seed": 0}, "rates", compute)
    again = results.cached_stage(tmp_path, {"seed": 0}, "rates", compute)
    assert first == again == {"rows": [1.5, 2]} and calls["n"] == 1
    results.cached_stage(tmp_path, {"seed": 1}, "rates", compute)  # another key
    assert calls["n"] == 2
    results.cached_stage(tmp_path, {"seed": 1}, "rates", compute, needs=[tmp_path / "figure.npz"])  # output gone
    assert calls["n"] == 3
    part = tmp_path / "rates.json"
    part.write_text(part.read_text()[:-3])  # damaged: not JSON
    assert results.cached_stage(tmp_path, {"seed": 1}, "rates", compute) == {"rows": [1.5, 2]} and calls["n"] == 4
    assert json.loads(part.read_text())["value"] == {"rows": [1.5, 2]}


@pytest.fixture
def counted(monkeypatch):
    """The SPDE report's checks replaced by counting stand-ins (the stages' caching is what is under test)."""
    calls = Counter()

    def stand_in(name, value):
        def run(*args, **kwargs):
            calls[name] += 1
            if name == "convergence":
                for dim in (2, 3):
                    (args[0] / f"convergence_d{dim}.npz").write_bytes(b"")
            return value

        return run

    monkeypatch.setattr(sp, "SHOWCASE", {})
    for name in ("rate_rows", "dominant_rows", "moment_rows", "convergence_rows"):
        monkeypatch.setattr(sp.study, name, stand_in(name.removesuffix("_rows"), [{"name": name, "x": 1.0}]))
    monkeypatch.setattr(sp.study, "resolution_example", stand_in("resolution", {"resolved": True}))
    monkeypatch.setattr(sp.study, "check_records", lambda report: [])
    monkeypatch.setattr(sp, "w2_check", stand_in("w2", {"slope": -1.0}))
    monkeypatch.setattr(sp, "sphere_check", stand_in("w2_sphere", {"slope": -1.0}))
    monkeypatch.setattr(sp, "covariance_records", stand_in("covariance", [{"x": 1.0}]))
    monkeypatch.setattr(sp, "sliced_check", stand_in("w2_sphere_sliced", {"slope": -1.0}))
    monkeypatch.setattr(sp, "large_check", stand_in("w2_large", {"w2": {}, "energy": []}))
    return calls


def test_a_finished_spde_report_reruns_without_computing(tmp_path, counted):
    first = sp.run_and_write(tmp_path, quick=True, seed=0)
    assert set(counted.values()) == {1} and len(counted) == 10
    again = sp.run_and_write(tmp_path, quick=True, seed=0)
    assert again == first and set(counted.values()) == {1}  # nothing recomputed
    sp.run_and_write(tmp_path, quick=True, seed=1)  # another seed: every stage again
    assert set(counted.values()) == {2}
    (tmp_path / "convergence_d3.npz").unlink()  # the figure's data gone: that stage again, the rest reused
    sp.run_and_write(tmp_path, quick=True, seed=1)
    assert counted["convergence"] == 3 and counted["rate"] == 2
