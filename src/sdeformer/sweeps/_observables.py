"""The observables a sweep records (THEORY section 5), as named columns over batched token states.

Each observable (an entry of ``registry.OBSERVABLES``: ``fn(x, beta, observable)``, its ``reads`` the spec
parameters it takes) maps tokens ``(..., N, d)`` (float64) and the runs' beta ``(...)`` to one number per run
``(...)``. A plugin registers its own with one call (``OBSERVABLES.register(name, fn, reads=..., doc=...)``).
The built-ins:

- ``energy``: E_beta(X) = 1/(2 N^2) sum_ij (e^beta - e^{beta <X_i, X_j>}); beta is each run's own unless given.
- ``mean_cos``, ``mean_abs_cos``, ``min_cos``: mean / mean absolute / smallest cosine over distinct pairs.
- ``all_within``: 1.0 when every pair has cosine >= ``threshold`` (default 0.999), else 0.0.
- ``clusters``: connected components of 'cosine > ``threshold``' (default 0.999).
- ``pairs_above``: the fraction of distinct pairs with cosine > ``threshold``, the peers' statistic: every run
  of a point has N (N - 1) / 2 pairs, so the mean over its replicates is the fraction pooled over the batch.
- ``mean_radius``: the mean token norm |x_i| (1 on the sphere; the radius of the Pre-, Mix-, Peri-LN residual
  stream, BEYOND section 6). The other observables read the directions x_i / |x_i|.

A spec entry is a name or ``{name: ..., threshold: ..., beta: ..., column: ...}``; ``column`` renames the
column so that one observable can be recorded with two thresholds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from .. import observables as dg
from .._plugin_checks import call_observable
from ..core._errors import ConfigError
from ..observables import CLUSTER_COS
from ..registry import OBSERVABLES


def _energy(x: torch.Tensor, beta: torch.Tensor, obs: SweepObservable) -> torch.Tensor:
    if obs.beta is not None:
        return dg.interaction_energy(x, obs.beta)
    exp_beta = torch.tensor([math.exp(b) for b in beta.reshape(-1).tolist()], dtype=x.dtype).reshape(beta.shape)
    return dg.energy_of_gram(dg.cosine_matrix(x), beta.to(x.dtype), exp_beta)  # (...)


def _mean_cos(x: torch.Tensor, b: torch.Tensor, o: SweepObservable) -> torch.Tensor:
    return dg.mean_cosine(x)


def _mean_abs_cos(x: torch.Tensor, b: torch.Tensor, o: SweepObservable) -> torch.Tensor:
    return dg.mean_abs_cosine(x)


def _min_cos(x: torch.Tensor, b: torch.Tensor, o: SweepObservable) -> torch.Tensor:
    return dg.pairwise_cosines(x).amin(-1)


def _all_within(x: torch.Tensor, b: torch.Tensor, o: SweepObservable) -> torch.Tensor:
    if o.threshold <= dg.DIAGONAL_PASSES:  # no pairs gathered; most runs decided from one row (dg.all_within)
        return dg.all_within(x, o.threshold).to(x.dtype)
    return (dg.pairwise_cosines(x).amin(-1) >= o.threshold).to(x.dtype)


def _clusters(x: torch.Tensor, b: torch.Tensor, o: SweepObservable) -> torch.Tensor:
    return dg.cluster_count(x, o.threshold).to(x.dtype)


def _pairs_above(x: torch.Tensor, b: torch.Tensor, o: SweepObservable) -> torch.Tensor:
    return (dg.pairwise_cosines(x) > o.threshold).to(x.dtype).mean(-1)


def _mean_radius(x: torch.Tensor, b: torch.Tensor, o: SweepObservable) -> torch.Tensor:
    return torch.linalg.vector_norm(x, dim=-1).mean(-1)


OBSERVABLES.register("energy", _energy, reads=("beta",), doc="E_beta(X), each run's beta unless given")
OBSERVABLES.register("mean_cos", _mean_cos, doc="mean cosine over distinct pairs")
OBSERVABLES.register("mean_abs_cos", _mean_abs_cos, doc="mean absolute cosine over distinct pairs")
OBSERVABLES.register("min_cos", _min_cos, doc="smallest cosine over distinct pairs")
OBSERVABLES.register("all_within", _all_within, reads=("threshold",), doc="1 when every pair has cos >= threshold")
OBSERVABLES.register("clusters", _clusters, reads=("threshold",), doc="connected components of cos > threshold")
OBSERVABLES.register(
    "pairs_above", _pairs_above, reads=("threshold",),
    doc="fraction of pairs with cos > threshold (mean over replicates: the peers' pooled fraction)",
)  # fmt: skip
OBSERVABLES.register("mean_radius", _mean_radius, doc="mean token norm, the radius of a Pre-LN stream (BEYOND 6)")
GRAM_BUDGET = 1 << 21  # cosine-matrix entries per chunk of saved times in ``evaluate`` (16 MB in float64)
DEFAULT_THRESHOLD = CLUSTER_COS  # observables.CLUSTER_COS, the one convention of the sweeps


@dataclass(frozen=True)
class SweepObservable:
    """One recorded column: ``name`` from ``registry.OBSERVABLES``, its parameters and the column name."""

    name: str
    column: str
    threshold: float = DEFAULT_THRESHOLD
    beta: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "column": self.column}
        params = OBSERVABLES[self.name].reads
        if "threshold" in params:
            d["threshold"] = self.threshold
        if "beta" in params and self.beta is not None:
            d["beta"] = self.beta
        return d

    def __call__(self, x: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
        """Values ``(...)`` for tokens ``x`` ``(..., G, N, d)`` and per-run beta ``(G,)`` (a plugin's checked)."""
        fn = OBSERVABLES[self.name].part()
        return call_observable(fn, x, beta, self, self.name)  # a plugin's: time-limited and checked


def parse_observables(value: Any) -> tuple[SweepObservable, ...]:
    """Validate the spec's ``observables`` list. Raises ConfigError naming the bad entry."""
    if not isinstance(value, list) or not value:
        raise ConfigError("observables", value, f"a non-empty list of names from {OBSERVABLES.names()}")
    out = [_one(v, f"observables[{i}]") for i, v in enumerate(value)]
    columns = [o.column for o in out]
    if len(set(columns)) != len(columns):
        raise ConfigError("observables", columns, "column names must be distinct (rename one with 'column:')")
    return tuple(out)


def _one(entry: Any, where: str) -> SweepObservable:
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, Mapping) or "name" not in entry:
        raise ConfigError(where, entry, "a name or a mapping with 'name'")
    name = entry["name"]
    if name not in OBSERVABLES:
        raise ConfigError(f"{where}.name", name, f"one of {OBSERVABLES.names()}")
    params = OBSERVABLES[name].reads
    for key in entry:
        if key not in ("name", "column", *params):
            raise ConfigError(f"{where}.{key}", entry[key], f"unknown for {name}; allowed: {['column', *params]}")
    column = entry.get("column", name)
    if not isinstance(column, str) or not column.isidentifier():
        raise ConfigError(f"{where}.column", column, "a column name (letters, digits, underscores)")
    threshold = _number(entry.get("threshold", DEFAULT_THRESHOLD), f"{where}.threshold", -1.0, 1.0)
    if name == "clusters" and threshold == 1.0:  # cos > 1 never holds: observables.cluster_count refuses it
        raise ConfigError(f"{where}.threshold", threshold, "a cosine threshold in [-1, 1) for clusters")
    beta = entry.get("beta")
    return SweepObservable(name, column, threshold, None if beta is None else _number(beta, f"{where}.beta", 0.0, None))


