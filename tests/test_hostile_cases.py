"""The hostile tester's groups of issue 41 that are not the peers' (docs/bad-inputs.md, "Run-time refusals"): each
case one line and exit 2 (or, for a sweep that computed nothing, exit 1 and a line saying so), never a traceback
or a silent wrong answer. Each test names the wrong behaviour it fails: the traceback or the exit 0 of before."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import sdeformer as sdf
import sdeformer.cli._sweep  # registers `sdeformer sweep`
from sdeformer.cli import app
from sdeformer.config import load_config_file
from sdeformer.core._errors import ConfigError
from sdeformer.sweeps import _task as task_module

ROOT = Path(__file__).resolve().parents[1]
SMOKE = load_config_file(ROOT / "examples" / "sweeps" / "smoke.yaml")
SMALL = {
    **SMOKE,
    "axes": {"activation": ["relu"], "beta": [0.5, 1.0], "attention_scale": [1.0]},
    "base": {**SMOKE["base"], "layers": 4, "horizon": 1.0},
    "seeds": 2,
    "times": [0.0, 1.0],
    "batch": 4,
}


def one_line(res) -> str:
    assert "Traceback" not in res.output, res.output
    return res.output


@pytest.mark.parametrize("norm", ["pre", "peri", "mix:0.5"])
@pytest.mark.parametrize("solver", ["projected", "euler"])
def test_the_limit_sde_of_a_scheme_with_a_radius_is_refused_at_build_time(norm, solver):
    """Before: ``TypeError: isfinite() got a tuple`` after the run (simulate) or a tuple where tokens are read."""
    with pytest.raises(ConfigError, match=rf"invalid norm='{norm}': with solver='{solver}'.*\(theta, r\)"):
        sdf.ModelConfig(solver=solver, norm=norm)
    res = CliRunner().invoke(app, ["simulate", "--solver", solver, "--norm", norm])
    assert res.exit_code == 2 and "norm" in one_line(res)


def test_the_schemes_on_the_sphere_still_take_the_limit_sde():
    cfg = sdf.ModelConfig(solver="projected", norm="sqrt", tokens=4, dim=3, width=8, layers=4)
    final = cfg.build().run(cfg.initial_tokens(), seed=1).final  # sqrt-scaling (and nGPT) stay on the sphere
    assert final.shape == (4, 3) and bool(final.isfinite().all())


def test_a_sweep_whose_runs_all_fail_exits_non_zero_and_says_so(tmp_path, monkeypatch, one_thread):
    """Before: every run recorded as an error and exit 0."""

    def broken(configs, device="cpu"):
        raise RuntimeError("boom")

    monkeypatch.setattr(task_module.engine, "run_group", broken)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SMALL))
    res = CliRunner().invoke(app, ["sweep", "run", str(spec), "--out", str(tmp_path / "out")])
    assert res.exit_code == 1 and "every one of the 4 runs that ran failed" in one_line(res)


PLUGIN = """
import os, time
import torch
from sdeformer.registry import NOISES, OBSERVABLES

{at_import}


class Bad:
    @classmethod
    def from_config(cls, p):
        return cls()

    def increment(self, y, dt, source):
        z = source.randn(y.shape[-2:], y.dtype) * dt ** 0.5
        {body}


def bad_obs(x, beta, spec):
    return torch.linalg.vector_norm(x.mean(-2), dim=-1).T.unsqueeze(-1)


