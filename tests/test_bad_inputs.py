"""Bad input: every case of docs/bad-inputs.md is refused with one line naming the parameter (exit code 2 on the
command line, ConfigError in Python), or gives a correct answer. Each case is a regression test."""

from __future__ import annotations

import json
import math
from typing import cast

import numpy as np
import pytest
import torch
from benchmarks._suite import app as suite
from typer.testing import CliRunner

import sdeformer as sdf
from problems import Interrupted, interrupt_after
from sdeformer.cli import app
from sdeformer.config import ModelConfig, load_config_file
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams, seed_list
from sdeformer.core._sphere import uniform_sphere
from sdeformer.experiments import _simulate as sim
from sdeformer.observables import interaction_energy

runner = CliRunner()
TINY = ["--tokens", "4", "--dim", "3", "--width", "8", "--layers", "6"]


def invoke(args: list[str]):
    """The ``sdeformer`` command line, or the benchmark suite's (``python -m benchmarks suite``) for ``bench ...``."""
    return runner.invoke(suite, args[1:]) if args[:1] == ["bench"] else runner.invoke(app, args)


def refused(args: list[str], param: str) -> str:
    """Run the CLI; assert exit 2, no traceback, and one error line naming ``param`` (progress lines allowed)."""
    result = invoke(args)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output + result.stderr
    assert len(errors) == 1 and param in errors[0], result.stderr
    return errors[0]


# -- tracebacks that became one line ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "args,param",
    [
        (["kernel", "--activation", "leaky_relu:abc"], "slope"),
        (["kernel", "--activation", "leaky_relu:nan"], "slope"),
        (["kernel", "--activation", "leaky_relu:1e308"], "slope"),
        (["kernel", "--bias-std", "1e300"], "bias_std"),
        (["kernel", "--su", "1e300"], "su"),
        (["kernel", "--beta", "1e300"], "beta"),
        (["simulate", "--seed", "99999999999999999999999"], "seed"),
        (["simulate", "--seed", "-1"], "seed"),
        (["lyapunov", "--horizon", "nan"], "horizon"),
        (["lyapunov", "--horizon", "inf"], "horizon"),
        (["lyapunov", "--runs", "1"], "runs"),
        (["phase", "--seeds", "1000000000"], "GiB"),
        (["simulate", "--tokens", "100000000"], "GiB"),
        (["simulate", "--width", "100000000"], "GiB"),
        (["simulate", "--layers", "1000000000"], "GiB"),
        (["probe", "--threshold", "2"], "threshold"),
        (["probe", "--threshold", "nan"], "threshold"),
        (["bench", "--only", ""], "only"),
        (["bench", "--only", "grid,,sde"], "only"),
        (["bench", "--only", "grid,grid"], "only"),
        (["train", "--task", "charlm", "--method", "baseline,,baseline"], "method"),
        (["train", "--task", "charlm", "--method", "baseline,baseline"], "method"),
    ],
)
def test_cli_refuses_with_one_line(args, param):
    refused(args, param)


@pytest.mark.parametrize("command", [["sync-check"], ["rates", "depth"]])
def test_negative_seed_refused(command):
    refused([*command, "--seed", "-1"], "seed")


def test_lyapunov_seed_refused():
    from sdeformer.experiments._lyapunov import lyapunov

    with pytest.raises(ConfigError, match="seed"):
        lyapunov(seed=-1)


def test_memory_message_gives_the_estimate():
    line = refused(["simulate", "--width", "100000000"], "width")
    assert "GiB" in line and "available" in line
    assert sim.memory_estimate(ModelConfig(width=100_000_000)) > 50e9  # 2 m d float32 draws alone are 51 GB


