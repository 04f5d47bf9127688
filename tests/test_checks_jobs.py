"""sync-check and the rates run as jobs on the sweep executors (sweeps/_jobs.py): the numbers do not depend on the
chunking or the executor, a rerun computes only the missing parts, and the commands tie their folder to their
options (store.claim_run_folder)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.experiments._rates import measure as rates
from sdeformer.experiments._sync import check as sync
from sdeformer.experiments._sync.check import sync_check
from sdeformer.io._claims import claim_run_folder
from sdeformer.io._formats import read_npz
from sdeformer.sweeps import DaskExecutor

pytestmark = pytest.mark.usefixtures("one_thread")
runner = CliRunner()

SYNC = dict(activation="relu", dim=8, bias_std=0.1, runs=4, tokens=4, steps=20, horizon=1.0)
# E E_beta(T) (SDE, discrete) of SYNC, from the chunk loop before the checks ran as jobs (bit-identical since)
PINNED = {
    (torch.float64, None): (0.41196495055563687, 0.3269882551015644),
    (torch.float32, None): (0.3160980721369585, 0.35997730870340217),
}
TINY_RATES: dict[str, dict] = {
    "depth": dict(runs=4, chunk=2, x=[2, 4], fine=8, tokens=3, dim=4),
    "width": dict(runs=4, chunk=2, x=[8, 16], layers=3, tokens=3, dim=4),
    "tokens": dict(runs=2, chunk=1, x=[4, 8], reference=32, features=16, steps=3, saves=1),
}
TINY_SYNC = ["sync-check", "--dim", "4", "--runs", "2", "--tokens", "2", "--steps", "4", "--horizon", "0.5"]


@pytest.fixture(scope="module")
def dask():
    with DaskExecutor(2) as ex:
        yield ex


def _same(a, b) -> bool:
    return all(np.array_equal(a.energy_mean[k], b.energy_mean[k]) for k in ("sde", "discrete"))


def _errors(result) -> list[str]:
    assert "Traceback" not in result.output + result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("dtype,width", [(torch.float64, None), (torch.float32, None), (torch.float64, 16)])
def test_sync_check_is_the_same_in_every_chunking_and_pinned(dtype, width):
    one, *others = [sync_check(**SYNC, chunk=c, dtype=dtype, width=width) for c in (1, 3, 4)]
    assert all(_same(one, r) for r in others)
    if (dtype, width) in PINNED:
        tol = 1e-12 if dtype == torch.float64 else 1e-6
        sde, discrete = PINNED[dtype, width]
        assert one.final_energy["sde"] == pytest.approx(sde, rel=tol)
        assert one.final_energy["discrete"] == pytest.approx(discrete, rel=tol)


def test_sync_check_resume_recomputes_only_the_missing_part(tmp_path, monkeypatch):
    ticks: list[int] = []
    first = sync_check(**SYNC, chunk=2, out=tmp_path, progress=ticks.append)
    assert sum(ticks) == sync.progress_units(4, 20, 2)
    parts = sorted((tmp_path / "parts").glob("*.npz"))
    assert len(parts) == 4 and (tmp_path / "energies.npz").exists()  # 2 chunks x (SDE, discrete)
    parts[1].unlink()  # as if killed before that part was written
    calls = []
    real = sync.sync_runs
    monkeypatch.setattr(sync, "sync_runs", lambda **k: calls.append(k["seeds"]) or real(**k))
    ticks.clear()
    again = sync_check(**SYNC, chunk=2, out=tmp_path, progress=ticks.append)
    assert len(calls) == 1 and _same(first, again) and sum(ticks) == sync.progress_units(4, 20, 2)
    sync_check(**{**SYNC, "seed": 1}, chunk=2, out=tmp_path)  # other settings: their own parts
    assert len(calls) == 5 and len(list((tmp_path / "parts").glob("*.npz"))) == 8


def test_custom_attention_objects_run_as_jobs(tmp_path):
    from sdeformer.attention._softmax import SoftmaxAttention

    attention = SoftmaxAttention(V=-torch.eye(8))
    a = sync_check(**SYNC, chunk=2, attention=attention, out=tmp_path)
    b = sync_check(**SYNC, chunk=4, attention=SoftmaxAttention(V=-torch.eye(8)))
    c = sync_check(**SYNC, chunk=2, attention=SoftmaxAttention(V=-2 * torch.eye(8)), out=tmp_path)
    assert _same(a, b) and not _same(a, c)  # another matrix: not read from the first one's parts


def test_rates_do_not_depend_on_the_chunking(tmp_path):
    for kind, tiny in TINY_RATES.items():
        chunked = rates.measure(kind, **tiny)
        whole = rates.measure(kind, **{**tiny, "chunk": tiny["runs"]})
        assert chunked.samples.shape == (2, tiny["runs"]) and np.array_equal(chunked.samples, whole.samples), kind


def test_rates_resume_recomputes_only_the_missing_part(tmp_path, monkeypatch):
    tiny = TINY_RATES["tokens"]
    first = rates.run_and_write(tmp_path, "tokens", **tiny)
    parts = sorted((tmp_path / "parts").glob("*.npz"))
    assert len(parts) == 2
    parts[0].unlink()
    (tmp_path / "rates_tokens.json").unlink()  # as if killed before the measurement finished
    calls = []
    real = rates.rate_runs
    monkeypatch.setattr(rates, "rate_runs", lambda **k: calls.append(k["lo"]) or real(**k))
    again = rates.run_and_write(tmp_path, "tokens", **tiny)
    assert len(calls) == 1 and np.array_equal(first.samples, again.samples)


def test_sync_check_and_rates_on_dask_equal_local(dask, tmp_path):
    local = sync_check(**SYNC, chunk=2, out=tmp_path / "local")
    remote = sync_check(**SYNC, chunk=2, out=tmp_path / "dask", executor=dask)
    assert _same(local, remote)
    a, b = read_npz(tmp_path / "local" / "energies.npz"), read_npz(tmp_path / "dask" / "energies.npz")
    assert all(np.array_equal(a[k], b[k]) for k in ("t", "sde", "discrete"))
    for kind, tiny in TINY_RATES.items():
        assert np.array_equal(rates.measure(kind, **tiny).samples, rates.measure(kind, executor=dask, **tiny).samples)


def test_sync_check_refuses_a_bad_executor_in_one_line(tmp_path):
    for bad, param in ((["--executor", "nope"], "executor"), (["--scheduler", "tcp://127.0.0.1:1"], "scheduler")):
        result = runner.invoke(app, [*TINY_SYNC, "--out", str(tmp_path / "d"), *bad])
        errors = _errors(result)
        assert result.exit_code == 2 and len(errors) == 1 and param in errors[0], result.stderr
    assert not (tmp_path / "d").exists()


def test_sync_check_folder_is_tied_to_its_settings(tmp_path):
    out = tmp_path / "d"
    assert runner.invoke(app, [*TINY_SYNC, "--out", str(out), "--json"]).exit_code == 0
    assert runner.invoke(app, [*TINY_SYNC, "--out", str(out), "--json"]).exit_code == 0  # the same: resumes
    other = runner.invoke(app, [*TINY_SYNC, "--seed", "1", "--out", str(out)])
    errors = _errors(other)
    assert other.exit_code == 2 and len(errors) == 1 and str(out) in errors[0] and "--force" in errors[0]
    forced = runner.invoke(app, [*TINY_SYNC, "--seed", "1", "--out", str(out), "--force", "--json"])
    assert forced.exit_code == 0 and json.loads((out / "sync.json").read_text())["seed"] == 1


def test_rate_kinds_share_a_folder_of_one_config(tmp_path):
    out = str(tmp_path / "r")
    tiny = ["--quick", "--runs", "2", "--x", "2,4", "--dim", "4", "--out", out, "--json"]
    assert runner.invoke(app, ["rates", "depth", *tiny]).exit_code == 0
    assert runner.invoke(app, ["rates", "width", *tiny]).exit_code == 0  # the same options, another kind
    other = runner.invoke(app, ["rates", "depth", *tiny, "--seed", "3"])
    assert other.exit_code == 2 and len(_errors(other)) == 1 and out in _errors(other)[0]


def test_lyapunov_and_phase_folders_are_tied_to_their_settings(tmp_path):
    out = tmp_path / "l"
    tiny = ["lyapunov", "--activation", "relu", "--dim", "4", "--steps", "5", "--horizon", "0.1", "--out", str(out)]
    assert runner.invoke(app, [*tiny, "--runs", "2", "--json"]).exit_code == 0
    assert runner.invoke(app, [*tiny, "--runs", "3"]).exit_code == 2
    assert runner.invoke(app, [*tiny, "--runs", "3", "--force", "--json"]).exit_code == 0
    held = tmp_path / "p"
    claim_run_folder(held, {"command": "something else"})
    refused = runner.invoke(app, ["phase", "--quick", "--out", str(held)])
    assert refused.exit_code == 2 and str(held) in _errors(refused)[0]
    fresh = tmp_path / "new" / "p"  # refused by the check itself after the claim: nothing left behind
    result = runner.invoke(app, ["phase", "--seeds", "1000000000", "--out", str(fresh)])
    assert result.exit_code == 2 and "GiB" in _errors(result)[0] and not (tmp_path / "new").exists()