NOISES.register("{name}", Bad, random=True)
OBSERVABLES.register("{name}_obs", bad_obs)
"""

SLEEPS_AT_ITS_3RD_CALL = (  # a hang after the checked first call: before, no limit
    "self.n = getattr(self, 'n', 0) + 1\n        if self.n == 3:\n            time.sleep(30)\n        return z"
)
RETURNS = {  # the increment returned -> what the line says (before: a traceback, or a silent wrong run)
    "return None": "returned a NoneType, not a torch.Tensor",
    "return [0.0]": "returned a list, not a torch.Tensor",
    "return 0.0": "returned a float, not a torch.Tensor",  # before: silently the noise-free run
    "return 0": "returned a int, not a torch.Tensor",
    "return z[..., :1, :]": "its input's shape (no broadcast)",  # (1, d): before, broadcast to every token
    "return z.transpose(-1, -2)": "its input's shape (no broadcast)",
    "return z.double()": "the contract: dtype float32",  # before: accepted in a float32 run
    "return z.to(torch.complex64)": "the contract: dtype float32",
    "return torch.empty_like(z, device='meta')": "on cpu, as its input",
    "return z.requires_grad_()": "requires grad for an input that does not",
    "return z * float('nan')": "non-finite values",
    "y.mul_(1.0)\n        return z": "changed its input in place",  # before: the run changed unseen
    "os._exit(0)": "called os._exit(0)",  # before: exit 0, no output
    "time.sleep(30)": "ran past the plugins' time limit of 1 s",  # before: a hang
    SLEEPS_AT_ITS_3RD_CALL: "ran past the plugins' time limit of 1 s for one call",  # before: a hang (unlimited)
}


NAMES = itertools.count()  # each plugin file registers names of its own (a Dask worker loads every loaded plugin)


@pytest.fixture
def plugin_file(tmp_path, monkeypatch):
    """Write a plugin with ``body`` as its increment's code; undo its registration and loading afterwards."""
    import sys

    from sdeformer import plugins
    from sdeformer.registry import NOISES, OBSERVABLES

    monkeypatch.setattr(plugins, "TIMEOUT_S", 1.0)
    made = []

    def make(body: str = "return z", at_import: str = "") -> tuple[str, str]:
        name = f"hostile{next(NAMES)}"
        path = tmp_path / f"{name}.py"
        path.write_text(PLUGIN.format(body=body, at_import=at_import, name=name))
        made.append((name, str(path.resolve())))
        return str(path), name

    yield make
    for name, path in made:
        NOISES.entries.pop(name, None)
        OBSERVABLES.entries.pop(f"{name}_obs", None)
        if path in plugins._loaded:
            plugins._loaded.remove(path)
        plugins._sources.pop(path, None)
        sys.modules.pop(f"sdeformer_plugin_{Path(path).stem}", None)


@pytest.mark.parametrize("body", list(RETURNS))
def test_a_plugins_return_value_is_checked_once_per_run(plugin_file, body):
    path, name = plugin_file(body)
    args = ["simulate", "--plugin", path, "--noise", name, "--tokens", "4", "--dim", "3", "--layers", "3"]
    res = CliRunner().invoke(app, args)
    line = one_line(res)
    assert res.exit_code == 2 and RETURNS[body] in line, line
    assert f"noise '{name}' increment()" in line and "plugin=" in line


@pytest.mark.parametrize("at_import", ["os._exit(0)", "time.sleep(30)"])
def test_a_plugin_that_exits_or_hangs_at_its_import_is_one_line(plugin_file, at_import):
    path, _ = plugin_file(at_import=at_import)
    res = CliRunner().invoke(app, ["simulate", "--plugin", path, "--tokens", "4", "--dim", "3", "--layers", "3"])
    assert res.exit_code == 2 and "cannot be imported" in one_line(res), res.output


def test_every_plugin_call_is_limited_not_the_run_and_the_watchdog_goes_with_the_part(plugin_file, monkeypatch):
    """The limit is per call (a run of five 0.15 s calls, 0.75 s in all, passes a 0.5 s limit; a third call that
    sleeps is stopped), through the Python API too; the watchdog's SIGALRM is back to its default once the part
    is collected. Wrong models it fails: a limit on the whole run, no limit after the first call, a timer left on."""
    import gc
    import signal

    import sdeformer as sdf
    from sdeformer import plugins

    monkeypatch.setattr(plugins, "TIMEOUT_S", 0.5)
    slow, _ = plugin_file("self.n = getattr(self, 'n', 0) + 1\n        time.sleep(0.15)\n        return z")
    third, _ = plugin_file(SLEEPS_AT_ITS_3RD_CALL)
    plugins.load_plugins([slow, third])
    for path, layers in ((slow, 5), (third, 6)):
        cfg = sdf.ModelConfig(tokens=4, dim=3, layers=layers, noise=Path(path).stem)
        model = cfg.build()
        if path == third:
            with pytest.raises(plugins.PluginStopped) as stopped:
                model.run(cfg.initial_tokens(), seed=0)
            assert str(stopped.value.error) == (
                f"invalid plugin={str(Path(path).resolve())!r}: noise {Path(path).stem!r} increment() ran past the "
                "plugins' time limit of 0.5 s for one call"
            )
            assert model.noise.n == 3  # stopped in its third call
            del stopped
        else:
            assert model.run(cfg.initial_tokens(), seed=0).x.isfinite().all() and model.noise.n == 5
        assert signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL  # armed while the part lives
        del model
        gc.collect()
        assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL) == (0, 0)


