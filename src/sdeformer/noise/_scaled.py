"""A noise field with its covariance multiplied by a constant c (increments by sqrt(c)), to compare the noise
models of BEYOND.md at matched strength tr(P C_ii) / (d - 1)."""

from __future__ import annotations

import math

import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ._covariance import pair_covariance, tangential_variance


class Scaled:
    """``field`` with C -> c C. Raises ConfigError unless c > 0 is finite."""

    def __init__(self, field, factor: float):
        if not (math.isfinite(factor) and factor > 0):
            raise ConfigError("factor", factor, "must be finite and > 0")
        self.field, self.factor = field, float(factor)

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        return self.field.increment(y, dt * self.factor, source)

    def one_point(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        from ._partial import one_point

        return one_point(self.field, y, dt * self.factor, source)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        return tangential_variance(self.field, y) * self.factor

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.increment(y, dt, source), self.variance(y)

    def pair_covariance(self, x: torch.Tensor) -> torch.Tensor:
        return pair_covariance(self.field, x) * self.factor
