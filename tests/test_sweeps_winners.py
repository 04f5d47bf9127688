"""The vectorised choice of each run's winning part (sweeps table) gives the frame the per-run lambda gave."""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
import pytest

from sdeformer.sweeps._table import KEY, _winners


def _winners_by_lambda(df: pd.DataFrame) -> pd.DataFrame:
    """The former implementation: a Python lambda per (run, part) group."""
    per = df.groupby([*KEY, "_part"], as_index=False).agg(
        done=("status", lambda s: (s == "done").any()), mtime=("_mtime", "max")
    )
    per["order"] = per["mtime"].where(~per["done"], 0) * -1
    per = per.sort_values([*KEY, "done", "order", "_part"], ascending=[True, True, False, True, True])
    return cast(pd.DataFrame, per.drop_duplicates(KEY)[[*KEY, "_part"]])


def _table(runs: int, seed: int) -> pd.DataFrame:
    """Rows of ``runs`` runs over a few parts: done and error records, retries, equal mtimes (ties)."""
    rng = np.random.default_rng(seed)
    rows = 3 * runs
    return pd.DataFrame(
        {
            "config_hash": rng.choice([f"h{i}" for i in range(max(1, runs // 4))], rows),
            "replicate": rng.integers(0, 4, rows),
            "_part": rng.choice([f"p{i:03d}.parquet" for i in range(7)], rows),
            "_mtime": rng.integers(0, 3, rows).astype(float),  # few values: ties between parts
            "status": rng.choice(["done", "error"], rows, p=[0.6, 0.4]),
            "layer": rng.integers(0, 5, rows),
        }
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_vectorised_winners_are_the_former_frame(seed):
    df = _table(400, seed)
    pd.testing.assert_frame_equal(_winners(df), _winners_by_lambda(df))