def test_a_plugin_observable_that_hangs_is_stopped_in_one_line(tmp_path, monkeypatch):
    """Before: a sweep observable of a plugin had no time limit (the watchdog needs a plugin part alive)."""
    import sys

    import torch

    from sdeformer import plugins
    from sdeformer.registry import OBSERVABLES
    from sdeformer.sweeps._observables import SweepObservable

    monkeypatch.setattr(plugins, "TIMEOUT_S", 0.3)
    path = tmp_path / "hangs_obs.py"
    path.write_text(
        "import time\nfrom sdeformer.registry import OBSERVABLES\n\n\ndef hangs(x, beta, spec):\n"
        "    time.sleep(30)\n\n\nOBSERVABLES.register('hangs_obs', hangs)\n"
    )
    try:
        plugins.load_plugins([str(path)])
        x = torch.nn.functional.normalize(torch.randn(2, 5, 4, 3, dtype=torch.float64), dim=-1)  # (S, G, N, d)
        with pytest.raises(ConfigError, match=r"observable 'hangs_obs' call ran past the plugins' time limit"):
            SweepObservable("hangs_obs", "c")(x, torch.ones(5))
    finally:
        OBSERVABLES.entries.pop("hangs_obs", None)
        resolved = str(path.resolve())
        if resolved in plugins._loaded:
            plugins._loaded.remove(resolved)
        plugins._sources.pop(resolved, None)
        sys.modules.pop("sdeformer_plugin_hangs_obs", None)


def test_a_plugin_observable_of_the_wrong_shape_is_one_line(plugin_file):
    """Before: a transposed (G, S, 1) column reached the table's stack (a traceback) or was broadcast."""
    import torch

    from sdeformer import plugins
    from sdeformer.sweeps._observables import SweepObservable

    path, name = plugin_file()
    plugins.load_plugins([path])
    x = torch.nn.functional.normalize(torch.randn(2, 5, 4, 3, dtype=torch.float64), dim=-1)  # (S, G, N, d)
    with pytest.raises(ConfigError, match=rf"observable '{name}_obs' call returned a \(5, 2, 1\).*\(2, 5\)"):
        SweepObservable(f"{name}_obs", "c")(x, torch.ones(5))


@pytest.mark.parametrize("horizon", [pytest.param(1e30, marks=pytest.mark.slow), 200.0])  # 1e30: 19 s (load 10)
def test_a_saturated_step_gives_not_resolved_never_fails_or_a_power_claim(horizon):
    """Before: ``sdeformer ode --set horizon=1e30`` (dt = 2.4e26) reported that the theory "fails", with a power
    claim; at T = 200 the largest dt (6.25) saturates too."""
    import dataclasses

    from sdeformer.experiments import _ode as ode

    settings = dataclasses.replace(ode.OdeSettings(tokens=4, dim=3, first=8, depths=3, starts=2), horizon=horizon)
    result = ode.run(settings)
    assert result.verdict == "not resolved" and not result.holds and result.smallest_error_caught is None
    assert result.saturated[0] == 8
    text = ode.section(result).paragraphs[0]
    assert "not resolved" in text and "fails" not in text and "Power" not in text


def test_sweep_rows_carry_a_saturation_column(tmp_path, one_thread):
    """Before: a saturated run's rows looked like any other (only a console warning)."""
    from sdeformer.sweeps import read, run
    from sdeformer.sweeps._spec import parse_spec

    spec = {
        **SMALL,
        "base": {**SMALL["base"], "solver": "projected", "mlp": False, "layers": 4, "horizon": 1.0},
        "axes": {"activation": ["relu"], "beta": [0.5, 8.0], "attention_scale": [1.0]},  # dt beta = 0.125, 2
    }
    with pytest.warns(RuntimeWarning, match="saturates"):
        run(parse_spec(spec), tmp_path / "sde")
    df = read(tmp_path / "sde")
    assert df.groupby("beta")["saturated"].all().to_dict() == {0.5: False, 8.0: True}  # pyright: ignore
    assert not df.groupby("beta")["saturated"].any()[0.5]  # pyright: ignore
    run(parse_spec(SMALL), tmp_path / "discrete")  # the discrete model is the model itself: never saturated
    assert not read(tmp_path / "discrete")["saturated"].any()  # pyright: ignore


