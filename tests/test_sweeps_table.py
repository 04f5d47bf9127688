"""Sweep table and runner: stable Parquet schema, resume, error rows and --retry-failed, status, plot."""

from pathlib import Path
from typing import cast

import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
from typer.testing import CliRunner

import sdeformer.cli._sweep  # noqa: F401  (registers `sdeformer sweep`)
from sdeformer.cli import app
from sdeformer.config import load_config_file
from sdeformer.core._errors import ConfigError
from sdeformer.sweeps import _task as task_module, read, run, status
from sdeformer.sweeps._spec import parse_spec

SMOKE = load_config_file(Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "smoke.yaml")
SMALL = {
    **SMOKE,
    "axes": {"activation": ["relu"], "beta": [0.5, 1.0, 2.0], "attention_scale": [1.0]},
    "base": {**SMOKE["base"], "layers": 10, "horizon": 1.0},
    "seeds": 4,
    "times": [0.0, 1.0],
    "batch": 5,
}

COLUMNS = [
    "config_hash",
    "replicate",
    "tokens",
    "dim",
    "width",
    "layers",
    "horizon",
    "activation",
    "su",
    "sw",
    "mlp",
    "attention",
    "attention_scale",
    "beta",
    "seed",
    "dtype",
    "sampling",
    "save_every",
    "noise",
    "share",
    "causal",
    "norm",
    "x0",
    "alibi",
    "mask",
    "cross",
    "cross_noise",
    "rng",
    "solver",
    "attention_method",
    "layer",
    "t",
    "energy",
    "mean_cos",
    "mean_abs_cos",
    "all_within",
    "clusters",
    "status",
    "error",
    "wall_s",
    "task",
    "saturated",
]


@pytest.fixture
def spec():
    return parse_spec(SMALL)


def test_schema_is_stable_and_one_line_reads_the_table(tmp_path, spec, one_thread):
    out = run(spec, tmp_path)
    assert out == {**out, "runs": 12, "ran": 12, "done": 12, "error": 0, "tasks": 3}
    df = pd.read_parquet(tmp_path / "table")
    schema = pq.read_schema(sorted((tmp_path / "table").glob("part-*.parquet"))[0])
    assert schema.names == COLUMNS
    assert [str(schema.field(c).type) for c in ("replicate", "dim", "beta", "mlp", "activation", "energy")] == [
        "int64",
        "int64",
        "double",
        "bool",
        "string",
        "double",
    ]
    assert len(df) == 12 * 2 and set(df["status"]) == {"done"} and bool(df["error"].isna().all())
    assert bool(df["energy"].notna().all()) and set(df["t"]) == {0.0, 1.0}
    assert bool(df.groupby(["config_hash", "replicate"]).size().eq(2).all())


def test_values_match_a_direct_run(tmp_path, spec, one_thread):
    from sdeformer.config._batches import run_group
    from sdeformer.observables import interaction_energy

    run(spec, tmp_path)
    row = read(tmp_path).query("layer == 10").iloc[5]
    cfg = spec_config(row)
    traj = run_group([cfg])
    x = traj.x[-1, 0]  # (N, d): the last saved state of the one run
    assert row["energy"] == pytest.approx(float(interaction_energy(x.double(), cfg.beta)), rel=1e-12, abs=1e-15)


def spec_config(row):
    from sdeformer.config import ModelConfig
    from sdeformer.sweeps._table import CONFIG_TYPES

    return ModelConfig(**{k: (row[k].item() if hasattr(row[k], "item") else row[k]) for k in CONFIG_TYPES})


def test_resume_skips_recorded_runs_and_spec_growth_runs_only_new_points(tmp_path, spec, one_thread):
    run(spec, tmp_path)
    before = read(tmp_path)
    again = run(spec, tmp_path)
    assert again["ran"] == 0 and again["skipped"] == 12
    grown = parse_spec({**SMALL, "axes": {**SMALL["axes"], "beta": [0.5, 1.0, 2.0, 4.0]}})
    with pytest.raises(ConfigError, match=r"another spec \(zipped .*--force"):  # another spec: claimed
        run(grown, tmp_path)
    assert run(grown, tmp_path, force=True)["ran"] == 4
    after = read(tmp_path)
    assert len(after) == 16 * 2
    pd.testing.assert_frame_equal(cast(pd.DataFrame, after[after["beta"] != 4.0]).reset_index(drop=True), before)
    with pytest.raises(ConfigError, match="other observables"):
        run(parse_spec({**SMALL, "observables": ["energy"]}), tmp_path)


def test_error_rows_then_retry_failed(tmp_path, spec, monkeypatch, one_thread):
    real = task_module.engine.run_group

    def flaky(configs, device="cpu"):
        if any(c.beta == 2.0 for c in configs):
            raise RuntimeError("boom at beta 2\nsecond line")
        return real(configs, device)

    monkeypatch.setattr(task_module.engine, "run_group", flaky)
    out = run(spec, tmp_path)
    assert out["done"] == 8 and out["error"] == 4
    df = read(tmp_path)
    bad = cast(pd.DataFrame, df[df["status"] == "error"])
    assert set(bad["beta"]) == {2.0} and set(bad["error"]) == {"RuntimeError: boom at beta 2"}
    assert bool(bad["energy"].isna().all()) and len(bad) == 4 * 2
    assert status(tmp_path) == {**status(tmp_path), "done": 8, "failed": 4, "pending": 0}
    assert run(spec, tmp_path)["ran"] == 0  # failed runs are recorded: skipped without --retry-failed
    monkeypatch.setattr(task_module.engine, "run_group", real)
    assert run(spec, tmp_path, retry_failed=True)["done"] == 4
    df = pd.read_parquet(tmp_path / "table")  # compacted: one record per run, no stale error rows
    assert set(df["status"]) == {"done"} and len(df) == 12 * 2


def test_non_finite_tokens_are_errors(tmp_path, spec, monkeypatch, one_thread):
    real = task_module._batched

    def poisoned(configs, device):
        out = real(configs, device)
        layers, x = out[0]
        out[0] = (layers, torch.full_like(x, float("nan")))
        return out

    monkeypatch.setattr(task_module, "_batched", poisoned)
    run(spec, tmp_path)
    df = read(tmp_path)
    assert cast(int, (df["status"] == "error").sum()) == 3 * 2  # the first run of each of the 3 tasks
    assert df.loc[df["status"] == "error", "error"].str.contains("non-finite").all()


def test_status_and_plot_commands(tmp_path, spec, one_thread):
    run(spec, tmp_path)
    cli = CliRunner()
    result = cli.invoke(app, ["sweep", "status", str(tmp_path)])
    assert result.exit_code == 0 and "done 12, failed 0, pending 0" in result.output
    heat = cli.invoke(app, ["sweep", "plot", str(tmp_path), "--x", "beta", "--y", "replicate", "--color", "energy"])
    assert heat.exit_code == 0 and (tmp_path / "plots" / "beta-replicate-energy.png").stat().st_size > 1000
    curves = cli.invoke(
        app,
        [
            "sweep",
            "plot",
            str(tmp_path),
            "--x",
            "t",
            "--y",
            "mean_cos",
            "--color",
            "beta",
            "--out",
            str(tmp_path / "c.png"),
        ],
    )
    assert curves.exit_code == 0 and (tmp_path / "c.png").exists()
    bad = cli.invoke(app, ["sweep", "plot", str(tmp_path), "--x", "nope", "--y", "beta", "--color", "energy"])
    assert bad.exit_code == 2 and "invalid x='nope'" in bad.output
    missing = cli.invoke(app, ["sweep", "status", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "holds no sweep" in missing.output
