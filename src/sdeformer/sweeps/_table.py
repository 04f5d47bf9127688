"""The sweep's tidy table: Parquet parts under ``OUT/table/``, one row per (point, replicate seed, time).

Columns: ``config_hash``, ``replicate`` (the spec's seed), every ``ModelConfig`` field (``seed`` is the run's
derived seed), ``layer``, ``t``, one float64 column per observable, ``status`` (``done`` or ``error``),
``error`` (the message, else null), ``wall_s`` (the task's wall time shared over its runs) and ``task``.
Each task writes one part atomically (temporary name, then ``os.replace``), so a reader never sees half a part;
``pandas.read_parquet(OUT / "table")`` reads the union. A run recorded twice (a retried error, or a task
finished by a worker that outlived its driver) is resolved by ``resolve``: a ``done`` record wins over errors,
then the first part by name; ``compact`` rewrites the parts without the superseded rows.

Every part carries two checks: its sha256 (``io._checksums.checksum_path``, verified on every read) and Parquet page
checksums (CRC32 per data page, written and verified). A part that fails either, or cannot be parsed
(truncated, damaged footer), is left out of what is read: its runs count as pending. A writer (``sweep run``:
``load(out, move=True)``) moves it into ``OUT/damaged/`` (kept, never deleted), so the next run recomputes it.
"""

from __future__ import annotations

import io
import sys
import typing
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path
from typing import Any, cast

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..config import DEFAULTS, ModelConfig
from ..core._errors import ConfigError
from ..io._atomic import atomic_write_bytes
from ..io._checksums import Damaged, checksum_path, verified_bytes
from ..io._damage import move_aside
from . import _provenance as provenance

# the config fields with a column each (the parts' own parameters, KIND.NAME, get float columns of their own)
CONFIG_TYPES = {f.name: typing.get_type_hints(ModelConfig)[f.name] for f in fields(ModelConfig) if f.name != "params"}
ARROW_TYPES = {int: pa.int64(), float: pa.float64(), str: pa.string(), bool: pa.bool_()}
KEY = ["config_hash", "replicate"]
LEADING = [("config_hash", pa.string()), ("replicate", pa.int64())]
TRAILING = [("layer", pa.int64()), ("t", pa.float64())]
META = [("status", pa.string()), ("error", pa.string()), ("wall_s", pa.float64()), ("task", pa.string())]
META.append(("saturated", pa.bool_()))  # the run's SDE step outside its scheme's range (sweeps._task.saturated)
STATUSES = ("done", "error")


def table_dir(out: str | Path) -> Path:
    return Path(out) / "table"


def schema(columns: Iterable[str | tuple[str, type]]) -> pa.Schema:
    """The table's schema for the given observable columns (floats; a ``(name, type)`` pair for a part's own
    ``str`` or ``bool`` parameter). Raises ConfigError if one clashes with a column."""
    config = [(name, ARROW_TYPES[kind]) for name, kind in CONFIG_TYPES.items()]
    fixed = LEADING + config + TRAILING
    taken = {name for name, _ in fixed + META}
    typed = [(c, pa.float64()) if isinstance(c, str) else (c[0], ARROW_TYPES[c[1]]) for c in columns]
    for c, _ in typed:
        if c in taken:
            raise ConfigError("observables column", c, "clashes with a table column; rename it with 'column:'")
    return pa.schema(fixed + typed + META)


def _write(path: Path, table: pa.Table) -> Path:
    """``table`` as Parquet with page checksums, atomically, with its sha256 file."""
    buf = io.BytesIO()
    pq.write_table(table, buf, write_page_checksum=True)
    return atomic_write_bytes(path, buf.getvalue(), checksum=True)


def read_part(path: Path, columns: list[str] | None = None) -> pa.Table:
    """One part (its ``columns``, default all), verified: the sha256 of all its bytes, the page checksums of the
    pages read; ``io._checksums.Damaged`` if either fails or it cannot be parsed. ``ParquetFile`` on one thread,
    not ``read_table``: 0.4 against 1.1 ms per small part (docs/specs.md, "Resuming large sweeps")."""
    data = verified_bytes(path)
    try:
        return pq.ParquetFile(pa.BufferReader(data), page_checksum_verification=True).read(columns, use_threads=False)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise Damaged(path, f"{type(exc).__name__}: {exc}") from None


def write_part(
    out: str | Path, task: str, rows: dict[str, list[Any]], columns: Iterable[str | tuple[str, type]], meta=None
) -> Path:
    """Write one task's rows (column -> values) as ``part-<task>.parquet``, atomically (``meta``: its stamp)."""
    table = pa.Table.from_pydict(rows, schema=schema(columns).with_metadata(meta or {}))
    return _write(table_dir(out) / f"part-{task}.parquet", table)


def parts(out: str | Path) -> list[Path]:
    """The finished parts, by name (temporary files start with '.' and are never listed)."""
    folder = table_dir(out)
    return sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []


def _read_all(out: str | Path, move: bool, damaged: list[Damaged] | None = None) -> pd.DataFrame:
    """Every verified part's rows, with ``_part`` and ``_mtime``. A damaged part is left out, appended to
    ``damaged`` and, with ``move``, moved into ``OUT/damaged/`` (one line on stderr)."""
    frames, claims = [], provenance.folder_claims(out)
    for path in parts(out):
        try:
            provenance.check_file(path, claims)  # a regular file with its sha256 (before it is read)
            table = read_part(path)
            keys = set(zip(table.column("config_hash").to_pylist(), table.column("replicate").to_pylist()))
            provenance.check_part(path, table.schema.metadata, keys, claims)  # of this sweep, as its name says
            frame = table.to_pandas()
        except Damaged as damage:
            if damaged is not None:
                damaged.append(damage)
            if move:
                move_aside(damage, out)
            continue
        for name in (DEFAULTS.keys() & CONFIG_TYPES.keys()) - set(frame.columns):  # written before the field existed
            frame[name] = DEFAULTS[name]
        frame["_part"], frame["_mtime"] = path.name, path.stat().st_mtime_ns
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*KEY, "status", "_part"])


