"""The sweep's tidy table: Parquet parts under ``OUT/table/``, one row per (point, replicate seed, time).

Columns: ``config_hash``, ``replicate`` (the spec's seed), every ``ModelConfig`` field (``seed`` is the run's
derived seed), ``layer``, ``t``, one float64 column per observable, ``status`` (``done`` or ``error``),
``error`` (the message, else null), ``wall_s`` (the task's wall time shared over its runs) and ``task``.
Each task writes one part atomically (temporary name, then ``os.replace``), so a reader never sees half a part;
``pandas.read_parquet(OUT / "table")`` reads the union. A run recorded twice (a retried error, or a task
finished by a worker that outlived its driver) is resolved by ``resolve``: a ``done`` record wins over errors,
then the first part by name; ``compact`` rewrites the parts without the superseded rows.
"""

from __future__ import annotations

import io
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..config import DEFAULTS, ModelConfig
from ..core.errors import ConfigError
from ..io.store import atomic_write_bytes

CONFIG_TYPES = typing.get_type_hints(ModelConfig)
ARROW_TYPES = {int: pa.int64(), float: pa.float64(), str: pa.string(), bool: pa.bool_()}
KEY = ["config_hash", "replicate"]
LEADING = [("config_hash", pa.string()), ("replicate", pa.int64())]
TRAILING = [("layer", pa.int64()), ("t", pa.float64())]
META = [("status", pa.string()), ("error", pa.string()), ("wall_s", pa.float64()), ("task", pa.string())]
STATUSES = ("done", "error")


def table_dir(out: str | Path) -> Path:
    return Path(out) / "table"


def schema(columns: Iterable[str]) -> pa.Schema:
    """The table's schema for the given observable columns. Raises ConfigError if one clashes with a column."""
    config = [(name, ARROW_TYPES[kind]) for name, kind in CONFIG_TYPES.items()]
    fixed = LEADING + config + TRAILING
    taken = {name for name, _ in fixed + META}
    columns = list(columns)
    for c in columns:
        if c in taken:
            raise ConfigError("observables column", c, "clashes with a table column; rename it with 'column:'")
    return pa.schema(fixed + [(c, pa.float64()) for c in columns] + META)


def write_part(out: str | Path, task: str, rows: dict[str, list[Any]], columns: Iterable[str]) -> Path:
    """Write one task's rows (column -> values) as ``part-<task>.parquet``, atomically."""
    table = pa.Table.from_pydict(rows, schema=schema(columns))
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    return atomic_write_bytes(table_dir(out) / f"part-{task}.parquet", buf.getvalue().to_pybytes())


def parts(out: str | Path) -> list[Path]:
    """The finished parts, by name (temporary files start with '.' and are never listed)."""
    folder = table_dir(out)
    return sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []


def _read_all(out: str | Path) -> pd.DataFrame:
    frames = []
    for path in parts(out):
        frame = pq.read_table(path).to_pandas()
        for name in DEFAULTS.keys() - set(frame.columns):  # a part written before the field existed
            frame[name] = DEFAULTS[name]
        frame["_part"], frame["_mtime"] = path.name, path.stat().st_mtime_ns
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*KEY, "status", "_part"])


def _winners(df: pd.DataFrame) -> pd.DataFrame:
    """Per run key, the part whose record counts: a done part first (by name), else the newest error part."""
    per = df.groupby([*KEY, "_part"], as_index=False).agg(
        done=("status", lambda s: (s == "done").any()), mtime=("_mtime", "max")
    )
    per["order"] = per["mtime"].where(~per["done"], 0) * -1
    per = per.sort_values([*KEY, "done", "order", "_part"], ascending=[True, True, False, True, True])
    return cast(pd.DataFrame, per.drop_duplicates(KEY)[[*KEY, "_part"]])


def resolve(df: pd.DataFrame) -> pd.DataFrame:
    """Keep, for each run, the rows of its winning part only."""
    if df.empty:
        return df
    keep = df.merge(_winners(df), on=[*KEY, "_part"], how="inner")
    return cast(pd.DataFrame, keep.sort_values([*KEY, "layer"], kind="stable").reset_index(drop=True))


def read(out: str | Path) -> pd.DataFrame:
    """The table: the union of parts, one record per run (see ``resolve``)."""
    df = resolve(_read_all(out))
    return df.drop(columns=["_part", "_mtime"], errors="ignore")


def run_status(df: pd.DataFrame) -> dict[tuple[str, int], str]:
    """``(config_hash, replicate) -> 'done' | 'error'`` for every run of a table (see ``read``)."""
    if df.empty:
        return {}
    first = df.drop_duplicates(KEY)
    return {(h, int(r)): s for h, r, s in zip(first["config_hash"], first["replicate"], first["status"])}


def compact(out: str | Path) -> int:
    """Rewrite parts without superseded rows (atomically; a part left empty is removed). Returns rows dropped."""
    df = _read_all(out)
    if df.empty:
        return 0
    winners = _winners(df).rename(columns={"_part": "_winner"})
    df = df.merge(winners, on=KEY, how="left")
    stale = df[df["_part"] != df["_winner"]]
    for name in sorted(set(stale["_part"])):
        path = table_dir(out) / name
        table = pq.read_table(path)
        mine = df[df["_part"] == name]
        mask = pa.array((mine["_part"] == mine["_winner"]).to_numpy())
        kept = table.filter(mask)
        if kept.num_rows == 0:
            path.unlink(missing_ok=True)
        else:
            buf = io.BytesIO()
            pq.write_table(kept, buf)
            atomic_write_bytes(path, buf.getvalue())
    return len(stale)
