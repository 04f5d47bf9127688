"""A sweep folder as one labelled ``xarray.Dataset`` (``sdf.open_sweep``): the verified table (``table.read``:
every part's sha256 and Parquet page checksums checked; damaged parts left out with a warning), one variable
per observable, dims point x replicate x time, the config values that vary over the points as coordinates
along ``point``, those that do not as attributes. Write it with ``ds.to_netcdf(PATH)`` or ``ds.to_zarr(PATH)``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from ..core._errors import ConfigError
from ._table import KEY, META, TRAILING, read

CONFIG_COLUMNS_EXCLUDED = ("seed",)  # a run's derived seed differs per replicate: not a point's coordinate


def open_sweep(out: str | Path) -> Any:
    """The sweep in ``out`` as an ``xarray.Dataset`` (module docstring); only ``done`` runs. Raises ConfigError
    for a folder without a sweep table."""
    import xarray as xr

    from ._spec import field_names

    if not isinstance(out, (str, os.PathLike)):
        raise ConfigError("sweep folder", out, "a path (str or pathlib.Path) of a sweep folder")
    out = Path(out)
    if not (out / "table").is_dir():
        raise ConfigError("sweep folder", str(out), "holds no sweep table (run `sdeformer sweep SPEC --out DIR`)")
    df = cast(pd.DataFrame, read(out))
    df = cast(pd.DataFrame, df[df["status"] == "done"])
    config = [c for c in field_names() if c in df.columns and c not in CONFIG_COLUMNS_EXCLUDED]
    config += [c for c in df.columns if "." in c]  # the parts' own parameters (KIND.NAME)
    fixed = [name for name, _ in (*TRAILING, *META)] + list(KEY) + ["seed"]
    observables = [c for c in df.columns if c not in fixed and c not in config]
    table = df.rename(columns={"config_hash": "point", "t": "time"}).set_index(["point", "replicate", "time"])
    ds = xr.Dataset.from_dataframe(cast(pd.DataFrame, table[observables]))
    per_point = cast(pd.DataFrame, df.drop_duplicates(subset=["config_hash"]).set_index("config_hash")[config])
    varying = [c for c in config if len(set(per_point[c].tolist())) > 1]
    ds = ds.assign_coords({c: ("point", per_point.loc[ds["point"].values, c].to_numpy()) for c in varying})
    ds.attrs.update({c: _attr(per_point[c].iloc[0]) for c in config if c not in varying})
    return ds


def _attr(value: Any) -> Any:
    """A NetCDF-writable attribute: bools as 0/1, numpy scalars as Python numbers."""
    return (
        int(value) if isinstance(value, (bool, np.bool_)) else value.item() if isinstance(value, np.generic) else value
    )
