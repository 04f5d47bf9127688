"""Sweep specs: read and validate a YAML or TOML file describing a sweep over ``ModelConfig`` (THEORY section 1).

A spec names a base config, axes (any config field; lists or ranges; crossed, or zipped in groups), replicate
seeds, the observables to record (THEORY section 5) and the times to record them at::

    name: smoke
    base: {tokens: 8, dim: 4, width: 64, layers: 20}     # or a path to a config file, relative to the spec
    axes:                                               # crossed with each other and with every zipped group
      activation: [relu, tanh]
      beta: {linspace: [0.5, 4.0, 8]}                   # also {logspace: [a, b, n]}, {range: [a, b(, step)]}
    zipped:                                             # the fields of one group vary together
      - {su: [0.0, 0.1], sw: [0.0, 0.1]}
    seeds: 4                                            # or [3, 7, 11] or {start: 100, count: 8}
    observables: [energy, mean_cos, {name: clusters, threshold: 0.99}]
    times: final                                        # or all, [t1, t2, ...] (in units of t), {every: k} (layers)
    batch: 64                                           # most runs per task (one batched tensor program)

Files are safe-loaded; every bad entry raises a one-line ``ConfigError`` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from ..config import ModelConfig, load_config_file
from ..core.errors import ConfigError
from .observables import Observable, parse_observables
from .table import CONFIG_TYPES, schema

SPEC_KEYS = ("name", "base", "axes", "zipped", "seeds", "observables", "times", "batch")
RESERVED = {"seed": "use 'seeds:' for replicates", "save_every": "set by 'times:'"}
SHORTHANDS = {"bias_std": ("su", "sw")}  # one axis value sets several fields
FIELD_TYPES = CONFIG_TYPES
DEFAULT_BATCH = 64


@dataclass(frozen=True)
class Spec:
    """A validated sweep. ``groups``: crossed with each other; the fields of one group are zipped."""

    name: str
    base: dict[str, Any]
    groups: tuple[tuple[tuple[str, tuple[Any, ...]], ...], ...]
    seeds: tuple[int, ...]
    observables: tuple[Observable, ...]
    times: Any  # "final", "all", ("every", k) or a tuple of floats
    batch: int = DEFAULT_BATCH
    source: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The resolved spec as plain data (the base inlined); ``parse_spec(spec.to_dict())`` gives it back."""
        axes = [{name: list(values) for name, values in group} for group in self.groups]
        times: Any = self.times
        if isinstance(times, tuple):
            times = {"every": times[1]} if times[0] == "every" else list(times)
        return {
            "name": self.name,
            "base": dict(self.base),
            "zipped": axes,
            "seeds": list(self.seeds),
            "observables": [o.to_dict() for o in self.observables],
            "times": times,
            "batch": self.batch,
        }

    @property
    def record(self) -> dict[str, Any]:
        """What each row records: a folder keeps one record for all its runs."""
        d = self.to_dict()
        return {"observables": d["observables"], "times": d["times"]}


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file (.yaml, .yml or .toml). Raises ConfigError for any bad entry."""
    path = Path(path)
    try:
        data = load_config_file(path)
    except ConfigError as exc:
        raise ConfigError("spec", str(path), exc.allowed) from None
    return parse_spec(data, root=path.parent, default_name=path.stem)


def parse_spec(data: Mapping[str, Any], root: str | Path = ".", default_name: str = "sweep") -> Spec:
    """Validate a spec mapping (see the module docstring); paths in ``base`` are relative to ``root``."""
    if not isinstance(data, Mapping):
        raise ConfigError("spec", type(data).__name__, "must be a mapping")
    for key in data:
        if key not in SPEC_KEYS:
            raise ConfigError("spec key", key, f"unknown; allowed keys: {list(SPEC_KEYS)}")
    base = _base(data.get("base", {}), Path(root))
    groups = [((name, values),) for name, values in _mapping(data.get("axes", {}), "axes").items()]
    zipped = data.get("zipped", [])
    if not isinstance(zipped, list):
        raise ConfigError("zipped", zipped, "must be a list of mappings field -> values of equal length")
    for i, group in enumerate(zipped):
        groups.append(_zipped(_mapping(group, f"zipped[{i}]"), f"zipped[{i}]"))
    seen: set[str] = set()
    for group in groups:
        for name, _ in group:
            if name in seen:
                raise ConfigError("axes", name, "a field may appear in one axis only")
            seen.add(name)
    spec = Spec(
        name=_name(data.get("name", default_name)),
        base=base,
        groups=tuple(tuple((n, v if isinstance(v, tuple) else _axis(n, v, f"axes.{n}")) for n, v in g) for g in groups),
        seeds=_seeds(data.get("seeds", 1)),
        observables=parse_observables(data.get("observables", ["energy"])),
        times=_times(data.get("times", "final")),
        batch=_count("batch", data.get("batch", DEFAULT_BATCH)),
        source=dict(data),
    )
    ModelConfig.from_mapping(expand_fields(spec.base))  # the base alone must be a valid config
    schema(o.column for o in spec.observables)  # observable columns must not clash with table columns
    return spec


def expand_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """Apply shorthands (``bias_std`` -> su = sw)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        for target in SHORTHANDS.get(name, (name,)):
            out[target] = value
    return out


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value or any(c in value for c in "/\\\n"):
        raise ConfigError("name", value, "a non-empty string without slashes")
    return value


