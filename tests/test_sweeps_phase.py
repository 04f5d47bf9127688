"""The phase diagram runs as a resumable sweep and its table draws with `sdeformer sweep plot`."""

import numpy as np
from typer.testing import CliRunner

import sdeformer.cli._sweep  # noqa: F401  (registers `sdeformer sweep`)
from sdeformer.cli import app
from sdeformer.experiments import _phase as exp
from sdeformer.sweeps import load_spec, run, status

GRID = dict(
    activations=("relu", "tanh"), dims=(4, 8), bias_stds=(0.0, 0.3), scales=(0.0, 1.0), seeds=2, tokens=6, steps=10,
    horizon=2.0,
)  # fmt: skip


def test_phase_is_a_resumable_sweep_and_plots(tmp_path, one_thread):
    out = tmp_path / "sweep"
    result = exp.phase(**GRID, out=out)
    assert result.final_energy.shape == (2, 2, 2, 2, 2) and np.isfinite(result.final_energy).all()
    assert (result.final_energy >= 0).all() and ((result.probability >= 0) & (result.probability <= 1)).all()
    assert status(out) == {**status(out), "runs": 32, "done": 32, "failed": 0, "pending": 0}
    again = exp.phase(**GRID, out=out)  # every run recorded: read back, the same numbers
    assert np.array_equal(again.final_energy, result.final_energy)
    assert exp.progress_units(GRID) == 32
    png = tmp_path / "p.png"
    args = ["sweep", "plot", str(out), "--x", "dim", "--y", "su", "--color", "energy", "--out", str(png)]
    assert CliRunner().invoke(app, args).exit_code == 0 and png.stat().st_size > 0


def test_partial_noise_example_runs(tmp_path, one_thread):
    from pathlib import Path

    spec = load_spec(Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "partial_noise.yaml")
    done = run(spec, tmp_path)
    assert done["runs"] == 48 and done["done"] == 48