def _number(value: Any, where: str, low: float, high: float | None) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    if not ok or value < low or (high is not None and value > high) or (high is None and value in (low, float("inf"))):
        allowed = f"a number in [{low}, {high}]" if high is not None else f"a finite number > {low}"
        raise ConfigError(where, value, allowed)
    return float(value)


def evaluate(observables: tuple[SweepObservable, ...], x: torch.Tensor, beta: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every observable on tokens ``(S, G, N, d)`` (S saved times, G runs) with beta ``(G,)``: column -> ``(S, G)``.
    The saved times go in chunks of at most ``GRAM_BUDGET`` Gram entries, and the observables of one chunk share
    one cosine matrix (``observables.shared_cosines``)."""
    beta = beta.to(torch.float64)
    g, n = x.shape[1], x.shape[2]
    step = max(1, GRAM_BUDGET // max(1, g * n * n))
    parts: dict[str, list[torch.Tensor]] = {o.column: [] for o in observables}
    for s0 in range(0, max(1, x.shape[0]), step):  # one (empty) chunk when nothing was saved
        chunk = x[s0 : s0 + step].to(torch.float64)  # (s, G, N, d)
        with dg.shared_cosines(chunk):
            for o in observables:
                parts[o.column].append(o(chunk, beta).to(torch.float64))
    return {column: torch.cat(values) for column, values in parts.items()}