def _base(value: Any, root: Path) -> dict[str, Any]:
    if isinstance(value, str):
        value = load_config_file(root / value)
    data = _mapping(value, "base")
    for name, v in data.items():
        _check_field(name, "base")
        data[name] = _coerce(name, v, f"base.{name}")
    return data


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(where, value, "must be a mapping")
    return dict(value)


def _zipped(group: dict[str, Any], where: str) -> tuple:
    if not group:
        raise ConfigError(where, group, "a zipped group needs at least one field")
    axes = {name: _axis(name, v, f"{where}.{name}", distinct=False) for name, v in group.items()}
    lengths = {name: len(values) for name, values in axes.items()}
    if len(set(lengths.values())) != 1:
        raise ConfigError(where, lengths, "zipped fields need the same number of values")
    if len(set(zip(*axes.values()))) != len(next(iter(axes.values()))):
        raise ConfigError(where, group, "zipped value tuples must be distinct")
    return tuple(axes.items())


def _check_field(name: str, where: str) -> None:
    if name in RESERVED:
        raise ConfigError(f"{where}.{name}", name, RESERVED[name])
    if name not in FIELD_TYPES and name not in SHORTHANDS:
        allowed = sorted(set(FIELD_TYPES) - set(RESERVED) | set(SHORTHANDS))
        raise ConfigError(f"{where} field", name, f"unknown; allowed: {allowed}")


def _axis(name: str, value: Any, where: str, distinct: bool = True) -> tuple[Any, ...]:
    """An axis as a tuple of typed values: a list or a range mapping."""
    _check_field(name, where.split(".")[0])
    if isinstance(value, Mapping):
        value = _range(value, where)
    if not isinstance(value, list):
        raise ConfigError(where, value, "a list of values or {linspace|logspace|range: [...]}")
    if not value:
        raise ConfigError(where, value, "an axis needs at least one value")
    values = tuple(_coerce(name, v, where) for v in value)
    if distinct and len(set(values)) != len(values):
        raise ConfigError(where, list(value), "values must be distinct")
    return values


def _range(value: Mapping[str, Any], where: str) -> list[Any]:
    if len(value) != 1 or next(iter(value)) not in ("linspace", "logspace", "range"):
        raise ConfigError(
            where,
            dict(value),
            "a range is {linspace: [a, b, n]}, {logspace: [a, b, n]} or {range: [a, b]} / {range: [a, b, step]}",
        )
    kind, args = next(iter(value.items()))
    if not isinstance(args, list) or not all(_is_number(a) for a in args):
        raise ConfigError(f"{where}.{kind}", args, "a list of numbers")
    if kind == "range":
        if len(args) not in (2, 3) or not all(float(a) == int(a) for a in args) or (len(args) == 3 and args[2] == 0):
            raise ConfigError(f"{where}.range", args, "[start, stop] or [start, stop, step], integers, step != 0")
        return list(range(*(int(a) for a in args)))
    if len(args) != 3 or float(args[2]) != int(args[2]) or int(args[2]) < 1:
        raise ConfigError(f"{where}.{kind}", args, "[start, stop, count] with count a positive integer")
    a, b, n = float(args[0]), float(args[1]), int(args[2])
    if kind == "logspace" and (a <= 0 or b <= 0):
        raise ConfigError(f"{where}.logspace", args, "start and stop must be > 0")
    points = np.geomspace(a, b, n) if kind == "logspace" else np.linspace(a, b, n)
    return [round(float(v), 12) for v in points]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _coerce(name: str, value: Any, where: str) -> Any:
    """A value of the config field's type: integral floats become ints; NaN, inf and other types raise."""
    kind = FIELD_TYPES.get(SHORTHANDS.get(name, (name,))[0])
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(where, value, "must be true or false")
        return value
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(where, value, "must be a string")
        return value
    if not _is_number(value):
        raise ConfigError(where, value, "must be a finite number")
    if kind is int:
        if float(value) != int(value):
            raise ConfigError(where, value, "must be an integer")
        return int(value)
    return float(value)


def _seeds(value: Any) -> tuple[int, ...]:
    if isinstance(value, Mapping):
        if set(value) != {"start", "count"}:
            raise ConfigError("seeds", dict(value), "an integer count, a list of integers or {start, count}")
        start, count = value["start"], _count("seeds.count", value["count"])
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ConfigError("seeds.start", start, "a non-negative integer")
        return tuple(range(start, start + count))
    if isinstance(value, list):
        if not value or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value):
            raise ConfigError("seeds", value, "a non-empty list of non-negative integers")
        if len(set(value)) != len(value):
            raise ConfigError("seeds", value, "seeds must be distinct")
        return tuple(value)
    return tuple(range(_count("seeds", value)))


def _count(where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(where, value, "a positive integer")
    return value


def _times(value: Any) -> Any:
    if value in ("final", "all"):
        return value
    if isinstance(value, Mapping):
        if set(value) != {"every"}:
            raise ConfigError("times", dict(value), "final, all, a list of times t or {every: k} (layers)")
        return ("every", _count("times.every", value["every"]))
    if not isinstance(value, list) or not value:
        raise ConfigError("times", value, "final, all, a non-empty list of times t or {every: k} (layers)")
    if not all(_is_number(t) and t >= 0 for t in value):
        raise ConfigError("times", value, "times must be finite numbers >= 0")
    return tuple(sorted({float(t) for t in value}))


def field_names() -> list[str]:
    """The config fields, in declaration order (the table's config columns)."""
    return [f.name for f in fields(ModelConfig)]