def test_config_files_refused(tmp_path):
    binary = tmp_path / "b.yaml"
    binary.write_bytes(bytes(range(256)) * 8)
    huge = tmp_path / "h.yaml"
    huge.write_text("tokens: 4\n" + "# padding\n" * 150_000)
    dup = tmp_path / "d.yaml"
    dup.write_text("tokens: 4\ndim: 3\ntokens: 5\n")
    mlp = tmp_path / "m.yaml"
    mlp.write_text('mlp: "no"\n')
    both = tmp_path / "s.yaml"
    both.write_text("bias_std: 0.1\nsu: 0.2\n")
    dtype = tmp_path / "t.toml"
    dtype.write_text("dtype = [1]\n")
    for path, word in (
        (binary, "text"),
        (huge, "kB"),
        (dup, "twice"),
        (mlp, "mlp"),
        (both, "bias_std"),
        (dtype, "dtype"),
    ):
        line = refused(["simulate", "--config", str(path)], word)
        assert "Traceback" not in line


def test_yaml_mlp_false_turns_the_mlp_off(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("mlp: false\n")
    assert ModelConfig.from_mapping(load_config_file(path)).mlp is False


# -- Python API --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [2**64, 2**63, -1, 1.5, float("nan"), "abc", "12", [[1], [2]], True, [1, "2"]])
def test_bad_seeds_refused_everywhere(seed):
    with pytest.raises(ConfigError, match="seed"):
        seed_list(seed, (2,))
    with pytest.raises(ConfigError, match="seed"):
        uniform_sphere(3, 4, seed=seed)
    with pytest.raises(ConfigError, match="seed"):
        ModelConfig(seed=seed)  # pyright: ignore[reportArgumentType]


def test_seed_rule_has_no_aliases():
    """Seeds -1 and 2**64 - 1 used to give the same run; now both are refused and 2**63 - 1 is the largest."""
    a = uniform_sphere(3, 4, seed=2**63 - 1)
    b = uniform_sphere(3, 4, seed=2**63 - 2)
    assert not torch.equal(a, b)
    assert seed_list(cast(int, np.int64(5)), ()) == [5] and seed_list([1, 2], (2,)) == [1, 2]  # numpy ints are seeds


def test_string_seed_is_not_read_as_digits():
    with pytest.raises(ConfigError, match="seed"):
        Streams("12", (2,))  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize(
    "kwargs,param",
    [
        (dict(device="cuda"), "device"),
        (dict(dtype=torch.int64), "dtype"),
        (dict(dtype=torch.float16), "dtype"),
        (dict(device="nonsense"), "device"),
    ],
)
def test_uniform_sphere_refuses(kwargs, param):
    if param == "device" and kwargs["device"] == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ConfigError, match=param):
        uniform_sphere(3, 4, **kwargs)


def test_uniform_sphere_non_integer_size():
    with pytest.raises(ConfigError, match="tokens"):
        uniform_sphere(2.5, 4)  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigError, match="dim"):
        uniform_sphere(3, 3.5)  # pyright: ignore[reportArgumentType]


def test_kernel_dim_not_truncated():
    with pytest.raises(ConfigError, match="dim"):
        sdf.kernel_theory("relu", 3.7)  # pyright: ignore[reportArgumentType]
    assert sdf.kernel_theory("relu", cast(int, 4.0)).dim == 4  # an integral float is a dimension


@pytest.mark.parametrize(
    "x,beta,param",
    [
        (torch.ones(4, 3, dtype=torch.int64), 1.0, "dtype"),
        (torch.randn(3), 1.0, "x"),
        (torch.randn(4, 3).half(), 1.0, "dtype"),
        (torch.randn(4, 3), float("nan"), "beta"),
        (torch.randn(4, 3), -1.0, "beta"),
        (torch.randn(4, 3), 0.0, "beta"),
        (torch.randn(4, 3), float("inf"), "beta"),
        ("tokens", 1.0, "x"),
    ],
)
def test_interaction_energy_refuses(x, beta, param):
    with pytest.raises(ConfigError, match=param):
        interaction_energy(x, beta)


def test_interaction_energy_valid_matches_definition():
    x = uniform_sphere(5, 3, seed=1, dtype=torch.float64)
    g = x @ x.T
    expected = (math.exp(2.0) - torch.exp(2.0 * g)).sum() / (2 * 25)
    assert float(interaction_energy(x, 2.0)) == pytest.approx(float(expected), rel=1e-12)


