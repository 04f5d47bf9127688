"""``--device`` on ``simulate`` and ``sweep run`` and ``device=`` of the Python API's runs (issue 42 item 7;
docs/scaling.md, "Devices"), on this machine's devices: cpu (the default, the same numbers as before), a device it
lacks (one line naming the option, exit 2; a GPU machine skips those cases) and meta (``simulate``'s dry run:
shapes and the memory estimate, nothing allocated or written; refused elsewhere)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.config import ModelConfig
from sdeformer.config._batches import run_group, run_sweep
from sdeformer.core._errors import ConfigError
from sdeformer.experiments import memory_estimate, simulate

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: cuda is not missing here")
TINY = ["--tokens", "6", "--dim", "3", "--width", "8", "--layers", "5", "--save-every", "2"]


def _one_line(res, option: str) -> None:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.stderr.strip().count("\n") == 0, res.stderr
    assert res.stderr.startswith(f"error: invalid {option}=")


@NO_CUDA
@pytest.mark.parametrize("device", ["cuda", "cuda:1", "gpu", "mps"])
def test_a_device_this_machine_lacks_is_one_line_naming_the_option(device, tmp_path):
    """Wrong model it fails: the option passed on to torch, which raises its own error deep in the run."""
    _one_line(CliRunner().invoke(app, ["simulate", *TINY, "--device", device]), "--device")
    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nbase: {tokens: 4, dim: 3, layers: 2, width: 8}\naxes: {beta: [1.0, 2.0]}\n")
    res = CliRunner().invoke(app, ["sweep", "run", str(spec), "--out", str(tmp_path / "out"), "--device", device])
    _one_line(res, "--device")
    assert not (tmp_path / "out").exists()  # refused before the folder is made
    with pytest.raises(ConfigError, match=r"invalid device="):
        run_sweep([ModelConfig(tokens=4, dim=3, width=8, layers=2)], device=device)
    with pytest.raises(ConfigError, match=r"invalid device="):
        simulate(ModelConfig(tokens=4, dim=3, width=8, layers=2), device=device)


def test_meta_is_simulates_dry_run_with_the_runs_shapes_and_memory_estimate(tmp_path):
    """The dry run reports what a run would hold without running it: its saved states are the ones a real run
    saves (layers 0, 2, 4 and the last, 5: ceil(5 / 2) + 1), its estimate is ``memory_estimate`` of the config.
    Wrong models it fails: floor(layers / save_every) + 1 saved states, a run made or a folder written."""
    res = CliRunner().invoke(app, ["simulate", *TINY, "--device", "meta", "--out", str(tmp_path / "run"), "--json"])
    assert res.exit_code == 0, res.output
    dry = json.loads(res.stdout)
    cfg = ModelConfig(tokens=6, dim=3, width=8, layers=5, save_every=2)
    saved = len(simulate(cfg).layers)
    assert dry["shapes"]["saved_states"] == [saved, 6, 3] == [math.ceil(5 / 2) + 1, 6, 3]
    assert dry["memory_estimate_bytes"] == memory_estimate(cfg) and dry["attention_method"] == "exact"
    assert dry["fits"] is True and not (tmp_path / "run").exists()
    res = CliRunner().invoke(app, ["--max-memory", "1K", "simulate", *TINY, "--device", "meta"])
    assert res.exit_code == 0 and "would be refused" in res.stdout  # a dry run reports, never refuses
    with pytest.raises(ConfigError, match=r"invalid device='meta'.*a dry run: sdeformer simulate --device meta"):
        run_group([cfg], device="meta")  # the Python API's runs: one line, no meta tensor reaches the model


def test_cpu_is_the_default_and_simulate_json_keeps_its_memory_and_method_fields():
    """``--device cpu`` and ``device="cpu"`` are the runs as before (bit for bit); ``simulate --json`` keeps
    ``memory_estimate_bytes`` and ``attention_method`` (issue 42's names)."""
    cfg = ModelConfig(tokens=6, dim=3, width=8, layers=5, save_every=2)
    a, b = simulate(cfg), simulate(cfg, device=torch.device("cpu"))
    assert np.array_equal(a.energy, b.energy) and np.array_equal(a.mean_cos, b.mean_cos)
    res = CliRunner().invoke(app, ["simulate", *TINY, "--device", "cpu", "--json"])
    assert res.exit_code == 0 and res.stderr == ""  # on the CPU nothing leaves a device: no notice
    out = json.loads(res.stdout)
    assert out["memory_estimate_bytes"] == memory_estimate(cfg) and out["attention_method"] == "exact"
    assert out["final_energy"] == pytest.approx(a.final_energy, rel=1e-12)


def test_the_notice_says_what_leaves_the_device():
    from sdeformer.experiments._device import notice

    assert "observables copied to the CPU" in notice("simulate", "cuda")
    assert "observables are computed" in notice("sweep", "cuda") and "to the CPU" in notice("sweep", "cuda")
