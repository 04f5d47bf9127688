"""The reproduction report: figures and tables land in one self-contained index.html."""

from __future__ import annotations

import numpy as np

from sdeformer.experiments._grid import COSINE_BINS, grid_configs, run_and_write, sections
from sdeformer.io._report import write_report
from sdeformer.plots._paper import grid_figure


def test_grid_section_small_scale(tmp_path):
    tanh, none = run_and_write(tmp_path, choices=("tanh", "none"), layers=12, width=32)
    report = sections([tanh, none])
    assert [s.title for s in report] == ["Figure 2: tanh MLP", "Figure 3: no MLP"]
    assert tanh.cos_counts.shape == (18, 13, COSINE_BINS) and tanh.energy.shape == (18, 13)
    assert np.all(tanh.cos_counts.sum(-1) == 64 * 63 // 2)  # every pair counted once per layer
    # no MLP, s = 0: nothing moves, so the energy is constant
    frozen = [i for i, c in enumerate(grid_configs("none", layers=12, width=32)) if c.attention_scale == 0.0]
    assert np.allclose(none.energy[frozen], none.energy[frozen][:, :1], rtol=1e-5)
    for r in (tanh, none):  # the experiment computes, the plots draw its results
        grid_figure(r, tmp_path / r.figure)
    path = write_report(tmp_path, "test", report)
    html = path.read_text()
    assert html.count("data:image/png;base64,") == 2 and "odd field" in html
    # one cached part per (choice, d), reused (resume): a second call does not recompute
    parts = sorted((tmp_path / "parts" / "grid").glob("*.npz"))
    assert len(parts) == 2 * 3
    mtimes = [p.stat().st_mtime_ns for p in parts]
    again = run_and_write(tmp_path, choices=("tanh",), layers=12, width=32)
    assert [p.stat().st_mtime_ns for p in parts] == mtimes
    assert np.array_equal(again[0].energy, tanh.energy)


def test_grid_is_the_same_on_dask_workers(tmp_path):
    from sdeformer.sweeps import DaskExecutor

    local = run_and_write(tmp_path / "local", choices=("relu",), layers=6, width=16)[0]
    with DaskExecutor(2) as ex:
        remote = run_and_write(tmp_path / "dask", choices=("relu",), layers=6, width=16, executor=ex)[0]
    assert np.array_equal(local.cos_counts, remote.cos_counts) and np.array_equal(local.energy, remote.energy)


def test_a_reproduction_folder_belongs_to_one_seed(tmp_path):
    from typer.testing import CliRunner

    from sdeformer.cli import app

    runner = CliRunner()
    (tmp_path / "practice").mkdir()  # another command's outputs in the same results folder are no obstacle
    assert runner.invoke(app, ["reproduce", "table1", "--out", str(tmp_path)]).exit_code == 0
    assert runner.invoke(app, ["reproduce", "table1", "--out", str(tmp_path)]).exit_code == 0  # same seed: resumes
    other = runner.invoke(app, ["reproduce", "table1", "--out", str(tmp_path), "--seed", "1"])
    assert other.exit_code == 2 and str(tmp_path) in other.output and "--force" in other.output
    assert runner.invoke(app, ["reproduce", "table1", "--out", str(tmp_path), "--seed", "1", "--force"]).exit_code == 0