def test_per_run_su_of_wrong_length():
    from sdeformer.noise._mlp import MLPNoise

    noise = MLPNoise("relu", 8, torch.tensor([0.1, 0.2, 0.3]), 0.0)
    x = uniform_sphere(4, 3, batch=(2,), seed=0)
    with pytest.raises(ConfigError, match="su"):
        noise.increment(x, 0.1, Streams(0, (2,)))
    model = sdf.StochasticTransformer(3, 1.0, noise=noise)
    with pytest.raises(ConfigError, match="su"):
        model.run(x, seed=[0, 1])


def test_config_normalises_numbers():
    cfg = ModelConfig(tokens=4.0, beta=np.float32(2.0))  # pyright: ignore[reportArgumentType]
    assert type(cfg.tokens) is int and type(cfg.beta) is float and json.dumps(cfg.to_dict())
    with pytest.raises(ConfigError, match="mlp"):
        ModelConfig(mlp="no")  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigError, match="bias_std"):
        ModelConfig.from_mapping({"bias_std": 0.1, "sw": 0.2})


# -- silent wrong answers: NaN guard ------------------------------------------------------------------------
@pytest.mark.parametrize("flag,value", [("--attention-scale", "1e30"), ("--horizon", "1e30")])
def test_nan_guard_names_layer_and_parameter(flag, value):
    line = refused(["simulate", *TINY, flag, value], flag.strip("-").replace("-", "_"))
    assert "layer 1" in line and "NaN" in line


def test_nan_guard_function():
    from sdeformer.core._validate import finite_state

    finite_state(torch.zeros(2, 3), 4, "horizon")
    with pytest.raises(ConfigError, match="layer 7"):
        finite_state(torch.tensor([[0.0, float("nan")]]), 7, "horizon")


# -- nothing lost: run folders tied to the config ------------------------------------------------------------
def test_run_folder_same_config_resumes_other_refused_force_overwrites(tmp_path):
    out = tmp_path / "run"
    first = runner.invoke(app, ["simulate", *TINY, "--out", str(out), "--json"])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["simulate", *TINY, "--out", str(out), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout) == json.loads(first.stdout)
    before = (out / "trajectory.npz").read_bytes()
    refused(["simulate", *TINY, "--seed", "1", "--out", str(out)], "--force")
    assert (out / "trajectory.npz").read_bytes() == before  # the earlier run is intact
    forced = runner.invoke(app, ["simulate", *TINY, "--seed", "1", "--out", str(out), "--force", "--json"])
    assert forced.exit_code == 0 and json.loads(forced.stdout)["config"]["seed"] == 1
    assert json.loads((out / "run.json").read_text())["config"]["seed"] == 1


def test_foreign_folder_refused(tmp_path):
    (tmp_path / "thesis.tex").write_text("mine")
    refused(["simulate", *TINY, "--out", str(tmp_path)], "not empty")
    assert (tmp_path / "thesis.tex").read_text() == "mine"


@pytest.mark.parametrize("command", [["simulate", *TINY], ["bench", "--quick", "--only", "grid"]])
def test_unwritable_output_refused_up_front(tmp_path, command):
    blocker = tmp_path / "file"
    blocker.write_text("")
    line = refused([*command, "--out", str(blocker / "sub")], "out")
    assert str(blocker / "sub") in line and ".tmp" not in line


