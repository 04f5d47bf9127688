"""The parameters a registered part declares for itself (``registry.Entry.params``; docs/extending.md)."""

from __future__ import annotations

from dataclasses import dataclass
from math import inf
from typing import Any

from .core.errors import ConfigError


@dataclass(frozen=True)
class Param:
    """A parameter a part declares for itself (one that is not a field of ``ModelConfig``), addressed in configs,
    specs and sweep axes as ``KIND.NAME`` (``noise.gain``): its type (float, int, str or bool), default, allowed
    closed range [low, high] (numbers), whether one batched run may take one value per run (``batched``: the part
    then receives a ``(G,)`` tensor) and a one-line doc."""

    name: str
    kind: type = float
    default: Any = None
    low: float | None = None
    high: float | None = None
    batched: bool = False
    doc: str = ""

    def check(self, key: str, value: Any) -> Any:
        """``value`` of this parameter's type and range (integral floats taken as ints); ConfigError naming
        ``key`` otherwise."""
        if self.kind in (str, bool):
            if not isinstance(value, self.kind):
                raise ConfigError(key, value, f"must be a {self.kind.__name__}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) == inf:
            raise ConfigError(key, value, "must be a finite number")
        if self.kind is int and float(value) != int(value):
            raise ConfigError(key, value, "must be an integer")
        value = self.kind(value)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise ConfigError(key, value, f"must lie in [{self.low}, {self.high}]")
        return value
