"""Replayable Brownian increments (THEORY section 3: coupled noise).

``BrownianPath`` replays the same standard normals on a fine grid and sums them onto coarser grids;
``ReplayedNoise`` feeds them to a field's ``apply``, so that two runs (coarse and fine depth, finite and
infinite width) are driven by the same Brownian path.
"""

from __future__ import annotations

import math

import torch

from .errors import ConfigError
from .rng import Streams


class BrownianPath:
    """Replayable standard normals on a fine grid of ``steps`` steps (THEORY section 3: coupled noise).

    ``normals(factor)`` yields ``steps // factor`` tensors ``(*batch, *shape)``: the fine normals summed over
    consecutive blocks of ``factor`` and divided by sqrt(factor), so each is standard normal and
    ``sqrt(dt_coarse) * normal`` is the coarse Brownian increment of the same path. Every call replays the
    path from its seed. Raises ConfigError unless ``factor`` divides ``steps``.
    """

    def __init__(self, shape: tuple[int, ...], steps: int, seed=0, batch: tuple[int, ...] = (),
                 dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu"):
        self.shape, self.steps, self.seed, self.batch = tuple(shape), int(steps), seed, tuple(batch)
        self.dtype, self.device = dtype, device

    def normals(self, factor: int = 1):
        if int(factor) < 1 or self.steps % int(factor):
            raise ConfigError("factor", factor, f"must be a positive divisor of the fine steps {self.steps}")
        factor = int(factor)
        streams = Streams(self.seed, self.batch, self.device)
        for _ in range(self.steps // factor):
            total = streams.randn(self.shape, self.dtype)
            for _ in range(factor - 1):
                total = total + streams.randn(self.shape, self.dtype)
            yield total / math.sqrt(factor)


class ReplayedNoise:
    """A NoiseField fed with given standard normals: ``increment = field.apply(y, dt, next(normals), streams)``.

    ``streams`` is passed on for any other randomness of the field (the hidden layer of a width-m MLP).
    Plugs into ``StochasticTransformer(mlp=...)`` and the SDE solvers alike.
    """

    def __init__(self, field, normals):
        self.field, self._normals = field, iter(normals)

    def increment(self, y: torch.Tensor, dt: float, streams: Streams) -> torch.Tensor:
        return self.field.apply(y, dt, next(self._normals).to(y), streams)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        return self.field.variance(y)

    def increment_and_variance(self, y: torch.Tensor, dt: float, streams: Streams) -> tuple[torch.Tensor, torch.Tensor]:
        """Both at once where the field can share work (``apply_and_variance``), else one after the other."""
        z = next(self._normals).to(y)
        joint = getattr(self.field, "apply_and_variance", None)
        if joint is not None:
            return joint(y, dt, z, streams)
        return self.field.apply(y, dt, z, streams), self.field.variance(y)