def test_checkpoint_appends_with_bounded_size(tmp_path, monkeypatch):
    """Each segment adds one file; the checkpoint holds the current tokens only (no rewritten history)."""
    monkeypatch.setattr(sim, "CHECKPOINT_LAYERS", 10)
    cfg = ModelConfig(tokens=5, dim=4, width=16, layers=45, su=0.1, sw=0.1, dtype="float64")
    full = sim.simulate(cfg)

    with pytest.raises(Interrupted):
        sim.simulate(cfg, tmp_path, progress=interrupt_after(35))
    ckpt = np.load(tmp_path / "checkpoint.npz")
    assert ckpt["x"].shape == (5, 4) and int(ckpt["layer"]) == 30
    assert len(list((tmp_path / "segments").glob("*.npz"))) == 4  # layer 0, then 3 segments of 10
    resumed = sim.simulate(cfg, tmp_path)
    assert resumed.energy == pytest.approx(full.energy, rel=1e-12)
    assert not (tmp_path / "checkpoint.npz").exists() and not (tmp_path / "segments").exists()
    assert np.load(tmp_path / "trajectory.npz")["x"].shape == (46, 5, 4)


def test_api_simulate_refuses_unfit_request_before_work():
    with pytest.raises(ConfigError, match="GiB"):
        sim.simulate(ModelConfig(tokens=100_000_000))  # the N x N scores are never formed: 10^5 tokens fit


def test_float16_tokens_refused_by_the_model():
    model = ModelConfig(tokens=4, dim=3, width=8, layers=2).build()
    with pytest.raises(ConfigError, match="float16"):
        model.run(uniform_sphere(4, 3, seed=0).half())


def test_energy_has_no_cancellation_near_sync():
    """E_beta of nearly equal tokens is >= 0 and matches the float64 value to float32 accuracy."""
    x = torch.ones(6, 3, dtype=torch.float64) + 1e-4 * uniform_sphere(6, 3, seed=2, dtype=torch.float64)
    e64 = float(interaction_energy(x, 1.0))
    assert e64 > 0 and float(interaction_energy(x.float(), 1.0)) >= 0
    g = (x / x.norm(dim=-1, keepdim=True)) @ (x / x.norm(dim=-1, keepdim=True)).T
    assert e64 == pytest.approx(float((1 - g).sum() / 72 * math.e), rel=1e-3)  # first order: e (1 - g)


# -- tracebacks, late failures and silent acceptances that became one line -------------------------
@pytest.mark.parametrize(
    "args,param",
    [
        (["kernel", "--dim", str(10**30)], "dim"),  # was OverflowError in the kernel
        (["kernel", "--activation", "leaky_relu:"], "slope"),  # was slope 0.01, silently
        (["simulate", "--noise", "gaussian", "--no-mlp"], "noise"),  # was ignored: the noise is off
        (["simulate", "--share", "0.5", "--no-mlp"], "share"),
        (["simulate", "--bias-std", "nan"], "bias_std"),  # named su
        (["probe", "--dt", "nan"], "dt"),  # before the model loads (see the fixture below)
        (["probe", "--width", "0"], "width"),
        (["probe", "--activation", "nope"], "activation"),
        (["kernel", "--frobnicate"], "--frobnicate"),  # parser errors: one line, not click's 5-line box
        (["kernel", "--dim", "abc"], "--dim"),
        (["kernel", "--dim"], "--dim"),
        (["nonsense"], "nonsense"),
    ],
)
def test_issue21_cli_refusals(args, param, monkeypatch):
    from sdeformer.practice import _probe as probe

    monkeypatch.setattr(probe, "load_minilm", lambda: pytest.fail("the model loaded before the options were checked"))
    refused(args, param)


@pytest.mark.parametrize("seed", ["-1", str(2**63)])
def test_reproduce_seed_refused_before_the_folder_is_claimed(tmp_path, seed):
    refused(["reproduce", "table1", "--seed", seed, "--out", str(tmp_path / "r")], "seed")
    assert not (tmp_path / "r").exists()


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    from sdeformer.sweeps import parse_spec, run

    out = tmp_path_factory.mktemp("sweep")
    base = {"tokens": 4, "dim": 3, "width": 8, "layers": 4, "horizon": 1.0}
    run(parse_spec({"base": base, "axes": {"bias_std": [0.0, 0.1]}, "seeds": 2, "times": "all"}), out)
    return out