def _winners(df: pd.DataFrame) -> pd.DataFrame:
    """Per run key, the part whose record counts: a done part first (by name), else the newest error part.
    Vectorised (no Python call per run: a no-op resume of 10^5 runs is bookkeeping, not the sweep)."""
    flags = df[[*KEY, "_part", "_mtime"]].assign(done=df["status"].eq("done").to_numpy())
    per = flags.groupby([*KEY, "_part"], as_index=False).agg(done=("done", "any"), mtime=("_mtime", "max"))
    per["order"] = per["mtime"].where(~per["done"], 0) * -1
    per = per.sort_values([*KEY, "done", "order", "_part"], ascending=[True, True, False, True, True])
    return cast(pd.DataFrame, per.drop_duplicates(KEY)[[*KEY, "_part"]])


def resolve(df: pd.DataFrame) -> pd.DataFrame:
    """Keep, for each run, the rows of its winning part only."""
    if df.empty:
        return df
    keep = df.merge(_winners(df), on=[*KEY, "_part"], how="inner")
    return cast(pd.DataFrame, keep.sort_values([*KEY, "layer"], kind="stable").reset_index(drop=True))


def load(out: str | Path, move: bool = False) -> tuple[pd.DataFrame, list[Damaged]]:
    """The table (the union of the verified parts, one record per run: see ``resolve``) and the damaged parts
    left out of it (moved into ``OUT/damaged/`` with ``move``: only a writer holding the folder's lock)."""
    damaged: list[Damaged] = []
    df = resolve(_read_all(out, move, damaged))
    return df.drop(columns=["_part", "_mtime"], errors="ignore"), damaged


def read(out: str | Path) -> pd.DataFrame:
    """The table: the union of the verified parts, one record per run (see ``load``); one line on stderr per
    damaged part left out."""
    df, damaged = load(out)
    for damage in damaged:
        sys.stderr.write(f"warning: {damage}: left out; `sdeformer sweep run` moves it aside and reruns it\n")
    return df


def run_status(df: pd.DataFrame) -> dict[tuple[str, int], str]:
    """``(config_hash, replicate) -> 'done' | 'error'`` for every run of a table (see ``read``)."""
    if df.empty:
        return {}
    first = df.drop_duplicates(KEY)
    return {(h, int(r)): s for h, r, s in zip(first["config_hash"], first["replicate"], first["status"])}


def _index(out: str | Path, move: bool) -> tuple[dict[tuple[str, int], str], bool]:
    """(run key -> the status its part records, whether some run is recorded by two parts) from the verified
    parts' key and status columns only (the sha256 of every byte, provenance as ``_read_all``; a damaged part left
    out, moved aside with ``move``). Where no run has two records (no ``resolve`` to do), this is ``run_status``
    of the table, at a C loop per row instead of a table of every column: a no-op resume of 10^6 runs is
    bookkeeping, not the sweep (docs/specs.md, "Resuming large sweeps")."""
    status: dict[tuple[str, int], str] = {}
    rows, claims = 0, provenance.folder_claims(out)
    for path in parts(out):
        try:
            provenance.check_file(path, claims)
            table = read_part(path, [*KEY, "status"])
            keys = list(zip(table.column("config_hash").to_pylist(), table.column("replicate").to_pylist()))
            mine = dict(zip(keys, table.column("status").to_pylist()))  # one status per run in a part (task.execute)
            provenance.check_part(path, table.schema.metadata, mine.keys(), claims)
        except Damaged as damage:
            if move:
                move_aside(damage, out)
            continue
        rows += len(mine)
        status.update(mine)
    return status, len(status) < rows


def recorded(out: str | Path) -> dict[tuple[str, int], str]:
    """``run_status`` of the folder's table after ``compact`` (damaged parts moved aside): what ``sweep run`` skips.
    Only for a writer holding the folder's lock."""
    status, twice = _index(out, move=True)
    if twice:  # a retried error or a task finished twice: resolve on the whole table, rewrite, index again
        compact(out)
        status, _ = _index(out, move=True)
    return status


def compact(out: str | Path) -> int:
    """Rewrite parts without superseded rows (atomically; a part left empty is removed; damaged parts are moved
    aside). Returns rows dropped. Only for a writer holding the folder's lock. The parts are read whole only
    when the index finds a run recorded twice."""
    if not _index(out, move=True)[1]:
        return 0
    df = _read_all(out, move=True)
    if df.empty:
        return 0
    winners = _winners(df).rename(columns={"_part": "_winner"})
    df = df.merge(winners, on=KEY, how="left")
    stale = df[df["_part"] != df["_winner"]]
    for name in sorted(set(stale["_part"])):
        path = table_dir(out) / name
        table = read_part(path)
        mine = df[df["_part"] == name]
        mask = pa.array((mine["_part"] == mine["_winner"]).to_numpy())
        kept = table.filter(mask)
        if kept.num_rows == 0:
            path.unlink(missing_ok=True)
            checksum_path(path).unlink(missing_ok=True)
        else:
            _write(path, kept)
    return len(stale)
