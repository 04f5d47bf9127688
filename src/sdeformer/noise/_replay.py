"""Replayable Brownian increments (THEORY section 3: coupled noise).

``BrownianPath`` replays the same standard normals on a fine grid and sums them onto coarser grids;
``ReplayedNoise`` feeds them to a field's ``apply``, so that two runs (coarse and fine depth, finite and
infinite width) are driven by the same Brownian path.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import torch

from ..contracts import RandomSource, Replayable
from ..core._errors import ConfigError
from ..core._rng import Seeds, Streams
from ..core._validate import positive_int


class BrownianPath:
    """Replayable standard normals on a fine grid of ``steps`` steps (THEORY section 3: coupled noise).

    ``normals(factor)`` yields ``steps // factor`` tensors ``(*batch, *shape)``: the fine normals summed over
    consecutive blocks of ``factor`` and divided by sqrt(factor), so each is standard normal and
    ``sqrt(dt_coarse) * normal`` is the coarse Brownian increment of the same path. Every call replays the
    path from its seed. Raises ConfigError for steps < 1 and unless ``factor`` divides ``steps``.
    """

    def __init__(
        self,
        shape: tuple[int, ...],
        steps: int,
        seed: Seeds = 0,
        batch: tuple[int, ...] = (),
        dtype: torch.dtype = torch.float32,
        device: str | torch.device = "cpu",
    ):
        self.shape, self.steps, self.seed, self.batch = tuple(shape), positive_int("steps", steps), seed, tuple(batch)
        self.dtype, self.device = dtype, device

    def normals(self, factor: int = 1) -> Iterator[torch.Tensor]:
        """The normals summed over blocks of ``factor`` fine steps: ``steps // factor`` of ``(*batch, *shape)``."""
        factor = positive_int("factor", factor)
        if self.steps % factor:
            raise ConfigError("factor", factor, f"must be a positive divisor of the fine steps {self.steps}")
        source = Streams(self.seed, self.batch, self.device)
        for _ in range(self.steps // factor):
            total = source.randn(self.shape, self.dtype)
            for _ in range(factor - 1):
                total = total + source.randn(self.shape, self.dtype)
            yield total / math.sqrt(factor)


class ReplayedNoise:
    """A NoiseField fed with given standard normals: ``increment = field.apply(y, dt, next(normals), source)``.

    ``field`` is a ``Replayable`` (``GaussianField``, ``RandomFeatureField``, ``GramMLPField``);
    ``source`` is passed on for any other randomness of the field (the hidden layer of a width-m MLP).
    Plugs into ``StochasticTransformer(noise=...)`` and, around a limit field (one with ``variance`` and
    ``apply_and_variance``), into the SDE solvers as a ``LimitField``.
    """

    def __init__(self, field: Replayable, normals: Iterable[torch.Tensor]):
        self.field, self._normals = field, iter(normals)

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        """The field at the tokens with the next replayed normals. ``(..., N, d) -> (..., N, d)``."""
        return self.field.apply(y, dt, next(self._normals).to(y), source)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        """The limit field's variance k(y, y), ``(..., N, 1)`` or a scalar."""
        return self.field.variance(y)  # type: ignore[attr-defined]  # limit fields only

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``increment`` and ``variance`` from the limit field's joint ``apply_and_variance``."""
        z = next(self._normals).to(y)  # (..., *normal_shape(y))
        return self.field.apply_and_variance(y, dt, z, source)  # type: ignore[attr-defined]  # limit fields only
