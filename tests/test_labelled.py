"""Labelled results: ``Trajectory.to_xarray`` and ``sdf.open_sweep`` carry the numbers and their labels."""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
import pytest
import torch

import sdeformer as sdf
from sdeformer import sweeps
from sdeformer.core._errors import ConfigError

xr = pytest.importorskip("xarray")


def test_a_batched_run_converts_with_its_dims_times_and_config():
    cfg = sdf.ModelConfig(tokens=5, dim=3, layers=6, width=16, horizon=1.5, dtype="float64", beta=2.0)
    traj = cfg.build().run(cfg.initial_tokens().expand(2, 5, 3), seed=[0, 1], saveat=3)
    ds = traj.to_xarray(cfg)
    assert ds["x"].dims == ("time", "run", "token", "dim")
    assert ds["x"].shape == (3, 2, 5, 3)
    np.testing.assert_array_equal(ds["x"].values, traj.x.numpy())
    np.testing.assert_allclose(ds["time"].values, [0.0, 0.75, 1.5])
    np.testing.assert_array_equal(ds["step"].values, [0, 3, 6])
    assert float(ds["beta"]) == 2.0 and ds.attrs["steps"] == 6.0


def test_the_runs_of_run_sweep_convert_as_one_dataset_with_the_varying_config_as_coordinates(tmp_path):
    from sdeformer.config._batches import run_sweep

    base = sdf.ModelConfig(tokens=4, dim=3, layers=4, width=16, dtype="float64")
    configs = [base.replace(beta=b, seed=s) for b in (1.0, 2.0) for s in (0, 1)]
    runs = run_sweep(configs)
    ds = runs.to_xarray()
    assert ds["x"].dims == ("time", "run", "token", "dim") and ds["x"].shape == (5, 4, 4, 3)
    for k, traj in enumerate(runs):  # the numbers are the trajectories', the labels the configs'
        np.testing.assert_array_equal(ds["x"].values[:, k], traj.x.numpy())
    assert ds["beta"].values.tolist() == [1.0, 1.0, 2.0, 2.0] and ds["seed"].values.tolist() == [0, 1, 0, 1]
    assert ds.attrs["tokens"] == 4 and "tokens" not in ds.coords
    ds.to_netcdf(tmp_path / "runs.nc")  # writable as it is
    uneven = run_sweep([base, base.replace(layers=8)])
    with pytest.raises(ValueError, match="other times"):
        uneven.to_xarray()


def test_a_sweep_folder_opens_as_one_dataset_equal_to_its_table(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: labels\nbase: {tokens: 4, dim: 3, layers: 4, width: 16}\n"
        "axes: {beta: [1.0, 2.0], solver: ['', projected]}\nseeds: 2\nobservables: [energy]\n"
    )
    out = tmp_path / "out"
    sweeps.run(sweeps.load_spec(spec), out)
    ds = sdf.open_sweep(out)
    assert ds["energy"].dims == ("point", "replicate", "time") and ds.sizes["point"] == 4
    table = pd.read_parquet(out / "table")
    for point in ds["point"].values:
        rows = cast(pd.DataFrame, table[table["config_hash"] == point]).sort_values("replicate")
        np.testing.assert_array_equal(ds["energy"].sel(point=point).values[:, -1], rows["energy"].to_numpy())
        assert float(ds["beta"].sel(point=point)) == rows["beta"].iloc[0]
        assert str(ds["solver"].sel(point=point).values) == rows["solver"].iloc[0]
    ds.to_netcdf(tmp_path / "sweep.nc")
    assert xr.open_dataset(tmp_path / "sweep.nc")["energy"].shape == ds["energy"].shape
    with pytest.raises(ConfigError, match="sweep folder"):
        sdf.open_sweep(tmp_path)


def test_a_tuple_state_keeps_every_part():
    x = (torch.zeros(2, 3, 4), torch.ones(2, 3, 1))
    traj = sdf.Trajectory(x, torch.tensor([0, 1]), torch.tensor([0.0, 0.5]))
    ds = traj.to_xarray()
    assert set(ds.data_vars) == {"x", "x1"} and ds["x1"].shape == (2, 3, 1)


def test_every_batch_api_returns_runs_that_label_as_one_dataset(tmp_path):
    """``sweep_measure`` and ``run_jobs`` return the same ``Runs`` as ``run_sweep``: one entry per run in the input
    order, labelled by its config or job key, ``to_xarray()`` with dim ``run``."""
    from sdeformer.config._batches import run_sweep, sweep_measure
    from sdeformer.sweeps import Job, run_jobs

    base = sdf.ModelConfig(tokens=4, dim=3, layers=4, width=16, dtype="float64")
    configs = [base.replace(beta=b) for b in (1.0, 2.0, 3.0)]
    energy = sweep_measure(configs, lambda traj: {"e": sdf.interaction_energy(traj.x[-1], 1.0)})
    ds = energy.to_xarray()
    assert ds["e"].dims == ("run",) and ds["beta"].values.tolist() == [1.0, 2.0, 3.0]
    for k, traj in enumerate(run_sweep(configs)):  # the numbers of the runs, in the input order
        assert float(ds["e"][k]) == pytest.approx(float(sdf.interaction_energy(traj.x[-1], 1.0)), rel=1e-12)
    assert energy.stack()["e"].shape == (3,)
    parts = run_jobs([Job(_ramp, {"stop": 3, "shift": s}, {"n": 3, "shift": s}) for s in (0, 1)], tmp_path)
    jd = parts.to_xarray()
    assert jd["a"].dims == ("run", "a_0") and jd["shift"].values.tolist() == [0, 1] and jd.attrs["n"] == 3
    np.testing.assert_array_equal(jd["a"].values, [[0, 1, 2], [1, 2, 3]])
    with pytest.raises(ValueError, match="'a' has another shape"):
        type(parts)([{"a": np.zeros(2)}, {"a": np.zeros(3)}], [{}, {}]).to_xarray()


def _ramp(stop: int, shift: int) -> dict[str, np.ndarray]:
    return {"a": np.arange(stop) + shift}