MINE = {**SMALL, "batch": 2}  # two parts of two runs each


@pytest.fixture(scope="module")
def two_sweeps(tmp_path_factory):
    """Two finished sweeps of different specs (beta 0.5, 1.0 and beta 2.0, 4.0) and the first one's table."""
    from sdeformer.core._threads import torch_threads
    from sdeformer.sweeps import read, run
    from sdeformer.sweeps._spec import parse_spec

    root = tmp_path_factory.mktemp("provenance")
    other = {**MINE, "axes": {**SMALL["axes"], "beta": [2.0, 4.0]}}
    with torch_threads(1):
        run(parse_spec(MINE), root / "mine")
        run(parse_spec(other), root / "other")
    return root, read(root / "mine")


def _copy_sweep(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def _recovered_in_one_rerun(folder: Path, reference, reason: str, capsys) -> None:
    """``open_sweep``/``read`` and ``sweep status`` leave the part out with ``reason``; one ``sweep run`` of the
    same spec moves it aside and recomputes its runs: the table equals the reference again."""
    import pandas as pd

    from sdeformer.core._threads import torch_threads
    from sdeformer.sweeps import read, run, status
    from sdeformer.sweeps._spec import parse_spec

    state = status(folder)
    assert state["pending"] > 0 and any(reason in d for d in state["damaged"]), state["damaged"]
    read(folder)
    assert reason in capsys.readouterr().err
    with torch_threads(1):
        assert run(parse_spec(MINE), folder)["ran"] == state["pending"]
    assert status(folder)["pending"] == 0 and not status(folder)["damaged"]
    cols = [c for c in reference.columns if c not in ("wall_s", "task")]
    pd.testing.assert_frame_equal(read(folder)[cols], reference[cols], check_exact=True)  # pyright: ignore[reportArgumentType]


def test_a_part_copied_from_another_sweep_is_foreign(two_sweeps, tmp_path, capsys):
    """Before: a part copied with its sha256 file from another sweep was mixed in silently."""
    import shutil

    import pandas as pd

    from sdeformer.core._threads import torch_threads
    from sdeformer.io._checksums import checksum_path
    from sdeformer.sweeps import read, run, status
    from sdeformer.sweeps._spec import parse_spec
    from sdeformer.sweeps._table import parts

    root, reference = two_sweeps
    folder = _copy_sweep(root / "mine", tmp_path / "mine")
    foreign = parts(root / "other")[0]
    shutil.copy(foreign, folder / "table" / foreign.name)
    shutil.copy(checksum_path(foreign), checksum_path(folder / "table" / foreign.name))
    assert 2.0 not in set(read(folder)["beta"]) and "belongs to another sweep" in capsys.readouterr().err
    assert "belongs to another sweep" in status(folder)["damaged"][0]
    with torch_threads(1):
        assert run(parse_spec(MINE), folder)["ran"] == 0  # moved aside; nothing of this spec was missing
    assert status(folder)["moved_aside"] and not status(folder)["damaged"]
    cols = [c for c in reference.columns if c not in ("wall_s", "task")]
    pd.testing.assert_frame_equal(read(folder)[cols], reference[cols], check_exact=True)  # pyright: ignore[reportArgumentType]


def test_swapped_parts_are_recomputed_in_one_rerun(two_sweeps, tmp_path, capsys):
    """Before: a swapped part (names and sha256 files exchanged) needed two reruns to recover."""
    from sdeformer.io._checksums import checksum_path
    from sdeformer.sweeps._table import parts

    root, reference = two_sweeps
    folder = _copy_sweep(root / "mine", tmp_path / "mine")
    a, b = parts(folder)[:2]
    for x, y in ((a, b), (checksum_path(a), checksum_path(b))):
        x.rename(x.with_name("swap")), y.rename(x), x.with_name("swap").rename(y)
    _recovered_in_one_rerun(folder, reference, "holds the runs of another part", capsys)


def test_an_unverifiable_part_and_a_device_are_left_out(two_sweeps, tmp_path, capsys):
    """Before: a part with neither sha256 file nor stamp was read silently; a part that is a symlink to /dev/zero
    exhausted memory in open_sweep, sweep status and sweep run."""
    import pyarrow.parquet as pq

    from sdeformer.io._checksums import checksum_path
    from sdeformer.sweeps._table import parts

    root, reference = two_sweeps
    folder = _copy_sweep(root / "mine", tmp_path / "mine")
    plain, device = parts(folder)[:2]
    table = pq.read_table(plain)
    pq.write_table(table.replace_schema_metadata({}), plain)  # no stamp, no page checksums
    checksum_path(plain).unlink()
    device.unlink()
    device.symlink_to("/dev/zero")
    state = __import__("sdeformer.sweeps", fromlist=["status"]).status(folder)
    reasons = " ".join(state["damaged"])
    assert "cannot be verified" in reasons and "not a regular file" in reasons
    _recovered_in_one_rerun(folder, reference, "not a regular file", capsys)


def test_x0_naming_a_fifo_or_a_device_is_refused_without_reading(tmp_path):
    """Before: ``x0:`` naming a FIFO hung; a device was read until memory ran out."""
    import os

    fifo = tmp_path / "tokens.npy"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(ConfigError, match="invalid x0=.*a regular .npy file"):
            sdf.ModelConfig(x0=str(path))


TINY = ["--tokens", "4", "--dim", "3", "--layers", "3", "--width", "8"]


def test_a_results_folder_is_keyed_by_its_input_files_content(tmp_path):
    """Before: ``--out`` was tied to the x0 file's path: an edited file returned the old run with exit 0."""
    import numpy as np

    tokens = tmp_path / "x0.npy"
    np.save(tokens, np.eye(4, 3) + 0.1)
    args = ["simulate", *TINY, "--x0", str(tokens), "--out", str(tmp_path / "run")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert CliRunner().invoke(app, args).exit_code == 0  # the same content: resumed
    np.save(tokens, np.eye(4, 3)[::-1] + 0.1)  # edited in place, same path
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "another config" in one_line(res) and "inputs" in res.output
    forced = CliRunner().invoke(app, [*args, "--force"])
    assert forced.exit_code == 0 and forced.output != first.output  # recomputed from the new tokens


def test_a_results_folder_is_keyed_by_its_plugins_content(plugin_file, tmp_path):
    path, name = plugin_file()
    tiny = TINY[:-2]  # no --width: the plugin's noise does not read it (refused, exit 2)
    args = ["simulate", *tiny, "--plugin", path, "--noise", name, "--out", str(tmp_path / "run")]
    assert CliRunner().invoke(app, args).exit_code == 0
    Path(path).write_text(Path(path).read_text().replace("dt ** 0.5", "dt ** 0.5 * 2"))
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "another config" in one_line(res) and "plugin:" in res.output


def test_a_second_writer_is_locked_out(tmp_path):
    """Before: two ``simulate --out`` writers on one folder left a mixed folder."""
    import subprocess
    import sys

    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom sdeformer.io._lock import folder_lock\n"
         f"with folder_lock({str(out)!r}, 'simulate run'):\n    print('held', flush=True)\n    time.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True, env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        res = CliRunner().invoke(app, ["simulate", *TINY, "--out", str(out)])  # refused, not waiting for the holder
        assert res.exit_code == 2 and "another simulate run is writing there" in one_line(res)
    finally:
        holder.kill()
        holder.wait()


def test_a_sweep_whose_x0_file_changed_is_refused_then_recomputed(tmp_path, one_thread):
    """Before: a sweep's folder was tied to its spec's paths: an edited x0 file kept the old runs."""
    import numpy as np

    from sdeformer.sweeps import read, run
    from sdeformer.sweeps._spec import parse_spec

    tokens = tmp_path / "x0.npy"
    np.save(tokens, np.eye(SMOKE["base"].get("tokens", 8), SMOKE["base"].get("dim", 3)) + 0.1)
    spec = {**SMALL, "base": {**SMALL["base"], "x0": str(tokens)}}
    run(parse_spec(spec), tmp_path / "out")
    before = read(tmp_path / "out")
    np.save(tokens, np.load(tokens)[::-1].copy())
    with pytest.raises(ConfigError, match="content has changed"):
        run(parse_spec(spec), tmp_path / "out")
    assert run(parse_spec(spec), tmp_path / "out", force=True)["ran"] == len(
        before.drop_duplicates(["config_hash", "replicate"])
    )


PEER_REFUSED = {  # the command -> the option its one line names (before: a traceback, a hang or the wrong name)
    "glpr --beta -1 --batch 4 --tokens 4": "--beta",  # before: a NaN step, a hang
    "litm --beta 1e9": "--beta",  # before: OverflowError traceback
    "bruno --beta 1e9": "--beta",
    "dotm --part kinetic --beta 1e9": "--beta",  # before: NaN-speed softmax, a hang
    "glpr --maxtime 1e17 --beta 1 --batch 4 --tokens 4": "--maxtime",  # before: 1.6e18 steps accepted
    "simuformer --dim 1 --batch 2 --tokens 4 --betas 1": "--dim",  # before: 'x0=(2, 4, 1)'
    "simuformer --tokens 1 --batch 2 --betas 1": "--tokens",  # before: a table of zeros
    "bruno --part pde --points 100000000": "--points",  # before: an allocator traceback after 35 s
}


@pytest.mark.parametrize("command", list(PEER_REFUSED))
def test_peer_refuses_in_one_line_naming_the_option(command):
    res = CliRunner().invoke(app, ["peer", *command.split()])
    assert res.exit_code == 2 and f"invalid {PEER_REFUSED[command]}=" in one_line(res), res.output


def test_peer_compare_refuses_a_transposed_or_truncated_table_and_hints_at_the_seed(tmp_path):
    import pickle

    args = ["peer", "glpr", "--use-softmax", "--beta", "3", "--batch", "4", "--tokens", "8", "--maxtime", "5"]
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path)])
    assert res.exit_code == 0 and "up to" in res.output and "MiB" in res.output  # its size, before it runs
    [path] = tmp_path.glob("*.pkl")
    table = pickle.loads(path.read_bytes())
    table["density_tensor"] = table["density_tensor"].T.contiguous()  # (200, 1): before, compared cell by cell
    path.write_bytes(pickle.dumps(table))
    res = CliRunner().invoke(app, [*args, "--compare", str(path)])
    assert res.exit_code == 2 and "shape (1, 200)" in one_line(res) and "(200, 1)" in res.output
    table["density_tensor"] = table["density_tensor"].T.contiguous() + 0.25  # another (unseeded) run's cells
    path.write_bytes(pickle.dumps(table))
    res = CliRunner().invoke(app, [*args, "--compare", str(path)])
    assert res.exit_code == 0 and "never seeds torch" in res.output
    dat = tmp_path / "tcrit.dat"
    dat.write_text("beta t_crit\n0.1 2.45\n0.2 2.4x\n")
    res = CliRunner().invoke(app, ["peer", "litm", "--compare", str(dat)])  # before: ValueError traceback
    assert res.exit_code == 2 and "beta t_crit" in one_line(res)


