"""Benchmarks that hold on a busy machine: contenders interleaved over rounds, per-round
ratios that a changing load cancels out of, the load and thread count recorded, one torch thread unless
asked, the rng part's table, and the engine's warning for oversubscribed threads. Speeds are never tested."""

from __future__ import annotations

import warnings

import benchmarks._rng as rng_part
import benchmarks._run as runner
import benchmarks._timing as timing
import pytest
import torch

from sdeformer.core import _threads as threads
from sdeformer.core._errors import ConfigError

CPU = torch.device("cpu")


def _schedule_is_interleaved(calls: list[str], names: list[str]) -> bool:
    """Round i runs every contender once, in the order of ``names`` rotated by i."""
    k = len(names)
    rounds = [calls[i : i + k] for i in range(0, len(calls), k)]
    return all(r == names[i % k :] + names[: i % k] for i, r in enumerate(rounds))


def test_contenders_run_interleaved_and_rotated():
    calls: list[str] = []
    contenders = {name: (lambda name=name: calls.append(name) or name) for name in "ABC"}
    record, last = timing.interleaved(contenders, CPU, rounds=4)
    assert calls == list("ABCBCACABABC") and _schedule_is_interleaved(calls, list("ABC"))
    assert record["order"][1] == ["B", "C", "A"] and last == {"A": "A", "B": "B", "C": "C"}
    assert {len(v) for v in record["seconds"].values()} == {4} and len(record["load_average"]) == 4
    assert record["torch_threads"] == torch.get_num_threads()
    assert not _schedule_is_interleaved(list("AAAABBBBCCCC"), list("ABC"))  # the wrong model: back to back
    with pytest.raises(ValueError, match="rounds"):
        timing.interleaved(contenders, CPU, rounds=0)


def test_the_per_round_ratio_cancels_a_load_that_changes_between_rounds(monkeypatch):
    """A fake clock: B costs 2x A, and the load multiplies the timings by 1, 5, then 2, two timings each. The
    ratio within each interleaved round is exactly 2; timing each contender back to back (the wrong model: all
    rounds of A, then all of B) reports 4x."""
    cost, load, calls = {"A": 1.0, "B": 2.0}, [1.0, 5.0, 2.0], []

    def fake_once(fn, device):
        name = fn()
        calls.append(name)
        return cost[name] * load[(len(calls) - 1) // 2], name

    monkeypatch.setattr(timing, "_once", fake_once)
    record, _ = timing.interleaved({"A": lambda: "A", "B": lambda: "B"}, CPU, rounds=3)
    r = timing.ratio(record["seconds"]["B"], record["seconds"]["A"])
    assert r["per_round"] == [2.0, 2.0, 2.0] and r["min"] == r["median"] == r["max"] == 2.0
    assert timing.spread(record["seconds"]["B"]) == {"min": 2.0, "median": 4.0, "max": 10.0}
    calls.clear()
    alone = [timing.interleaved({name: lambda name=name: name}, CPU, rounds=3)[0]["seconds"][name] for name in "AB"]
    assert timing.ratio(alone[1], alone[0])["median"] == 4.0  # A at loads 1, 1, 5; B at 5, 2, 2
    assert timing.ratio([3.0, 6.0], 1.5)["per_round"] == [2.0, 4.0]  # against a constant (a floor)


def test_the_runner_defaults_to_one_thread_and_records_the_conditions(monkeypatch):
    monkeypatch.setattr(runner, "peaks", lambda device, quick: {})
    import benchmarks._precision as precision_part

    monkeypatch.setattr(precision_part, "bench_precision", lambda device, quick, rounds: {"rounds_asked": rounds})
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        out = runner.run_benchmarks(("precision",), rounds=4)
        assert torch.get_num_threads() == 1 and out["machine"]["torch_threads"] == 1
        assert out["precision"]["rounds_asked"] == 4 and out["rounds"] == 4
        cond = out["precision"]["conditions"]
        assert len(cond["before"]["load_average"]) == 3 and cond["after"]["torch_threads"] == 1
        torch.set_num_threads(2)
        assert runner.run_benchmarks((), threads=None)["machine"]["torch_threads"] == 2  # None: as it is
        for bad in ({"rounds": 0}, {"threads": 0}, {"parts": ("nonsense",)}):
            with pytest.raises(ConfigError):
                runner.run_benchmarks(**bad)  # pyright: ignore[reportArgumentType]
    finally:
        torch.set_num_threads(before)


def test_the_rng_part_reports_rates_and_ratios_per_round(monkeypatch, one_thread):
    monkeypatch.setattr(rng_part, "BATCHES", (1, 3))
    monkeypatch.setattr(rng_part, "SHAPE", (4, 2))
    monkeypatch.setattr(rng_part, "PER_TIMING", 64)
    out = rng_part.bench_rng(CPU, quick=True, rounds=2)
    assert [r["batch"] for r in out["rows"]] == [1, 3]
    row = out["rows"][1]
    assert row["normals_per_timing"] == 3 * 8 * (64 // 24)
    for key in ("counter", "loop", "floor"):
        rate = row[f"{key}_normals_per_s"]
        assert 0 < rate["min"] <= rate["median"] <= rate["max"]
    assert len(row["counter_over_floor"]["per_round"]) == 2 and row["rounds"]["order"][1][0] == "loop"
    conditions = {"before": timing.conditions(), "after": timing.conditions()}
    text = runner.summary_rows({"rng": {**out, "conditions": conditions}, "rounds": 2, "machine": {"torch_threads": 1}})
    assert text[0][0].startswith("rng float32 batch 1: counter / torch.randn floor") and len(text) == 2
    assert text[1][0] == "conditions" and "2 rounds, 1 thread(s), load" in text[1][1]


def test_warn_threads_warns_once_when_threads_exceed_the_usable_cores(monkeypatch):
    threads._warn.cache_clear()
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        monkeypatch.setattr(threads, "usable_cores", lambda: 1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first, second = threads.warn_threads(), threads.warn_threads()
        assert len(caught) == 1 and issubclass(caught[0].category, RuntimeWarning)  # once, not every call
        assert first == second and first is not None and "set_num_threads(1)" in first and "\n" not in first
        monkeypatch.setattr(threads, "usable_cores", lambda: 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert threads.warn_threads() is None and not caught  # the threads fit: silent
    finally:
        torch.set_num_threads(before)
        threads._warn.cache_clear()
    assert threads.usable_cores() >= 1
