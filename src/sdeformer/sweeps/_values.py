"""The value rules of a sweep spec (THEORY section 1 fields): ranges, typed field values, seeds, counts, times.

Ranges and seed counts stay lazy (``Grid``, ``range``): a spec of 10^9 points or seeds is counted and refused
(``limits``) before any of its values exists in memory. Seeds follow the one seed rule of every command
(``core._validate.seed``: integers in [0, 2**63)), so that every replicate seed fits the table's int64 column.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, overload

import numpy as np

from ..core._errors import ConfigError
from ..core._validate import SEED_LIMIT, seed as check_seed
from ..params import SHORTHANDS as SHORTHANDS  # one axis value sets several fields (bias_std -> su = sw)
from ._table import CONFIG_TYPES

ROUND = 12  # decimals kept of a linspace/logspace value (stable config hashes)


class Grid(Sequence[float]):
    """``{linspace|logspace: [a, b, n]}`` as a lazy sequence: ``len`` costs nothing; the values (numpy's, rounded
    to ``ROUND`` decimals) are computed at the first access, once the spec's size has been checked."""

    def __init__(self, kind: str, a: float, b: float, n: int):
        self.kind, self.a, self.b, self.n = kind, a, b, n
        self._values: list[float] | None = None

    def __len__(self) -> int:
        return self.n  # OverflowError above sys.maxsize: ``limits.length`` counts those

    @overload
    def __getitem__(self, k: int) -> float: ...
    @overload
    def __getitem__(self, k: slice) -> Sequence[float]: ...
    def __getitem__(self, k: int | slice) -> float | Sequence[float]:
        if self._values is None:
            points = (
                np.geomspace(self.a, self.b, self.n) if self.kind == "logspace" else np.linspace(self.a, self.b, self.n)
            )
            self._values = [round(float(v), ROUND) for v in points]
        return self._values[k]


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def count(where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(where, value, "a positive integer")
    return value


def parse_range(value: Mapping[str, Any], where: str) -> Sequence[Any]:
    """``{linspace|logspace: [a, b, n]}`` or ``{range: [a, b(, step)]}`` as a lazy sequence."""
    if len(value) != 1 or next(iter(value)) not in ("linspace", "logspace", "range"):
        raise ConfigError(
            where,
            dict(value),
            "a range is {linspace: [a, b, n]}, {logspace: [a, b, n]} or {range: [a, b]} / {range: [a, b, step]}",
        )
    kind, args = next(iter(value.items()))
    if not isinstance(args, list) or not all(is_number(a) for a in args):
        raise ConfigError(f"{where}.{kind}", args, "a list of finite numbers")
    if kind == "range":
        if len(args) not in (2, 3) or not all(float(a) == int(a) for a in args) or (len(args) == 3 and args[2] == 0):
            raise ConfigError(f"{where}.range", args, "[start, stop] or [start, stop, step], integers, step != 0")
        return range(*(int(a) for a in args))
    if len(args) != 3 or float(args[2]) != int(args[2]) or int(args[2]) < 1:
        raise ConfigError(f"{where}.{kind}", args, "[start, stop, count] with count a positive integer")
    a, b, n = float(args[0]), float(args[1]), int(args[2])
    if kind == "logspace" and (a <= 0 or b <= 0):
        raise ConfigError(f"{where}.logspace", args, "start and stop must be > 0")
    return Grid(kind, a, b, n)


def coerce(name: str, value: Any, where: str) -> Any:
    """A value of the config field's type: integral floats become ints; NaN, inf and other types raise. A part's
    own parameter (``KIND.NAME``, recorded in a float column of the table) must be a number; ModelConfig checks
    its declared type and range."""
    if "." in name and name.partition(".")[2] not in CONFIG_TYPES:
        if not is_number(value):
            raise ConfigError(where, value, "a part parameter swept or set in a spec must be a finite number")
        return value
    kind = CONFIG_TYPES.get(SHORTHANDS.get(name, (name,))[0])
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(where, value, "must be true or false")
        return value
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(where, value, "must be a string")
        return value
    if not is_number(value):
        raise ConfigError(where, value, "must be a finite number")
    if kind is int:
        if float(value) != int(value):
            raise ConfigError(where, value, "must be an integer")
        return int(value)
    return float(value)


def seeds(value: Any) -> Sequence[int]:
    """Replicate seeds: a count (``range(count)``), ``{start, count}`` (a range) or a list of distinct seeds."""
    if isinstance(value, Mapping):
        if set(value) != {"start", "count"}:
            raise ConfigError("seeds", dict(value), "an integer count, a list of integers or {start, count}")
        start, n = check_seed("seeds.start", value["start"]), count("seeds.count", value["count"])
        if start + n > SEED_LIMIT:
            raise ConfigError("seeds", dict(value), f"start + count - 1 = {start + n - 1}: a seed must be < 2**63")
        return range(start, start + n)
    if isinstance(value, list):
        if not value:
            raise ConfigError("seeds", value, "a non-empty list of seeds")
        listed = tuple(check_seed("seeds", s) for s in value)
        if len(set(listed)) != len(listed):
            raise ConfigError("seeds", value, "seeds must be distinct")
        return listed
    n = count("seeds", value)
    if n > SEED_LIMIT:
        raise ConfigError("seeds", value, "a count of at most 2**63 seeds")
    return range(n)


def times(value: Any) -> Any:
    if value in ("final", "all"):
        return value
    if isinstance(value, Mapping):
        if set(value) != {"every"}:
            raise ConfigError("times", dict(value), "final, all, a list of times t or {every: k} (layers)")
        return ("every", count("times.every", value["every"]))
    if not isinstance(value, list) or not value:
        raise ConfigError("times", value, "final, all, a non-empty list of times t or {every: k} (layers)")
    if not all(is_number(t) and t >= 0 for t in value):
        raise ConfigError("times", value, "times must be finite numbers >= 0")
    return tuple(sorted({float(t) for t in value}))