@pytest.mark.slow  # 13 s at load 11
def test_peer_prints_a_trajectory_without_json():
    """Before: ``peer litm --part particles`` (and dotm kinetic) printed nothing without --json."""
    res = CliRunner().invoke(app, ["peer", "dotm", "--part", "kinetic"])
    assert res.exit_code == 0 and "trajectory z (5, 4001, 2)" in res.output


SMALLER = {  # issue 41, item 9: each before a traceback or a silent default
    "uniform_sphere on meta": (lambda: sdf.uniform_sphere(4, 3, device="meta"), "device"),
    "a run from meta tokens": (
        lambda: sdf.ModelConfig(tokens=4, dim=3, layers=2, width=8).build().run(torch_empty_meta()),
        "x0",
    ),
    "open_sweep(5)": (lambda: sdf.open_sweep(5), "sweep folder"),  # pyright: ignore[reportArgumentType]  # before: TypeError
    "per-run beta, tokens without a batch": (lambda: per_run_beta_unbatched(), "x0"),  # before: a stack error
}


def torch_empty_meta():
    import torch

    return torch.empty(4, 3, device="meta")


def per_run_beta_unbatched():
    import torch

    from sdeformer.attention._softmax import SoftmaxAttention

    model = sdf.StochasticTransformer(2, 1.0, None, SoftmaxAttention(torch.tensor([1.0, 2.0])))
    return model.run(sdf.uniform_sphere(4, 3, seed=0))


