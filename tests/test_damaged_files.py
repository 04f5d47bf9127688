"""Damaged files are never read back: a sweep's Parquet parts and the cached ``.npz`` parts carry a
sha256 (``store.checksum_path``) and Parquet page checksums; a part that fails either, or cannot be parsed, is
left out, moved into ``damaged/`` (kept byte for byte), reported in one line and recomputed by the next run.

Each fault: a bit flipped in a Parquet page (with and without its sha256 file: the page CRC alone catches it),
a part truncated to half, a damaged footer, an ``.npz`` with a flipped bit (its zip CRC, without the sha256) and
a truncated ``.npz``. The wrong model each test names is today's reader (``pq.read_table`` without
verification, ``read_cached_npz`` catching only OSError/ValueError)."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.io._cache import read_cached_npz, write_cached_npz
from sdeformer.io._checksums import checksum_path
from sdeformer.io._damage import damaged_files
from sdeformer.sweeps import Job, parse_spec, read, run, run_jobs, status

SPEC = {
    "name": "tiny",
    "base": {"tokens": 4, "dim": 3, "width": 8, "layers": 4, "horizon": 1.0, "su": 0.1, "sw": 0.1},
    "axes": {"beta": [0.5, 1.0]},
    "seeds": 2,
    "observables": ["energy", "mean_cos"],
    "batch": 2,
}  # 4 runs in 2 parts
cli = CliRunner()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference")
    run(parse_spec(SPEC), out)
    return out


@pytest.fixture
def sweep(tmp_path, reference) -> Path:
    out = tmp_path / "sweep"
    shutil.copytree(reference, out)
    return out


def first_part(out: Path) -> Path:
    return sorted((out / "table").glob("part-*.parquet"))[0]


def flip_value(path: Path) -> None:
    """Flip one bit of the first energy value, where Parquet stores it (the column's dictionary page)."""
    value = pq.read_table(path).column("energy")[0].as_py()
    data = bytearray(path.read_bytes())
    at = data.find(struct.pack("<d", value))
    assert at > 0
    data[at + 6] ^= 0x10
    path.write_bytes(bytes(data))


def assert_recovered(out: Path, reference: Path, damaged: Path, damaged_bytes: bytes) -> None:
    """The next run moves the part aside (kept byte for byte), reruns its runs, and the table equals the
    reference exactly (wall times and batching aside)."""
    result = run(parse_spec(SPEC), out)
    assert result["ran"] == 2 and result["done"] == 2
    kept = out / "damaged" / damaged.name
    assert kept.read_bytes() == damaged_bytes and damaged_files(out) == [kept]
    ours, theirs = read(out), read(reference)
    cols = [c for c in theirs.columns if c not in ("wall_s", "task")]
    pd.testing.assert_frame_equal(ours.loc[:, cols], theirs.loc[:, cols], check_exact=True)


def test_bit_flip_in_a_page_is_never_read_back(sweep, reference, capsys):
    part = first_part(sweep)
    flip_value(part)
    silently = pq.read_table(part).column("energy")[0].as_py()  # the wrong model: no verification
    assert silently != pq.read_table(first_part(reference)).column("energy")[0].as_py()
    state = status(sweep)
    assert state["done"] == 2 and state["pending"] == 2 and len(state["damaged"]) == 1
    assert str(part) in state["damaged"][0] and "sha256" in state["damaged"][0]
    assert len(read(sweep)) == 2  # the other part only, not a wrong value
    line = [x for x in capsys.readouterr().err.splitlines() if str(part) in x]
    assert len(line) == 1 and line[0].startswith("warning: damaged file")
    assert_recovered(sweep, reference, part, part.read_bytes())


def test_a_part_without_its_sha256_is_unverifiable_and_recomputed(sweep, reference):
    """A stamped sweep's part whose sha256 file is gone cannot be verified (its page CRCs, if any, are not proof
    of provenance): left out and recomputed, flipped or not (before: read as it was)."""
    part = first_part(sweep)
    checksum_path(part).unlink()
    flip_value(part)
    state = status(sweep)
    assert state["pending"] == 2 and "cannot be verified" in state["damaged"][0]
    assert_recovered(sweep, reference, part, part.read_bytes())


@pytest.mark.parametrize("fault", ["truncated", "footer"])
def test_truncated_or_damaged_footer_moves_aside_and_recomputes(sweep, reference, fault):
    part = first_part(sweep)
    data = part.read_bytes()
    if fault == "truncated":
        damaged = data[: len(data) // 2]
    else:
        footer = struct.unpack("<i", data[-8:-4])[0]  # thrift footer: its length precedes the magic 'PAR1'
        middle = len(data) - 8 - footer // 2
        damaged = data[:middle] + bytes(b ^ 0xFF for b in data[middle : middle + 16]) + data[middle + 16 :]
    part.write_bytes(damaged)
    checksum_path(part).unlink()  # the parser's own failure, not the sha256, must be caught too
    with pytest.raises((OSError, pa.ArrowException)):
        pq.read_table(part)  # the wrong model: an ArrowInvalid traceback in status, run and plot
    result = cli.invoke(app, ["sweep", "status", str(sweep)])
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert f"damaged (left out; the next `sweep run` moves it aside and reruns it): {part}" in result.output
    assert_recovered(sweep, reference, part, damaged)
    listed = cli.invoke(app, ["sweep", "status", str(sweep)])
    assert "moved aside" in listed.output and str(sweep / "damaged" / part.name) in listed.output


def test_plot_reads_no_damaged_part(sweep):
    part = first_part(sweep)
    flip_value(part)
    png = sweep / "p.png"
    result = cli.invoke(app, ["sweep", "plot", str(sweep), "--x", "beta", "--y", "energy", "--out", str(png)])
    assert result.exit_code == 0 and "of 2 runs" in result.output  # the undamaged part's runs only
    assert result.stderr.count("warning: damaged file") == 1 and part.exists()  # a reader moves nothing


# -- cached .npz parts (reproduce's grid, Figure 1, the theorem checks' jobs) ---------------------------------
def npz_fault(path: Path, fault: str) -> bytes:
    data = path.read_bytes()
    if fault == "truncated":
        damaged = data[: len(data) // 2]
    else:  # one bit in the compressed member: its zip CRC (or deflate) fails
        damaged = bytearray(data)
        damaged[60] ^= 0x01
        damaged = bytes(damaged)
    path.write_bytes(damaged)
    return damaged


@pytest.mark.parametrize("fault", ["crc", "truncated"])
@pytest.mark.parametrize("with_checksum", [True, False])
def test_damaged_npz_is_moved_aside_not_raised(tmp_path, capsys, fault, with_checksum):
    path = tmp_path / "parts" / "a.npz"
    write_cached_npz(path, {"k": 1}, x=np.arange(4096.0))
    if not with_checksum:
        checksum_path(path).unlink()  # a part written before checksums: zip CRC / structure are the check
    damaged = npz_fault(path, fault)
    assert read_cached_npz(path, {"k": 1}) is None  # today: zipfile.BadZipFile
    kept = path.parent / "damaged" / "a.npz"
    assert not path.exists() and kept.read_bytes() == damaged
    assert capsys.readouterr().err.count(f"warning: damaged file {path}") == 1


def squares(n: int) -> dict[str, np.ndarray]:
    return {"x": np.arange(n, dtype=float) ** 2}


def test_run_jobs_recomputes_a_damaged_part(tmp_path):
    jobs = [Job(squares, {"n": n}, {"n": n}) for n in (300, 400)]
    first = run_jobs(jobs, tmp_path)
    damaged = npz_fault(tmp_path / f"{jobs[0].id}.npz", "crc")
    again = run_jobs(jobs, tmp_path)
    assert all(np.array_equal(a["x"], b["x"]) for a, b in zip(first, again))
    assert (tmp_path / "damaged" / f"{jobs[0].id}.npz").read_bytes() == damaged


def test_reproduce_lists_damaged_parts(tmp_path, monkeypatch):
    from sdeformer.experiments import _reproduce as reproduce

    kept = tmp_path / "parts" / "grid" / "damaged" / "0123.npz"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"x")
    monkeypatch.setattr(reproduce, "reproduce", lambda *a, **k: tmp_path / "index.html")
    result = cli.invoke(app, ["reproduce", "table1", "--out", str(tmp_path)])
    assert result.exit_code == 0
    assert f"damaged part kept for inspection (its result was recomputed): {kept}" in result.stderr
