"""The random source selected by name: ``core._rng.make_streams``, ``ModelConfig.rng``, the engine, the
checkpointed run, sweep specs and the CLI. With rng="counter" a batched engine run equals the unbatched runs
bit for bit in any grouping, and a resumed run equals an uninterrupted one; the default keeps its numbers
(the pinned values of tests/test_checks_jobs.py) and its config hashes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import sdeformer.experiments._simulate as sim
from problems import Interrupted, interrupt_after
from sdeformer.cli import app
from sdeformer.config import ModelConfig, _batches as engine
from sdeformer.core._counter import CounterStreams
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import RNG_KINDS, Streams, make_streams
from sdeformer.core._splitmix import SplitMixStreams
from sdeformer.io._hashing import config_hash
from sdeformer.sweeps._spec import parse_spec

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

SMALL: dict[str, Any] = dict(tokens=6, dim=4, width=32, layers=5, horizon=1.0, su=0.1, sw=0.1)


def test_make_streams_gives_each_kind_and_refuses_other_names_in_one_line():
    assert isinstance(make_streams("generator", 3, (2,)), Streams)
    counter = make_streams("counter", [3, 4], (2,))
    assert isinstance(counter, CounterStreams) and counter.seeds == [3, 4]
    assert torch.equal(counter.randn((5,)), CounterStreams([3, 4], (2,)).randn((5,)))
    mixed = make_streams("splitmix", [3, 4], (2,))
    assert isinstance(mixed, SplitMixStreams) and torch.equal(
        mixed.randn((5,)), SplitMixStreams([3, 4], (2,)).randn((5,))
    )
    for bad in ("philox", "Counter", "", None, 1):
        with pytest.raises(ConfigError) as info:
            make_streams(bad, 0, ())  # pyright: ignore[reportArgumentType]
        assert "rng" in str(info.value) and "\n" not in str(info.value)
    assert RNG_KINDS == ("generator", "counter", "splitmix")


def test_the_config_field_defaults_to_the_generator_and_keeps_the_hashes():
    cfg = ModelConfig(**SMALL)
    assert cfg.rng == "generator" and "rng" not in cfg.to_dict()  # recorded runs keep their hashes
    counter = cfg.replace(rng="counter")
    assert counter.to_dict()["rng"] == "counter" and config_hash(counter.to_dict()) != config_hash(cfg.to_dict())
    assert engine.group_key(counter) != engine.group_key(cfg)  # never batched together
    with pytest.raises(ConfigError, match="rng"):
        ModelConfig(**SMALL, rng="philox")
    spec = parse_spec({"base": {**SMALL, "rng": "counter"}, "seeds": 2, "observables": ["energy"]})
    assert spec.base["rng"] == "counter"


def test_counter_engine_runs_equal_the_unbatched_runs_bit_for_bit_in_any_grouping(one_thread):
    configs = [ModelConfig(**SMALL, seed=s, rng="counter") for s in (5, 6, 7)]
    alone = [c.build().run(c.initial_tokens(), seed=c.seed, rng="counter").x for c in configs]  # (S, N, d)
    whole = engine.run_group(configs).x  # (S, 3, N, d)
    parts = [engine.run_group(configs[:1]).x, engine.run_group(configs[1:]).x]
    for k, x in enumerate(alone):
        assert torch.equal(whole[:, k], x)
    assert torch.equal(torch.cat(parts, dim=1), whole)
    for traj, x in zip(engine.run_sweep(configs), alone):
        assert torch.equal(traj.x, x)
    generator = engine.run_group([c.replace(rng="generator") for c in configs]).x  # the source is really used
    assert not torch.equal(generator, whole)


def test_a_resumed_counter_run_equals_an_uninterrupted_one_bit_for_bit(tmp_path, monkeypatch, one_thread):
    monkeypatch.setattr(sim, "CHECKPOINT_LAYERS", 4)
    cfg = ModelConfig(**{**SMALL, "layers": 10}, rng="counter")
    sim.simulate(cfg, tmp_path / "full")
    with pytest.raises(Interrupted):
        sim.simulate(cfg, tmp_path / "resumed", progress=interrupt_after(6))
    draws = int(np.load(tmp_path / "resumed" / "checkpoint.npz")["generator_states"].item())
    assert draws == 4 * 4  # the state is the draw counter: 4 layers of U, W, bU, bW
    sim.simulate(cfg, tmp_path / "resumed")
    full, resumed = (np.load(tmp_path / name / "trajectory.npz")["x"] for name in ("full", "resumed"))
    assert np.array_equal(full, resumed)

    monkeypatch.setattr(CounterStreams, "set_state", lambda self, states: None)  # wrong: resume from draw 0
    with pytest.raises(Interrupted):
        sim.simulate(cfg, tmp_path / "stateless", progress=interrupt_after(6))
    sim.simulate(cfg, tmp_path / "stateless")
    assert not np.array_equal(np.load(tmp_path / "stateless" / "trajectory.npz")["x"], full)


def test_the_cli_takes_rng_and_exits_2_for_a_bad_name():
    tiny = ["simulate", "--tokens", "6", "--dim", "4", "--width", "16", "--layers", "3", "--json"]
    bad = CliRunner().invoke(app, [*tiny, "--rng", "philox"])
    assert bad.exit_code == 2 and "rng" in bad.output
    assert CliRunner().invoke(app, [*tiny, "--rng", "counter"]).exit_code == 0


def test_the_generator_loop_on_a_gpu_warns_once_and_the_cpu_never():
    """On a GPU the per-run generator loop is one launch per run and draw: say so, once."""
    import warnings

    from sdeformer.core._rng import GPU_LOOP_RUNS, launch_warning

    launch_warning.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = launch_warning(torch.device("cuda"), GPU_LOOP_RUNS)
        again = launch_warning(torch.device("cuda"), GPU_LOOP_RUNS)
    assert text is not None and "rng='counter'" in text and again == text and len(caught) == 1
    assert launch_warning(torch.device("cpu"), 10**4) is None
    assert launch_warning(torch.device("cuda"), GPU_LOOP_RUNS - 1) is None
