"""Sweep ``times:`` follow the peers' rule (``loop.SaveAt(times=...)``): each time t in [0, T] is recorded at the
first layer whose accumulated time k dt reaches t, and a multiple of dt exactly at its layer (as before)."""

from __future__ import annotations

import functools
import math

import pandas as pd
import pytest
import torch

from sdeformer.config import ModelConfig
from sdeformer.core._errors import ConfigError
from sdeformer.dynamics._loop import SaveAt
from sdeformer.observables import mean_cosine
from sdeformer.sweeps import expand, parse_spec, run
from sdeformer.sweeps._points import record_layers

BASE = {"tokens": 4, "dim": 3, "width": 16, "layers": 10, "horizon": 1.0, "dtype": "float64"}  # dt = 0.1


def spec(times, **extra):
    return parse_spec({"name": "times", "base": BASE, "seeds": 2, "observables": ["mean_cos"], "times": times, **extra})


def test_a_time_between_layers_is_recorded_at_the_first_layer_reaching_it():
    cfg = ModelConfig(**BASE)
    layers = record_layers(cfg, (0.33,))
    assert layers == (4,)  # accumulated time 0.4 >= 0.33 > 0.3
    traj = cfg.build().run(cfg.initial_tokens(), saveat=SaveAt(times=[0.33]))
    assert traj.steps.tolist() == [0, *layers]  # the one rule: SaveAt(times=...) saves the same layer
    # the check can fail: the nearest-step rule records layer 3 (t = 0.3), the floor rule too
    assert round(0.33 / cfg.horizon * cfg.layers) == 3 != layers[0]
    assert math.floor(0.33 / cfg.horizon * cfg.layers) == 3 != layers[0]


def test_multiples_of_dt_are_recorded_where_they_were():
    """The rule before (t / dt rounded, t a multiple of dt) and this one agree on every multiple of dt."""
    cfg = ModelConfig(**BASE)
    multiples = tuple(k * 0.1 for k in range(11))  # 0.30000000000000004, 0.6000000000000001, ...
    assert record_layers(cfg, multiples) == tuple(range(11))
    assert record_layers(cfg, (0.0, 0.3, 0.7, 1.0)) == (0, 3, 7, 10)
    assert [r.layers for r in expand(spec([0.0, 0.5, 1.0]))] == [(0, 5, 10)] * 2


def test_times_that_share_a_layer_are_recorded_once_and_past_the_horizon_refused():
    cfg = ModelConfig(**BASE)
    assert record_layers(cfg, (0.31, 0.33, 0.4, 0.95)) == (4, 10)
    with pytest.raises(ConfigError, match="times") as info:
        expand(spec([0.5, 1.2]))
    assert "1.2" in str(info.value) and "\n" not in str(info.value)


def test_a_sweep_records_the_state_of_the_reaching_layer(tmp_path):
    """The table's row for t = 0.33 is layer 4, t = 0.4, with the observable of that layer's state."""
    out = run(spec([0.33, 1.0]), tmp_path)
    assert out["done"] == 2 and out["error"] == 0
    df = pd.read_parquet(tmp_path / "table").sort_values(["replicate", "layer"])
    assert df["layer"].tolist() == [4, 10, 4, 10]
    assert df["t"].tolist() == pytest.approx([0.4, 1.0, 0.4, 1.0], abs=1e-12)
    for r in expand(spec([0.33, 1.0])):
        c = r.config
        run_one = functools.partial(c.build().run, c.initial_tokens(), seed=c.seed, rng=c.rng)
        traj = run_one(saveat=SaveAt(times=[0.33]))
        [recorded] = df.loc[(df["replicate"] == r.replicate) & (df["layer"] == 4), "mean_cos"].tolist()
        assert recorded == pytest.approx(float(mean_cosine(traj.final)), abs=1e-12)
        layer3 = run_one(saveat=SaveAt(steps=[3]))
        assert not torch.isclose(mean_cosine(layer3.final), mean_cosine(traj.final))  # a wrong rule would differ
