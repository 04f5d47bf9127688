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
    batch: 64                                           # most runs per task (one batched tensor program), or auto
    x0: starts.npy                                      # initial tokens (N, d), or an axis over B starts (B, N, d)
    device: cpu                                         # or cuda, cuda:K: where the runs are simulated

A sweep's runs draw their noise from ``rng: splitmix`` (``core._splitmix``: the whole batch of a task in
vectorised integer ops, 7x faster than one generator per run for many small runs, docs/benchmarks.md) unless
the base or an axis names another source; ``rng: generator`` gives the numbers ``simulate`` gives by default.

``batch: auto`` sizes each task from a memory budget (``task.batch_size``: ``AUTO_TASK_BYTES`` per task, from
``simulate.run_bytes`` per run); batching changes no run's numbers. ``device: cuda`` simulates on the
GPU (the observables are then computed on the CPU); a device the machine lacks is refused when the sweep runs.

``times: [t1, t2, ...]`` takes any times in [0, T] and records each at the first layer k whose time k T / L
reaches it (the peers' rule, ``loop.SaveAt(times=...)``): with dt = 0.1, t = 0.33 is recorded at layer 4
(t = 0.4), a multiple of dt at exactly its layer; the table's ``t`` is the recorded layer's time k T / L.

Files are safe-loaded (numbers as YAML 1.2 reads them: ``1e-2`` is a number); every bad entry raises a one-line
``ConfigError`` naming it. The spec's size (points x seeds) is counted from the axes before any value is
expanded (``limits``), and refused above ``max_runs``; the value rules are in ``values``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import NOISE_OFF, ModelConfig, load_config_file, token_starts
from ..core._errors import ConfigError
from ..params import ALIASES, FIELDS, IN_NAME, expand_shorthands
from ..registry import ATTENTIONS, NOISES, NORMS
from . import _limits as limits
from ._observables import SweepObservable, parse_observables
from ._table import CONFIG_TYPES, schema
from ._values import SHORTHANDS, coerce, count, parse_range, seeds, times

SWEEP_RNG = "splitmix"  # a sweep's random source unless its base or an axis names one (module docstring)
SPEC_KEYS = ("name", "base", "axes", "zipped", "seeds", "observables", "times", "batch", "x0", "device")
RESERVED = {"seed": "use 'seeds:' for replicates", "save_every": "set by 'times:'"}
FIELD_TYPES = CONFIG_TYPES
DEFAULT_BATCH = 64
PARTS = {"noise": NOISES, "attention": ATTENTIONS, "norm": NORMS}


@dataclass(frozen=True)
class Spec:
    """A validated sweep. ``groups``: crossed with each other; the fields of one group are zipped."""

    name: str
    base: dict[str, Any]
    groups: tuple[tuple[tuple[str, tuple[Any, ...]], ...], ...]
    seeds: Sequence[int]  # a range ({start, count} or a count) or a tuple
    observables: tuple[SweepObservable, ...]
    times: Any  # "final", "all", ("every", k) or a tuple of floats
    batch: int | str = DEFAULT_BATCH  # or "auto": from a memory budget per task (``task.batch_size``)
    device: str = "cpu"  # where the runs are simulated (cpu, cuda, cuda:K); the observables run on the CPU
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
            "seeds": _seeds_dict(self.seeds),
            "observables": [o.to_dict() for o in self.observables],
            "times": times,
            "batch": self.batch,
            **({"device": self.device} if self.device != "cpu" else {}),  # cpu: the claims of older folders
        }

    @property
    def record(self) -> dict[str, Any]:
        """What each row records: a folder keeps one record for all its runs."""
        d = self.to_dict()
        return {"observables": d["observables"], "times": d["times"]}


def _seeds_dict(value: Sequence[int]) -> Any:
    """Seeds as the spec writes them: ``{start, count}`` for a range (never expanded), else the list."""
    if isinstance(value, range) and value.step == 1:
        return {"start": value.start, "count": len(value)}
    return list(value)


def load_spec(path: str | Path, max_runs: int | None = limits.MAX_RUNS) -> Spec:
    """Read and validate a spec file (.yaml, .yml or .toml). Raises ConfigError for any bad entry, naming the
    file and the entry (a key given twice, a syntax error)."""
    path = Path(path)
    try:
        data = load_config_file(path)
    except ConfigError as exc:
        where = "" if exc.parameter == "config" else f"{exc.parameter} {exc.value!r}: "
        raise ConfigError("spec", str(path), where + exc.allowed) from None
    return parse_spec(data, root=path.parent, default_name=path.stem, max_runs=max_runs)


