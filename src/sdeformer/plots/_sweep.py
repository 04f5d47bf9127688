"""Figures from a sweep table: a heat map over two config fields, or curves of an observable (THEORY section 5).

- Heat map: ``x`` and ``y`` are config fields (or ``t``), ``color`` an observable; each cell shows the mean of
  the observable over the runs in it, or with ``below`` the fraction of runs whose value is below that
  threshold (e.g. P(sync) = P(E_beta < 1e-3)).
- Curves: ``y`` is an observable; one curve per value of the config field ``color`` (optional), mean and
  standard error over the runs at each ``x``.

Only ``status == done`` rows are used; ``where`` fixes fields; rows are taken at time ``time`` (default: each
run's last recorded time) unless ``x`` or ``y`` is ``t`` (then ``time`` is refused: it would be ignored).
``bias_std`` names su = sw, as in a spec, where the table's runs have su == sw. Fields that still vary are
pooled. The title says the sweep, the time shown, the ``where`` filter, the number of runs and the pooled
fields; legends and ticks print values to 3 significant digits (more where needed to tell them apart, -0 as
0); the axis of the observable says what was averaged. Raises ConfigError for unknown columns, a NaN or
infinite ``below`` or ``time``, or an empty selection.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from ..core._errors import ConfigError
from ..sweeps._table import CONFIG_TYPES, KEY

AXIS_COLUMNS = (*CONFIG_TYPES, "t", "layer", "replicate")
NOT_POOLED = ("seed", "save_every", "config_hash", "layer", "t", "replicate")


def _coerce(df: pd.DataFrame, name: str, text: str) -> Any:
    kind = CONFIG_TYPES.get(name, float)
    try:
        if kind is bool:
            return text.lower() in ("1", "true", "yes")
        return kind(text)
    except ValueError:
        raise ConfigError(f"where {name}", text, f"must be a {kind.__name__}") from None


def select(df: pd.DataFrame, x: str, y: str | None, where: Mapping[str, str], time: float | None) -> pd.DataFrame:
    """The done rows matching ``where``, at one time per run unless an axis is ``t``."""
    if df.empty:
        raise ConfigError("table", "empty", "no rows recorded yet; run the sweep first")
    keep = df["status"] == "done"
    for name, text in where.items():
        if name not in df.columns or name not in (*AXIS_COLUMNS, "bias_std"):
            raise ConfigError("where", name, f"a config field, one of {sorted(CONFIG_TYPES)}")
        keep &= df[name] == _coerce(df, name, text)
    if "t" not in (x, y):
        if time is None:
            keep &= df["layer"] == df.groupby(KEY)["layer"].transform("max")
        else:
            keep &= np.isclose(df["t"], time, rtol=0, atol=1e-9)
    df = cast(pd.DataFrame, df.loc[keep])
    if df.empty:
        raise ConfigError("selection", dict(where, time=time), "matches no finished runs")
    return df


def pooled(df: pd.DataFrame, used: tuple[str, ...]) -> list[str]:
    """Config fields that still take several values in ``df`` besides ``used``."""
    return [
        c for c in CONFIG_TYPES if c not in used and c not in NOT_POOLED and int(cast(pd.Series, df[c]).nunique()) > 1
    ]


def value_labels(values: list[Any]) -> list[str]:
    """Short labels of distinct values: numbers to 3 significant digits, more where two would print alike
    (1.666666666667 -> 1.67), -0 as 0, integers and text as they are."""
    if not all(isinstance(v, (float, np.floating)) for v in values):
        return [str(v) for v in values]
    for digits in range(3, 18):
        labels = [f"{float(v) + 0.0:.{digits}g}" for v in values]  # + 0.0: -0.0 prints as 0
        labels = ["0" if label == "-0" else label for label in labels]
        if len(set(labels)) == len(set(values)):
            return labels
    return [repr(float(v)) for v in values]


def _ticks(setter: Any, values: list[Any], most: int = 12) -> None:
    """Category ticks, at most ``most`` labelled (every k-th)."""
    step = -(-len(values) // most)
    idx = list(range(0, len(values), step))
    labels = value_labels(values)
    setter(idx, [labels[i] for i in idx])


def _shown_time(df: pd.DataFrame, time: float | None, x: str, y: str) -> str:
    """The time of the plotted rows, for the title: the one asked for, or each run's last (its value or range)."""
    if "t" in (x, y):
        return ""
    if time is not None:
        return f"t = {value_labels([float(time)])[0]}"
    ts = df["t"].to_numpy(dtype=float)
    low, high = float(ts.min()), float(ts.max())
    return f"t = {value_labels([low])[0]}" if low == high else f"t = each run's last ({low:.3g} to {high:.3g})"


def _check(df: pd.DataFrame, name: str, kind: str, allowed: list[str]) -> None:
    if name not in allowed:
        raise ConfigError(kind, name, f"one of {allowed}")


