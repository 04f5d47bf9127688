"""The interfaces between the parts of a run (THEORY sections 1, 3), written as ``typing.Protocol``s.

- ``RandomSource``: where every random draw of a run comes from (``rng.Streams``; a test or benchmark may
  hand in given normals). Batched: ``randn(shape)`` returns ``(*batch, *shape)``.
- ``NoiseField``: the common noise of one layer or step, ``increment(y, dt, source)`` -> ``dW(y)``
  ``(..., N, d)``; what the discrete model calls.
- ``LimitField``: a ``NoiseField`` that also gives its variance k(y, y) and the joint
  ``increment_and_variance`` the Euler-Maruyama step of the limit SDE needs.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class RandomSource(Protocol):
    """Standard normals for a batch of runs: ``randn(shape, dtype)`` -> ``(*batch, *shape)``."""

    batch: tuple[int, ...]

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor: ...


@runtime_checkable
class NoiseField(Protocol):
    """One fresh common-noise field per call, evaluated at every token: ``(..., N, d) -> (..., N, d)``."""

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor: ...


@runtime_checkable
class LimitField(NoiseField, Protocol):
    """A Brownian field of the limit SDE: increments plus the variance k(y, y), ``(..., N, 1)`` or a scalar."""

    def variance(self, y: torch.Tensor) -> torch.Tensor: ...

    def increment_and_variance(self, y: torch.Tensor, dt: float,
                               source: RandomSource) -> tuple[torch.Tensor, torch.Tensor]: ...