def parse_spec(
    data: Mapping[str, Any],
    root: str | Path = ".",
    default_name: str = "sweep",
    max_runs: int | None = limits.MAX_RUNS,
) -> Spec:
    """Validate a spec mapping (see the module docstring); paths in ``base`` are relative to ``root``. A spec
    of more than ``max_runs`` runs (None: any number) is refused before its axes are expanded."""
    if not isinstance(data, Mapping):
        raise ConfigError("spec", type(data).__name__, "must be a mapping")
    if not data:
        raise ConfigError("spec", {}, "is empty; give at least base:, axes: or seeds: (see examples/sweeps/)")
    for key in data:
        if key not in SPEC_KEYS:
            raise ConfigError("spec key", key, f"unknown; allowed keys: {list(SPEC_KEYS)}")
    base = _base(data.get("base", {}), Path(root))
    axes = _mapping(data.get("axes", {}), "axes")
    lazy = [("axes", ((name, _values(name, v, f"axes.{name}")),)) for name, v in axes.items()]
    zipped = data.get("zipped", [])
    if not isinstance(zipped, list):
        raise ConfigError("zipped", zipped, "must be a list of mappings field -> values of equal length")
    lazy += [(f"zipped[{i}]", _zipped(_mapping(g, f"zipped[{i}]"), f"zipped[{i}]")) for i, g in enumerate(zipped)]
    if "x0" in data:  # a token file, relative to the spec: the config field x0, one value per start it holds
        lazy.append(("x0", (("x0", token_starts(Path(root) / str(data["x0"]))),)))
    names = [name for _, group in lazy for name, _ in group]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError("axes", name, "a field may appear in one axis only")
    replicates = seeds(data.get("seeds", 1))
    limits.check_count(limits.count_runs([g for _, g in lazy], replicates), max_runs)  # before any value exists
    groups = tuple(_typed(group, where) for where, group in lazy)
    spec = Spec(
        name=_name(data.get("name", default_name)),
        base=base,
        groups=groups,
        seeds=replicates,
        observables=parse_observables(data.get("observables", ["energy"])),
        times=times(data.get("times", "final")),
        batch="auto" if data.get("batch") == "auto" else count("batch", data.get("batch", DEFAULT_BATCH)),
        device=_device(data.get("device", "cpu")),
        source=dict(data),
    )
    ModelConfig.from_mapping(expand_fields(spec.base), strict=False)  # the base alone must be a valid config
    _check_read(expand_fields(spec.base), {n: v for g in groups for n, v in expand_fields(dict(g)).items()})
    schema(o.column for o in spec.observables)  # observable columns must not clash with table columns
    return spec


def expand_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """Apply shorthands (``bias_std`` -> su = sw: ``params.expand_shorthands``)."""
    return expand_shorthands(dict(values))


def _check_read(base: dict[str, Any], axes: dict[str, Any]) -> None:
    """Every part parameter the spec sets away from its default (``params.ALIASES``, by either name) is read by a
    part some point chooses; else a one-line warning naming it and the parts (``config.refuse_unread`` refuses one
    config's; a base may serve several parts, e.g. ``width`` for the MLP points of a noise axis). A warning, not a
    refusal: the value is part of its runs' keys, so a spec written before this check keeps resuming its folder."""
    given = {ALIASES.get(k, k): v for k, v in {**base, **{n: tuple(v) for n, v in axes.items()}}.items()}
    for key, flat in ALIASES.items():
        kind, _, name = key.partition(".")
        values = given.get(flat, FIELDS[flat].default)
        values = values if isinstance(values, tuple) else (values,)
        if flat == IN_NAME or all(v == FIELDS[flat].default for v in values):
            continue
        chosen = given.get(kind, FIELDS[kind].default)
        parts = {str(v).partition(":")[0] for v in (chosen if isinstance(chosen, tuple) else (chosen,))}
        entries = [PARTS[kind]["mlp" if p == NOISE_OFF else p] for p in parts]
        if all(e.param(name) is None and flat not in e.reads for e in entries):
            sys.stderr.write(
                f"warning: {flat}={values[0]!r}: not read by {kind} {' or '.join(map(repr, sorted(parts)))} in this"
                " spec (kept: it is part of its runs' keys)\n"
            )