def _bias_std(df: pd.DataFrame, names: Iterable[str]) -> pd.DataFrame:
    """``df`` with a ``bias_std`` column (= su) when a plot names it; ConfigError if its runs have su != sw."""
    if "bias_std" not in names or df.empty:
        return df
    if not bool((df["su"] == df["sw"]).all()):
        raise ConfigError("bias_std", "su != sw", "this table's runs have su != sw; plot su or sw instead")
    return df.assign(bias_std=df["su"])


def _check_numbers(x: str, y: str, time: float | None, below: float | None) -> None:
    for name, value in (("time", time), ("below", below)):
        if value is not None and not math.isfinite(value):
            raise ConfigError(name, value, "must be a finite number")
    if time is not None and "t" in (x, y):
        raise ConfigError("time", time, "picks one time per run; it cannot be used with --x t or --y t")


def plot(
    df: pd.DataFrame,
    path: str | Path,
    x: str,
    y: str,
    color: str | None = None,
    *,
    time: float | None = None,
    below: float | None = None,
    where: Mapping[str, str] | None = None,
    title: str = "",
) -> dict[str, Any]:
    """Draw the heat map or curves (see the module docstring) into ``path`` (PNG, atomic). Returns a summary."""
    from . import plt, save_figure

    where = dict(where or {})
    _check_numbers(x, y, time, below)
    if df.empty:
        raise ConfigError("table", "empty", "no rows recorded yet; run the sweep first")
    observables = [
        c for c in df.columns if c not in set(AXIS_COLUMNS) | {"config_hash", "status", "error", "wall_s", "task"}
    ]
    named = [x, y, *([color] if color else []), *where]
    shown = [c for c in (x, y, color) if c]
    if len(set(shown)) < len(shown):
        raise ConfigError("y" if y == x else "color", y if y == x else color, "--x, --y and --color must differ")
    df = _bias_std(df, named)
    axes = [*AXIS_COLUMNS, *(["bias_std"] if "bias_std" in named else [])]
    _check(df, x, "x", axes)
    heat = y in axes
    _check(df, y, "y", axes + observables)
    if heat:
        if color is None:
            raise ConfigError("color", None, f"a heat map needs an observable, one of {observables}")
        _check(df, color, "color", observables)
    elif color is not None:
        _check(df, color, "color (the curves' field)", axes)
    df = select(df, x, y, where, time)
    obs = color if heat else y
    values = cast(pd.Series, df[obs] < below if below is not None else df[obs])
    label = f"P({obs} < {below:g})" if below is not None else obs
    used = tuple(c for c in (x, y, color) if c)
    rest = pooled(df, used + (("su", "sw") if "bias_std" in used else ()))
    fig, ax = plt.subplots(figsize=(7, 5))
    if heat:
        means = cast(pd.Series, values.groupby([df[y], df[x]]).mean())
        grid = cast(pd.DataFrame, means.unstack(x))  # (Y, X)
        image = ax.imshow(grid.to_numpy(dtype=float), origin="lower", aspect="auto", cmap="viridis")
        _ticks(ax.set_xticks, list(grid.columns))
        _ticks(ax.set_yticks, list(grid.index))
        fig.colorbar(image, ax=ax, label=f"{label} (mean over the runs of a cell)" if below is None else label)
        cells = int(grid.notna().to_numpy().sum())
    else:
        hues = sorted(df[color].unique()) if color else [None]
        names = dict(zip(hues, value_labels(hues))) if color else {}
        for hue in hues:
            part = cast(pd.Series, values[df[color] == hue] if color else values)
            stats = cast(pd.DataFrame, part.astype(float).groupby(df.loc[part.index, x]).agg(["mean", "sem"]))
            ax.errorbar(
                stats.index,
                stats["mean"],
                yerr=stats["sem"].fillna(0),
                marker="o",
                capsize=3,
                label=f"{color} = {names[hue]}" if color else None,
            )
        if color:
            ax.legend(fontsize=8)
        ax.set_ylabel(f"{label}: mean ± s.e. over runs")
        cells = int(df.groupby(x).ngroups)
    ax.set_xlabel(x)
    if heat:
        ax.set_ylabel(y)
    runs = df[KEY].drop_duplicates().shape[0]
    chosen = [f"{name} = {value_labels([_coerce(df, name, text)])[0]}" for name, text in where.items()]
    context = "; ".join(c for c in (_shown_time(df, time, x, y), *chosen) if c)
    note = f"{runs} runs" + (f"; pooled over {', '.join(rest)}" if rest else "")
    ax.set_title("\n".join(c for c in (title, context, note) if c), fontsize=9)
    save_figure(fig, Path(path))
    return {"path": str(path), "kind": "heatmap" if heat else "curves", "cells": cells, "runs": runs, "pooled": rest}
