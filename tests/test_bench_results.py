"""Benchmark results go through the verified store (docs/bad-inputs.md, "Damaged files"): each
``<part>[_quick].json`` is written with its sha256 (``_checksums/``), read back verified, and a damaged one is
named in one line and moved to ``OUT/damaged/`` instead of being read (``bench --out`` taking over a folder,
``bench._sweeps`` merging its record). The parts themselves are stubs: what is checked is the file handling."""

from __future__ import annotations

import pytest
from benchmarks import _run as runner, _sweeps as sweeps_bench
from benchmarks._suite import app as suite, benchmark_runner
from typer.testing import CliRunner

from sdeformer.io._checksums import Damaged, checksum_path
from sdeformer.io._formats import read_json, write_json


def flip(path, at: int = -3) -> None:
    """One byte of ``path`` changed (a flipped bit's worth of damage)."""
    data = bytearray(path.read_bytes())
    data[at] = ord("7") if data[at] != ord("7") else ord("8")
    path.write_bytes(bytes(data))


def test_a_part_is_written_with_its_checksum_and_an_edited_one_is_refused_on_read(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "peaks", lambda device, quick: {})
    monkeypatch.setattr(runner, "_part", lambda module, function: lambda *args: {"seconds": [1.25, 2.5]})
    runner.run_benchmarks(("rng",), quick=True, out=tmp_path)
    path = tmp_path / "rng_quick.json"
    assert checksum_path(path).exists() and read_json(path)["rng"]["seconds"] == [1.25, 2.5]
    text = path.read_text()
    path.write_text(text.replace("2.5", "2.6"))  # an edited number, valid JSON
    with pytest.raises(Damaged, match="sha256"):
        read_json(path)


def test_bench_moves_a_damaged_result_aside_and_writes_the_part_again(tmp_path, monkeypatch):
    calls = []

    def stub(parts, quick=False, out=None, device="cpu", on_part=None, threads=None):
        calls.append(tuple(parts))
        return {"machine": {"device": str(device)}, "quick": quick}

    monkeypatch.setattr(benchmark_runner(), "run_benchmarks", stub)
    old = tmp_path / "old"  # results of a run before folders were claimed: no run.json
    write_json(old / "grid.json", {"machine": {"device": "cpu"}, "grid": {"ratio": 1.5}}, checksum=True)
    flip(old / "grid.json")
    result = CliRunner().invoke(suite, ["--only", "grid", "--json", "--out", str(old)])
    assert result.exit_code == 0 and calls == [("grid",)], result.output
    assert (old / "damaged" / "grid.json").exists() and not (old / "grid.json").exists()
    warned = [line for line in result.stderr.splitlines() if "damaged file" in line]
    assert len(warned) == 1 and "grid.json" in warned[0] and "sha256" in warned[0]


def test_the_sweeps_record_merges_only_a_verified_file(tmp_path, monkeypatch, capsys):
    out = tmp_path / "sweeps.json"
    monkeypatch.setattr(sweeps_bench, "throughput", lambda seeds, repeat, two: {"wall_s": 1.0})
    monkeypatch.setattr(sweeps_bench, "_uptime", lambda: "load average: 0")
    sweeps_bench.main(["--out", str(out)])
    write_json(out, {**read_json(out), "spec:old:dask": {"wall_s": 9.0}}, checksum=True)
    sweeps_bench.main(["--out", str(out)])
    assert set(read_json(out)) == {"throughput", "spec:old:dask"}  # merged with the verified record
    flip(out)
    sweeps_bench.main(["--out", str(out)])
    assert set(read_json(out)) == {"throughput"}  # the damaged record was not merged: moved aside
    assert (tmp_path / "damaged" / "sweeps.json").exists()
    assert "damaged file" in capsys.readouterr().err
