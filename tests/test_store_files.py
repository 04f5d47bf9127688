"""One store for every result file: a damaged or edited file of each kind (spde.npz, spde.json, run.json, a
cached stage's JSON part, a figure's npz, sweep.json) is detected, named in one line, moved to ``damaged/`` and
recomputed where it can be; a second writer of an ``spde --out`` folder is refused in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from problems import Interrupted, interrupt_after
from sdeformer.cli import app
from sdeformer.config import ModelConfig
from sdeformer.experiments import _results as results, _simulate as sim
from sdeformer.io._checksums import Damaged, checksum_path
from sdeformer.io._claims import claim_run_folder
from sdeformer.io._damage import damaged_files
from sdeformer.io._formats import read_json, write_json, write_npz
from sdeformer.io._lock import folder_lock

SPDE = ["spde", "--modes", "8", "--steps", "4", "--horizon", "0.1", "--save-every", "2", "--json"]


def flip(path: Path, at: int = -40) -> None:
    """Flip one bit of ``path`` at byte ``at``."""
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def run_spde(out: Path, *extra: str):
    res = CliRunner().invoke(app, [*SPDE, "--out", str(out), *extra])
    assert "Traceback" not in res.output
    return res


def last_json(res) -> dict:
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def spde_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("spde") / "run"
    res = run_spde(out)
    assert res.exit_code == 0, res.output
    assert checksum_path(out / "spde.json").exists() and checksum_path(out / "run.json").exists()
    return out, last_json(res)


def copy_run(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


@pytest.mark.parametrize("name", ["spde.npz", "spde.json"])
def test_a_damaged_spde_result_is_moved_aside_and_recomputed(spde_run, tmp_path, name):
    out = copy_run(spde_run[0], tmp_path / "run")
    flip(out / name)
    res = run_spde(out)
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning: damaged file")]
    assert len(warnings) == 1 and name in warnings[0] and "moved to" in warnings[0]
    assert [p.name for p in damaged_files(out)] == [name]
    again = last_json(res)
    assert {k: again[k] for k in ("energy", "mass_drift")} == {k: spde_run[1][k] for k in ("energy", "mass_drift")}
    assert run_spde(out).stderr.count("warning") == 0  # the recomputed files verify


def test_an_edited_spde_json_is_not_printed_back(spde_run, tmp_path):
    out = copy_run(spde_run[0], tmp_path / "run")
    data = json.loads((out / "spde.json").read_text())
    data["energy"] = [1.0, 2.0]  # an edit that keeps valid JSON
    (out / "spde.json").write_text(json.dumps(data, indent=2) + "\n")
    res = run_spde(out)
    assert res.exit_code == 0 and last_json(res)["energy"] == spde_run[1]["energy"]
    assert "sha256 differs" in res.stderr


def test_a_flipped_first_byte_of_a_json_is_one_line(tmp_path):
    path = write_json(tmp_path / "x.json", {"a": 1})  # no checksum: the parser's failure is the damage
    flip(path, 0)
    with pytest.raises(Damaged, match=r"^damaged file .*x\.json \(not JSON: JSONDecodeError"):
        read_json(path)
    bad = tmp_path / "y.json"
    bad.write_bytes(b"\xff{}")
    with pytest.raises(Damaged, match="UnicodeDecodeError"):
        read_json(bad)


def test_a_damaged_run_json_is_moved_aside_and_force_recomputes(spde_run, tmp_path):
    out = copy_run(spde_run[0], tmp_path / "run")
    flip(out / "run.json", 5)
    refused = run_spde(out)
    assert refused.exit_code == 2 and "run.json was damaged (moved to damaged/)" in refused.output
    assert len(refused.output.strip().splitlines()) == 2  # the warning and the error
    forced = run_spde(out, "--force")
    assert forced.exit_code == 0 and last_json(forced)["energy"] == spde_run[1]["energy"]


def test_a_run_json_whose_hash_is_not_its_config_is_damaged(tmp_path, capsys):
    claim_run_folder(tmp_path / "f", {"a": 1})
    marker = tmp_path / "f" / "run.json"
    saved = json.loads(marker.read_text())
    saved["config_hash"] = saved["config_hash"][:-1] + ("0" if saved["config_hash"][-1] != "0" else "1")
    marker.write_text(json.dumps(saved))
    checksum_path(marker).unlink()  # a folder written before checksums: the hash check still catches it
    assert claim_run_folder(tmp_path / "f", {"a": 1}) is False  # nothing else there: claimed afresh
    assert "is not the hash of the config it records" in capsys.readouterr().err
    assert claim_run_folder(tmp_path / "f", {"a": 1}) is True


def test_a_cached_stage_part_and_its_figure_input_are_verified(tmp_path):
    calls = Counter()
    figure = tmp_path / "figure.npz"

    def compute():
        calls["n"] += 1
        write_npz(figure, checksum=True, x=[1.0, 2.0])
        return {"rows": [1]}

    assert results.cached_stage(tmp_path / "parts", {"q": 1}, "s", compute, needs=[figure]) == {"rows": [1]}
    part = tmp_path / "parts" / "s.json"
    part.write_text(part.read_text().replace("1", "2"))  # edited, still JSON
    results.cached_stage(tmp_path / "parts", {"q": 1}, "s", compute, needs=[figure])
    assert calls["n"] == 2 and damaged_files(tmp_path / "parts") == [tmp_path / "parts" / "damaged" / "s.json"]
    flip(figure)
    results.cached_stage(tmp_path / "parts", {"q": 1}, "s", compute, needs=[figure])
    assert calls["n"] == 3 and (tmp_path / "damaged" / "figure.npz").exists()
    results.cached_stage(tmp_path / "parts", {"q": 1}, "s", compute, needs=[figure])
    assert calls["n"] == 3  # all verified now: read back


SPEC = "name: t\nbase: {tokens: 4, dim: 3, layers: 2, width: 8}\naxes: {beta: [1.0, 2.0]}\nseeds: 1\n"


def test_an_edited_sweep_json_is_named_and_force_rewrites_it(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    out = tmp_path / "sw"
    assert CliRunner().invoke(app, ["sweep", "run", str(spec), "--out", str(out)]).exit_code == 0
    saved = out / "sweep.json"
    saved.write_text(saved.read_text().replace("2.0", "3.0"))  # one value changed
    status = CliRunner().invoke(app, ["sweep", "status", str(out)])
    assert status.exit_code == 2 and "sweep.json is damaged (sha256 differs" in status.output
    assert "done 0" not in status.output and "Traceback" not in status.output
    again = CliRunner().invoke(app, ["sweep", "run", str(spec), "--out", str(out)])
    assert again.exit_code == 2 and "--force" in again.output
    forced = CliRunner().invoke(app, ["sweep", "run", str(spec), "--out", str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert "sweep.json" in forced.stderr and (out / "damaged" / "sweep.json").exists()
    assert read_json(saved)["spec"]["zipped"] == [{"beta": [1.0, 2.0]}]  # rewritten, verified
    ok = CliRunner().invoke(app, ["sweep", "status", str(out)])
    assert ok.exit_code == 0 and "2 runs: done 2, failed 0, pending 0" in ok.output  # its runs were kept


def test_a_second_spde_writer_is_refused_in_one_line(tmp_path):
    out = tmp_path / "run"
    with folder_lock(out, "spde run"):  # this process writes there now
        env = {**os.environ, "SDEFORMER_PLUGINS": ""}
        res = subprocess.run(
            [sys.executable, "-m", "sdeformer", *SPDE, "--out", str(out), "--force"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    assert res.returncode == 2 and "Traceback" not in res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert f"another spde run is writing there (pid {os.getpid()})" in line
    assert not (out / "spde.json").exists()


@pytest.mark.parametrize("damaged", ["checkpoint.npz", "segments/000001.npz"])
def test_a_damaged_simulate_checkpoint_or_segment_restarts_the_run(tmp_path, monkeypatch, capsys, damaged):
    monkeypatch.setattr(sim, "CHECKPOINT_LAYERS", 4)
    cfg = ModelConfig(tokens=6, dim=4, width=32, layers=10, horizon=1.0, su=0.1, sw=0.1)
    sim.simulate(cfg, tmp_path / "full")
    with pytest.raises(Interrupted):
        sim.simulate(cfg, tmp_path / "resumed", progress=interrupt_after(6))
    flip(tmp_path / "resumed" / damaged)
    sim.simulate(cfg, tmp_path / "resumed")
    assert f"{Path(damaged).name}" in capsys.readouterr().err
    assert [p.name for p in damaged_files(tmp_path / "resumed")] == [Path(damaged).name]
    full, again = (np.load(tmp_path / name / "trajectory.npz")["x"] for name in ("full", "resumed"))
    assert np.array_equal(full, again)  # recomputed from layer 0: the same numbers


def test_a_damaged_practice_record_is_moved_aside_and_rerun(tmp_path, monkeypatch):
    from sdeformer.practice import _suite as suite
    from sdeformer.practice._methods import get_methods
    from sdeformer.practice._tasks import task_config

    calls = Counter()

    def fake_run(cfg, method, seed, advance, weights=None):
        calls["n"] += 1
        return {"method": method.name, "seed": seed, "final": 1.5}

    monkeypatch.setattr(suite, "run_one", fake_run)
    cfg, methods = task_config("mnist", quick=True, steps=2), get_methods("baseline")
    first = suite.run_suite(cfg, methods, 1, tmp_path)
    (record,) = (tmp_path / "mnist").glob("*.json")
    assert suite.run_suite(cfg, methods, 1, tmp_path) == first and calls["n"] == 1  # reused
    record.write_text(record.read_text().replace("1.5", "9.5"))  # edited
    assert suite.run_suite(cfg, methods, 1, tmp_path) == first and calls["n"] == 2  # not read back: rerun
    assert [p.name for p in damaged_files(tmp_path / "mnist")] == [record.name]


def test_reproduce_spde_recomputes_a_damaged_showcase_run(tmp_path, monkeypatch, capsys):
    from sdeformer.experiments._spde import run as sp

    def figure_input(out, *args):
        for dim in (2, 3):
            write_npz(out / f"convergence_d{dim}.npz", checksum=True, x=[1.0])
        return [{"dim": 2}]

    monkeypatch.setattr(sp, "SHOWCASE", {2: sp.SpdeSettings(2, modes=8, steps=8, horizon=0.1, save_every=4)})
    for name in ("rate_rows", "dominant_rows", "moment_rows"):
        monkeypatch.setattr(sp.study, name, lambda *a: [{"x": 1.0}])
    monkeypatch.setattr(sp.study, "convergence_rows", figure_input)
    monkeypatch.setattr(sp.study, "resolution_example", lambda *a: {"resolved": True})
    monkeypatch.setattr(sp.study, "check_records", lambda report: [])
    monkeypatch.setattr(sp, "w2_check", lambda *a: {"slope": -1.0})
    monkeypatch.setattr(sp, "sphere_check", lambda *a: {"slope": -1.0})
    monkeypatch.setattr(sp, "covariance_records", lambda *a: [{"x": 1.0}])
    monkeypatch.setattr(sp, "sliced_check", lambda *a: {"slope": -1.0})
    sp.run_and_write(tmp_path, quick=True)
    run = tmp_path / "run_d2"
    before = read_json(run / "spde.json")["energy"]
    flip(run / "spde.npz")
    flip(tmp_path / "convergence_d3.npz")
    capsys.readouterr()
    sp.run_and_write(tmp_path, quick=True)
    err = capsys.readouterr().err
    assert "spde.npz" in err and "convergence_d3.npz" in err and "Traceback" not in err
    assert {p.name for p in damaged_files(tmp_path)} == {"spde.npz", "convergence_d3.npz"}
    assert read_json(run / "spde.json")["energy"] == before and sp.read_npz(run / "spde.npz")  # recomputed, verified


def test_a_damaged_real_record_is_moved_aside_and_measured_again(tmp_path, monkeypatch):
    from sdeformer.real import _write as write

    calls = Counter()

    def fake_measure(*args, **kwargs):
        calls["n"] += 1
        return {"layers": [1.0, 2.0]}

    monkeypatch.setattr(write, "measure", fake_measure)
    monkeypatch.setattr(write.load, "load_model", lambda model: ("tokenizer", "model"))  # no model is read
    digests = {"text_sha256": "t", "model_sha256": "m", "tokenizer_sha256": "k"}  # the folder's key
    monkeypatch.setattr(write, "content_key", lambda text, loaded: digests)
    out = tmp_path / "real"
    first = write.run_and_write(out, "m", sentences=4)
    assert write.run_and_write(out, "m", sentences=4) == first and calls["n"] == 1
    flip(out / "real.json", 3)
    assert write.run_and_write(out, "m", sentences=4) == first and calls["n"] == 2
    assert [p.name for p in damaged_files(out)] == ["real.json"]