def _coerce(name: str, value: Any, where: str) -> Any:
    """A spec value checked and typed by its field's declaration (``params.FIELDS``: the check the config makes;
    ``noise.width`` and ``bias_std`` under their fields, ``width`` and ``su``); a part's own parameter as given
    when ``str`` or ``bool`` (``ModelConfig`` checks its declared type), else as a number (``values.coerce``)."""
    field = SHORTHANDS.get(ALIASES.get(name, name), (ALIASES.get(name, name),))[0]
    if field in FIELDS and not (field == IN_NAME and "." in name):
        return FIELDS[field].check(where, value)
    return value if isinstance(value, (str, bool)) else coerce(name, value, where)


def _device(value: Any) -> str:
    """A device name: cpu, cuda or cuda:K (whether it exists is checked when the sweep runs)."""
    if not (isinstance(value, str) and re.fullmatch(r"cpu|cuda(:\d+)?", value)):
        raise ConfigError("device", value, "cpu, cuda or cuda:K")
    return value


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value or any(c in value for c in "/\\\n"):
        raise ConfigError("name", value, "a non-empty string without slashes")
    return value


def _base(value: Any, root: Path) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = load_config_file(root / value)
        except ConfigError as exc:
            raise ConfigError("base", value, f"{exc.parameter} {exc.value!r}: {exc.allowed}") from None
    data = _mapping(value, "base")
    for name, v in data.items():
        _check_field(name, "base")
        data[name] = _coerce(name, v, f"base.{name}")
    return {"rng": SWEEP_RNG, **data}


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(where, value, "must be a mapping")
    return dict(value)


def _zipped(group: dict[str, Any], where: str) -> tuple:
    """A zipped group's fields with their (lazy) values, of equal lengths."""
    if not group:
        raise ConfigError(where, group, "a zipped group needs at least one field")
    axes = {name: _values(name, v, f"{where}.{name}") for name, v in group.items()}
    lengths = {name: limits.length(values) for name, values in axes.items()}
    if len(set(lengths.values())) != 1:
        raise ConfigError(where, lengths, "zipped fields need the same number of values")
    return tuple(axes.items())


def _typed(group: tuple, where: str) -> tuple:
    """A group's values typed (``values.coerce``) once its size is known to be allowed; the values of a lone
    axis, and the value tuples of a zipped group, must be distinct."""
    typed = tuple((name, tuple(_coerce(name, v, f"{where}.{name}") for v in values)) for name, values in group)
    if len(group) == 1 and len(set(typed[0][1])) != len(typed[0][1]):
        raise ConfigError(f"{where}.{typed[0][0]}", list(typed[0][1]), "values must be distinct")
    if len(group) > 1 and len(set(zip(*(v for _, v in typed)))) != len(typed[0][1]):
        raise ConfigError(where, {n: list(v) for n, v in typed}, "zipped value tuples must be distinct")
    return typed


def _check_field(name: str, where: str) -> None:
    if "." in name:  # KIND.NAME: a part's own parameter (or an alias of a field), checked by ModelConfig
        return
    if name in RESERVED:
        raise ConfigError(f"{where}.{name}", name, RESERVED[name])
    if name not in FIELD_TYPES and name not in SHORTHANDS:
        allowed = sorted(set(FIELD_TYPES) - set(RESERVED) | set(SHORTHANDS))
        raise ConfigError(f"{where} field", name, f"unknown; allowed: {allowed}")


def _values(name: str, value: Any, where: str) -> Sequence[Any]:
    """An axis's values, not yet typed: a list, or a range mapping as a lazy sequence (``values.parse_range``)."""
    _check_field(name, where.split(".")[0])
    if isinstance(value, Mapping):
        value = parse_range(value, where)
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigError(where, value, "a list of values or {linspace|logspace|range: [...]}")
    if not limits.length(value):
        raise ConfigError(where, list(value), "an axis needs at least one value")
    return value


def field_names() -> list[str]:
    """The config fields, in declaration order (the table's config columns)."""
    return list(CONFIG_TYPES)