@pytest.mark.parametrize("case", list(SMALLER))
def test_the_smaller_defects_are_one_line_naming_the_parameter(case):
    call, parameter = SMALLER[case]
    with pytest.raises(ConfigError, match=f"invalid {parameter}="):
        call()


def test_spde_noise_scale_overflow_and_an_experiments_own_default_folder():
    res = CliRunner().invoke(app, ["spde", "--noise-scale", "1e300"])  # before: OverflowError traceback
    assert res.exit_code == 2 and "noise_scale" in one_line(res)
    ode = __import__("typer").main.get_command(app).commands["ode"].build()  # generated: cli._generate
    default = next(p.default for p in ode.params if p.name == "out")
    assert default == Path("results") / "ode"  # before: results/, the demo's page


FILE_OPTIONS = {  # every file option not covered above (x0, mask, --text, --plugin): before, a FIFO hung
    "simulate --config": ["simulate", "--config", "FILE"],
    "sweep run SPEC": ["sweep", "run", "FILE", "--out", "OUT"],
    "peer --compare": ["peer", "litm", "--compare", "FILE"],
    "probe --file": ["probe", "--file", "FILE"],
}


@pytest.mark.parametrize("case", list(FILE_OPTIONS))
def test_a_fifo_or_a_device_given_as_a_file_option_is_refused_unopened(case, tmp_path):
    """A FIFO (which blocks its reader: before, these commands hung) and a device (/dev/null here; /dev/zero was read
    until memory ran out) are one line, exit 2, before anything opens them. A regression fails, never hangs: the
    FIFO is unblocked after 20 s. Wrong model it fails: a check of the size only (a FIFO and a device have 0)."""
    import os
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/null")):
        unblock = threading.Timer(20, lambda: open(fifo, "w").close())
        unblock.start()
        try:
            args = [
                str(path) if a == "FILE" else str(tmp_path / "out") if a == "OUT" else a for a in FILE_OPTIONS[case]
            ]
            res = CliRunner().invoke(app, args)
        finally:
            unblock.cancel()
        assert res.exit_code == 2 and "not a regular file" in one_line(res), res.output
    assert not (tmp_path / "out").exists()


