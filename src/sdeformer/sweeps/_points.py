"""Expand a spec into runs: points (configs without a seed) times replicate seeds (THEORY section 1).

A point is identified by its config hash (every config field except ``seed`` and ``save_every``). The run of
replicate seed r at a point uses the config seed ``run_seed(r, hash)``, derived by hashing (numpy SeedSequence,
as ``rng.derive_seeds``) from those two values only: never from the point's position, the batch it lands in,
the executor or the worker count, so a run's numbers do not depend on how the sweep is cut up.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np

from ..config import ModelConfig
from ..core._errors import ConfigError
from ..dynamics._loop import SaveAt
from ..io._hashing import config_hash
from ._spec import Spec, expand_fields

HASH_EXCLUDES = ("seed", "save_every")
TIME_TOLERANCE = 1e-12  # relative: a time up to T (1 + this) is T (as loop.SaveAt allows)


@dataclass(frozen=True)
class Run:
    """One simulation: a point's config with its derived seed. ``key`` = (config hash, replicate seed)."""

    config_hash: str
    replicate: int
    config: ModelConfig
    layers: tuple[int, ...]  # the layers whose states are recorded

    @property
    def key(self) -> tuple[str, int]:
        return (self.config_hash, self.replicate)


def point_hash(config: ModelConfig) -> str:
    """The config hash of a point: every field except the seed and the save interval."""
    d = config.to_dict()
    return config_hash({k: v for k, v in d.items() if k not in HASH_EXCLUDES})


def run_seed(replicate: int, hash_: str) -> int:
    """A 63-bit config seed from (replicate seed, config hash) only (numpy SeedSequence, like derive_seeds)."""
    words = [int(hash_[i : i + 8], 16) for i in range(0, len(hash_), 8)]
    state = np.random.SeedSequence([int(replicate), *words]).generate_state(1, dtype=np.uint64)
    return int(state[0]) >> 1


def record_layers(config: ModelConfig, times: Any) -> tuple[int, ...]:
    """Layer indices to record for ``times`` (see ``spec``). A list of times t in [0, T] records, for each t,
    the first layer k whose time k T / L reaches t: the peers' rule, ``loop.SaveAt(times=...)``'s own (so a
    multiple of dt is recorded at exactly its layer). Raises ConfigError naming ``times`` for a t past T."""
    L = config.layers
    if times == "final":
        return (L,)
    if times == "all":
        return tuple(range(L + 1))
    if isinstance(times, tuple) and times and times[0] == "every":
        return tuple(sorted(set(range(0, L + 1, times[1])) | {L}))
    late = [t for t in times if t > config.horizon * (1 + TIME_TOLERANCE)]
    if late:
        raise ConfigError("times", late[0], f"must be in [0, T = {config.horizon:g}]")
    return tuple(sorted(SaveAt(times=times).keep(0, L, L, config.horizon / L)))


def save_every(layers: tuple[int, ...], total: int) -> int:
    """The save interval that keeps every recorded layer (the final layer is always saved)."""
    nonzero = [k for k in layers if k not in (0, total)]
    return reduce(math.gcd, nonzero) if nonzero else total


def points(spec: Spec) -> list[dict[str, Any]]:
    """The field values of every point, crossed over groups and zipped within one, in spec order."""
    per_group = []
    for group in spec.groups:
        names = [name for name, _ in group]
        per_group.append([dict(zip(names, values)) for values in zip(*(v for _, v in group))])
    out = []
    for combo in itertools.product(*per_group):
        values = dict(spec.base)
        for part in combo:
            values.update(part)
        out.append(expand_fields(values))
    return out


def expand_points(spec: Spec) -> list[tuple[str, ModelConfig, tuple[int, ...]]]:
    """(config hash, config, recorded layers) of every point, in spec order, its config's seed not yet derived.
    Raises ConfigError for an invalid point."""
    out = []
    seen: set[str] = set()
    for values in points(spec):
        config = ModelConfig.from_mapping(values, strict=False)  # the spec checks what its parts read (spec)
        layers = record_layers(config, spec.times)
        config = config.replace(save_every=save_every(layers, config.layers))
        h = point_hash(config)
        if h in seen:
            raise ConfigError("axes", values, "two points give the same config (e.g. bias_std with su or sw)")
        seen.add(h)
        out.append((h, config, layers))
    return out


def make_run(h: str, replicate: int, config: ModelConfig, layers: tuple[int, ...]) -> Run:
    """The run of replicate seed ``replicate`` at the point ``(h, config, layers)`` (``expand_points``)."""
    return Run(h, replicate, config.with_seed(run_seed(replicate, h)), layers)


def expand(spec: Spec) -> list[Run]:
    """Every run of the spec (points x seeds), point-major. Raises ConfigError for an invalid point."""
    return [make_run(h, r, config, layers) for h, config, layers in expand_points(spec) for r in spec.seeds]