@pytest.mark.parametrize(
    "extra,param",
    [
        (["--x", "bias_std", "--y", "energy", "--below", "nan"], "below"),  # drew P(E < nan) = 0 everywhere
        (["--x", "t", "--y", "energy", "--time", "0.5"], "time"),  # was ignored
        (["--x", "layer", "--y", "t", "--color", "energy", "--time", "0.5"], "time"),
        (["--x", "bias_std", "--y", "energy", "--time", "inf"], "time"),
        (["--x", "bias_std", "--y", "bias_std", "--color", "energy"], "must differ"),  # was a pandas ValueError
    ],
)
def test_sweep_plot_refusals(small_sweep, extra, param):
    refused(["sweep", "plot", str(small_sweep), *extra], param)


def test_sweep_plot_bias_std_is_su_where_su_equals_sw(small_sweep, tmp_path):
    png = tmp_path / "b.png"
    args = ["sweep", "plot", str(small_sweep), "--x", "bias_std", "--y", "energy", "--out", str(png), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["pooled"] == [] and png.stat().st_size > 0  # su, sw are the axis itself
    where = runner.invoke(app, [*args[:-3], "--where", "bias_std=0.1", "--out", str(png), "--json"])
    assert where.exit_code == 0 and json.loads(where.stdout)["runs"] == 2


def test_sweep_plot_out_into_a_file_names_out(small_sweep, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    args = ["--x", "bias_std", "--y", "energy", "--out", str(blocker / "p.png")]
    line = refused(["sweep", "plot", str(small_sweep), *args], "invalid out=")
    assert str(blocker / "p.png") in line


@pytest.mark.parametrize(
    "text,words",
    [
        ("", ["spec", "empty"]),  # ran a default run
        ("{}\n", ["spec", "empty"]),
        ("base: nofile.toml\n", ["base", "nofile.toml"]),  # named config
        ("seeds: 2\naxes: {beta: [1.0]}\nseeds: 3\n", ["'seeds'", "twice"]),  # named no key
    ],
)
def test_spec_files_refused_naming_the_entry(tmp_path, text, words):
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    line = refused(["sweep", str(spec), "--out", str(tmp_path / "out")], words[0])
    assert all(w in line for w in words), line


def test_yaml_numbers_read_as_yaml_1_2(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("su: 1e-2\nsw: 2E-1\ntokens: 012\nwidth: 1_024\nbeta: .5\nactivation: relu\n")
    data = load_config_file(path)
    assert data == {"su": 0.01, "sw": 0.2, "tokens": 12, "width": 1024, "beta": 0.5, "activation": "relu"}
    assert ModelConfig.from_mapping(data).su == 0.01  # was refused: "must be a finite number" for '1e-2'


@pytest.mark.parametrize("threshold", [2.0, 1.0, float("nan"), -1.5])
def test_cluster_count_refuses_thresholds_that_link_nothing(threshold):
    from sdeformer.observables import cluster_count

    x = uniform_sphere(4, 3, seed=0)
    with pytest.raises(ConfigError, match="threshold"):
        cluster_count(x, threshold)  # returned 4 (every token alone)
    assert int(cluster_count(x, -1.0)) == 1  # the lowest threshold links every non-antipodal pair


@pytest.mark.parametrize("fill", [float("nan"), 0.0, float("inf")])
def test_observables_refuse_tokens_they_cannot_normalise(fill):
    from sdeformer.observables import cluster_count

    x = uniform_sphere(4, 3, seed=0)
    x[1] = fill
    for fn in (lambda: interaction_energy(x, 1.0), lambda: cluster_count(x)):
        with pytest.raises(ConfigError, match="invalid x="):  # returned nan (energy) or 4 (clusters)
            fn()
    if fill == 0.0:
        assert torch.isfinite(interaction_energy(x, 1.0, normalize=False))  # unnormalised: zero is a token


def test_claim_message_says_what_differs(tmp_path):
    out = tmp_path / "run"
    assert runner.invoke(app, ["simulate", *TINY, "--out", str(out), "--json"]).exit_code == 0
    line = refused(["simulate", *TINY, "--seed", "1", "--out", str(out)], "--force")
    assert "seed 0 there, 1 here" in line  # was two config hashes


def test_ctrl_c_is_one_line_saying_a_rerun_resumes(monkeypatch):
    import sdeformer.core._kernel as kernel

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(kernel, "kernel_theory", interrupted)
    result = runner.invoke(app, ["kernel"])
    assert result.exit_code == 130 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines() == [
        "error: interrupted; rerun the same command to resume (finished parts are kept)"
    ]


def test_make_first_run_says_what_it_installs():
    from pathlib import Path

    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    recipe = makefile.split("$(STAMP): pyproject.toml constraints.txt\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert recipe[0].startswith("\t@echo ") and "first run" in recipe[0] and "install" in recipe[0]
    assert any("pip install" in line for line in recipe[1:])
    pips = [line for line in recipe if "pip install" in line]
    stages = [line for line in recipe if line.startswith('\t@echo "[install ')]
    assert len(stages) == 4 and len(stages) >= len(pips)  # a line per stage
    long = [line for line in pips if "-e '." in line]
    assert long and all(" -q " not in line and "|" not in line for line in long)  # pip's own progress, its status


def test_help_is_plain_and_defaults_unbroken():
    from typer.testing import CliRunner as Wide

    for command in (["kernel"], ["simulate"], ["sweep", "run"], ["reproduce"]):
        text = Wide().invoke(app, [*command, "--help"], terminal_width=60).output
        assert "<bool>" not in text and "╭" not in text, text  # flags take no value; no boxes
        assert "(64)" not in text and "(unset)" not in text and "(off)" not in text
        assert all("[default:\u00a0" in line for line in text.splitlines() if "[default:" in line)
        assert "[default:\n" not in text
    sweep = runner.invoke(app, ["sweep", "--help"]).output
    assert "sweep SPEC --out DIR [OPTIONS]" in sweep.splitlines()[0]  # the bare form the README uses


def test_bad_inputs_page_renders():
    """No Markdown emphasis inside numbers (``2**63`` outside code renders as bold '263') and no escaped pipes
    (``\\|slope\\|`` shows its backslashes in the site's tables)."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "bad-inputs.md").read_text()
    prose = re.sub(r"`[^`]*`", "", page)
    assert "**63" not in prose and "\\|" not in page


def test_python_constructors_refuse_bad_parts_at_once():
    """Refused when built, in one line naming the parameter, not later in ``run`` (issue: late failures)."""
    import sdeformer as sdf

    for call, parameter in (
        (lambda: sdf.ModelConfig(widht=8), "config key"),  # pyright: ignore[reportCallIssue]
        (lambda: sdf.run_sweep(["x"]), "configs[0]"),  # pyright: ignore[reportArgumentType]
        (lambda: sdf.StochasticTransformer(4, 1.0, noise="relu"), "part"),  # type: ignore[arg-type]
        (lambda: sdf.StochasticTransformer(4, 1.0, attention=3), "part"),  # type: ignore[arg-type]
        (lambda: sdf.LimitSDE(sdf.MLPNoise()), "part"),  # pyright: ignore[reportArgumentType]  (not a limit field)
    ):
        with pytest.raises(ConfigError) as info:
            call()
        assert info.value.parameter == parameter and "\n" not in str(info.value)


# -- the new-user and attacker cases of the release review (docs/bad-inputs.md, "Files a user hands in") ------
N4 = ["simulate", "--tokens", "4", "--dim", "3", "--layers", "3", "--width", "8", "--json"]
RING4 = np.roll(np.eye(4), 1, axis=1) + np.roll(np.eye(4), -1, axis=1)
PLUGIN_CODE = """
from sdeformer.registry import ATTENTIONS

class Faulty{k}:
    @classmethod
    def from_config(cls, p):
        return cls()

    def drift(self, x, source=None):
        {body}

ATTENTIONS.register("faulty{k}", Faulty{k})
"""


def _mask_file(tmp_path, name: str) -> str:
    """The bad mask files of the review, by name."""
    path = tmp_path / name
    if name == "nan.npy":
        np.save(path, np.where(RING4 > 0, np.nan, 0.0))
    elif name == "negative.npy":
        np.save(path, -RING4)
    elif name == "weighted.npy":
        np.save(path, 0.5 * RING4)
    elif name == "shape.npy":
        np.save(path, np.ones((4, 5)))
    elif name == "cut.npy":
        np.save(path, RING4)
        path.write_bytes(path.read_bytes()[:60])
    elif name == "third_column.txt":
        path.write_text("0 1 0.5\n1 2 0.5\n")
    elif name == "binary.txt":
        path.write_bytes(b"\xff\xfe\x00\x01")
    elif name == "unicode_digits.txt":
        path.write_text("0 \u00b9\n")
    return str(path)


@pytest.mark.parametrize(
    "name,says",
    [
        ("nan.npy", "0/1 entries"),
        ("negative.npy", "0/1 entries"),
        ("weighted.npy", "0/1 entries"),
        ("shape.npy", "must be (4, 4), not (4, 5)"),
        ("cut.npy", "not a .npy array file"),
        ("third_column.txt", "two token indices per line; line 1"),
        ("binary.txt", "not UTF-8"),
        ("unicode_digits.txt", "two token indices per line"),
    ],
)
def test_review_mask_files_are_refused_with_the_right_reason(tmp_path, name, says):
    line = refused([*N4, "--attention", "graph", "--mask", _mask_file(tmp_path, name)], "mask")
    assert says in line


@pytest.mark.parametrize(
    "code,says",
    [
        ("import sys\nsys.exit(0)\n", "cannot be imported (SystemExit: 0)"),
        ("raise GeneratorExit\n", "cannot be imported (GeneratorExit)"),
        ("def broken(:\n", "cannot be imported (SyntaxError"),
        (PLUGIN_CODE.format(k=1, body="raise ValueError('bad drift')"), "ValueError: bad drift"),
        (PLUGIN_CODE.format(k=2, body="import sys; sys.exit(0)"), "SystemExit: 0"),
    ],
)
def test_review_plugin_failures_are_one_line(tmp_path, code, says):
    from sdeformer import plugins
    from sdeformer.registry import ATTENTIONS

    path = tmp_path / "review_plugin.py"
    path.write_text(code)
    k = next((k for k in (1, 2) if f"Faulty{k}" in code), None)
    try:
        line = refused([*N4, "--plugin", str(path), *(["--attention", f"faulty{k}"] if k else [])], "plugin")
    finally:
        ATTENTIONS.entries.pop(f"faulty{k}", None)
        resolved = str(path.resolve())
        if resolved in plugins._loaded:
            plugins._loaded.remove(resolved)
        plugins._sources.pop(resolved, None)
    assert says in line and (k is None or f"attention 'faulty{k}' failed in Faulty{k}.drift()" in line)


def test_review_newcomer_calls_give_the_right_answer(tmp_path):
    """The review's refusals that were wrong: each now gives the right answer (numbers, not just no error)."""
    import sdeformer as sdf

    cfg = ModelConfig(bias_std=0.1)  # pyright: ignore[reportCallIssue]
    assert (cfg.su, cfg.sw) == (0.1, 0.1) and cfg == ModelConfig(su=0.1, sw=0.1)
    from sdeformer.dynamics._sde import norm_scheme

    sde = sdf.LimitSDE(sdf.GaussianField("relu", 0.1, 0.1), norm="pre")  # a scheme by its name
    assert type(sde.norm) is type(norm_scheme("pre", 1.0)) and sde.norm_sde is not None  # Pre-LN's limit
    path = tmp_path / "c.yaml"
    path.write_text("attention: off\ntokens: 4\n")  # YAML 1.2: off is a name, not false
    assert load_config_file(path)["attention"] == "off"
    path.write_text("mlp: no\n")
    with pytest.raises(ConfigError, match="mlp"):
        ModelConfig.from_mapping(load_config_file(path))
    refused([*N4, "--beta", "800"], "beta")  # e^beta overflows: refused, not an overflow traceback