def test_a_compare_file_beyond_any_peers_size_is_refused_unread(tmp_path):
    from sdeformer.peers._files import COMPARE_MAX_BYTES, check_regular

    big = tmp_path / "big.npy"
    with open(big, "wb") as f:  # sparse: no disk used
        f.truncate(COMPARE_MAX_BYTES + 1)
    with pytest.raises(ConfigError, match=r"invalid compare=.*larger than 4 GiB"):
        check_regular(big)


def test_a_part_collected_in_another_thread_stops_the_watchdogs_timer():
    """A plugin part's last reference may go in a worker thread's garbage collection: the watchdog's timer stops
    there too (only the handler waits for the main thread), and a later part arms it again. Wrong model it fails:
    a release outside the main thread that left the timer running, whose next tick after the interpreter's exit
    had restored SIGALRM's default action ended the process ("Alarm clock" after a passing test session)."""
    import gc
    import signal
    import threading

    from sdeformer import _plugin_watchdog as watchdog

    class Part:
        pass

    if signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL or any(signal.getitimer(signal.ITIMER_REAL)):
        pytest.skip("SIGALRM is someone else's here")
    part = Part()
    watchdog.hold(part)
    assert any(signal.getitimer(signal.ITIMER_REAL))  # armed while the part lives
    box = [part]
    del part
    worker = threading.Thread(target=lambda: (box.clear(), gc.collect()))
    worker.start()
    worker.join()
    assert signal.getitimer(signal.ITIMER_REAL) == (0, 0)  # stopped by the worker's release
    again = Part()
    watchdog.hold(again)
    assert any(signal.getitimer(signal.ITIMER_REAL))  # a later part arms it again
    del again
    gc.collect()
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL) == (0, 0)
