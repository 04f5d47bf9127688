"""Random sources beside ``rng.Streams`` for the noise models (DESIGN: no global RNG).

- ``PerToken(source, n)``: the same draws seen as a batch ``(*batch, N)``, so that a field asked for one
  draw per batch element draws one independent copy per token (the idiosyncratic fields of BEYOND 1).
- ``BulkSource(generator, batch)``: one generator fills the whole batch at once. For Monte Carlo over many
  small runs (thousands of two-token chains), where one generator per element would cost a Python call per
  element and step; the numbers then depend on the batch shape (batched != unbatched, by design).
- ``Antithetic(source)``: batch ``(2, *batch)``, the second half the negated normals of the first; each half
  is an exact draw, so moment estimates stay unbiased and the odd part of the noise cancels in pair means.
"""

from __future__ import annotations

import torch

from ..contracts import RandomSource


class PerToken:
    """``randn(shape)`` -> ``(*batch, N, *shape)``: batch ``(*batch, N)`` over a source with batch ``batch``."""

    def __init__(self, source: RandomSource, n: int):
        self.source, self.n = source, int(n)
        self.batch = tuple(source.batch) + (self.n,)

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return self.source.randn((self.n, *shape), dtype)  # (*batch, N, *shape)


class BulkSource:
    """Standard normals ``(*batch, *shape)`` from one caller-owned generator in one call."""

    def __init__(self, generator: torch.Generator, batch: tuple[int, ...]):
        self.generator, self.batch = generator, tuple(batch)

    @classmethod
    def seeded(cls, seed: int, batch: tuple[int, ...], device: str | torch.device = "cpu") -> BulkSource:
        return cls(torch.Generator(device=device).manual_seed(int(seed)), batch)

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.randn(
            self.batch + tuple(shape), generator=self.generator, dtype=dtype, device=self.generator.device
        )


class Antithetic:
    """Batch ``(2, *batch)``: normals z for the first half, -z for the second."""

    def __init__(self, source: RandomSource):
        self.source = source
        self.batch = (2,) + tuple(source.batch)

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        z = self.source.randn(shape, dtype)  # (*batch, *shape)
        return torch.stack([z, -z])  # (2, *batch, *shape)
