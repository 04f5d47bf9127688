"""Command line: JSON outputs parse and agree with the library; bad input exits 2 without a traceback."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import sdeformer as sdf
from problems import Interrupted, interrupt_after
from sdeformer.cli import app

runner = CliRunner()


def _json(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_kernel_json_matches_library():
    out = _json(["kernel", "--activation", "relu", "--dim", "64", "--bias-std", "0.1", "--json"])
    assert set(out) == {
        "activation",
        "dim",
        "su",
        "sw",
        "beta",
        "kappa1",
        "dkappa1",
        "lambda1",
        "lambda_bar",
        "lambda_bar_prime",
        "odd_field",
        "synchronizes",
    }
    k = sdf.kernel_theory("relu", 64, bias_std=0.1)
    assert out["lambda_bar"] == pytest.approx(k.lambda_bar) and out["synchronizes"] is True


def test_kernel_table_output():
    result = runner.invoke(app, ["kernel", "--activation", "tanh", "--dim", "8", "--su", "0", "--sw", "0"])
    assert result.exit_code == 0 and "lambda_bar" in result.stdout and "True" in result.stdout  # odd_field


def test_simulate_json_and_run_directory(tmp_path):
    args = [
        "simulate",
        "--tokens",
        "6",
        "--dim",
        "5",
        "--width",
        "32",
        "--layers",
        "20",
        "--save-every",
        "5",
        "--bias-std",
        "0.1",
        "--seed",
        "3",
        "--out",
        str(tmp_path / "run"),
        "--json",
    ]
    out = _json(args)
    assert out["layers"] == [0, 5, 10, 15, 20] and len(out["energy"]) == 5
    assert out["final_energy"] == pytest.approx(out["energy"][-1])
    assert out["config"]["su"] == 0.1 and out["config"]["sw"] == 0.1
    for name in ("config.json", "metrics.csv", "trajectory.npz", "summary.json", "energy.png"):
        assert (tmp_path / "run" / name).exists(), name
    assert not (tmp_path / "run" / "checkpoint.npz").exists()


def test_simulate_config_file_and_flag_override(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("tokens: 4\ndim: 3\nwidth: 16\nlayers: 10\nattention: 'off'\n")
    out = _json(["simulate", "--config", str(cfg), "--layers", "12", "--json"])
    assert out["config"]["tokens"] == 4 and out["config"]["layers"] == 12 and out["config"]["attention"] == "off"


def test_simulate_resumes_from_checkpoint(tmp_path, monkeypatch):
    from sdeformer.config import ModelConfig
    from sdeformer.experiments import _simulate as sim

    monkeypatch.setattr(sim, "CHECKPOINT_LAYERS", 10)
    cfg = ModelConfig(tokens=5, dim=4, width=16, layers=35, su=0.1, sw=0.1, dtype="float64")
    full = sim.simulate(cfg)

    with pytest.raises(Interrupted):
        sim.simulate(cfg, tmp_path, progress=interrupt_after(25))
    assert (tmp_path / "checkpoint.npz").exists()
    resumed = sim.simulate(cfg, tmp_path)
    assert resumed.energy == pytest.approx(full.energy, rel=1e-12)
    assert not (tmp_path / "checkpoint.npz").exists()


@pytest.mark.parametrize(
    "args,param",
    [
        (["kernel", "--activation", "swish"], "activation"),
        (["kernel", "--dim", "1"], "dim"),
        (["kernel", "--bias-std", "-1"], "bias_std"),
        (["simulate", "--width", "-3"], "width"),
        (["simulate", "--tokens", "0"], "tokens"),
        (["simulate", "--horizon", "nan"], "horizon"),
        (["simulate", "--config", "/nonexistent/file.toml"], "config"),
        (["reproduce", "table1", "--out", "/dev/null/x"], "/dev/null/x"),
    ],
)
def test_bad_input_exit_code_2_one_line(args, param):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert param in result.stderr and "Traceback" not in result.output + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_config_files(tmp_path):
    unknown = tmp_path / "u.toml"
    unknown.write_text("tokens = 4\nwidht = 3\n")
    broken = tmp_path / "b.yaml"
    broken.write_text("tokens: [1, 2\n")
    nan = tmp_path / "n.yaml"
    nan.write_text("horizon: .nan\n")
    for path, word in ((unknown, "widht"), (broken, "config"), (nan, "horizon")):
        result = runner.invoke(app, ["simulate", "--config", str(path)])
        assert result.exit_code == 2 and word in result.stderr, result.stderr


def test_real_process_prints_no_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "sdeformer", "kernel", "--activation", "nope"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "activation" in proc.stderr


def test_reproduce_table1_and_report(tmp_path):
    result = runner.invoke(app, ["reproduce", "table1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "table1.csv").read_text().splitlines()
    assert lines[0] == "activation,dim,sigma,kappa1,dkappa1,lambda1,lambda_bar" and len(lines) == 25
    html = (tmp_path / "index.html").read_text()
    assert "Table 1" in html and "unstated" in html.lower()
    # one wall time: the closing line's time stamp and duration and the report header's are the same number
    closing = result.stderr.strip().splitlines()[-1]
    match = re.fullmatch(r"\[ *([0-9.]+) s\] report written to (.+) in ([0-9.]+) s", closing)
    assert match and match[1] == match[3] and match[2] == str(tmp_path / "index.html"), result.stderr
    assert f"wall time {match[3]} s" in html
    stamps = [float(s) for s in re.findall(r"^\[ *([0-9.]+) s\]", result.stderr, re.M)]
    assert stamps == sorted(stamps) and stamps[-1] == float(match[3])  # the closing line is the last


def test_simulate_offers_bfloat16(tmp_path):
    """The CLI's dtype choice covers every dtype ModelConfig accepts, bfloat16 included."""
    from sdeformer.cli import app

    args = ["simulate", "--dtype", "bfloat16", "--tokens", "4", "--dim", "4", "--width", "8", "--layers", "3", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["energy"][-1] >= 0
