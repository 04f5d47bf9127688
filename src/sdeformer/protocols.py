"""The interfaces between the parts of a run (THEORY sections 1, 3), written as ``typing.Protocol``s.

- ``RandomSource``: where every random draw of a run comes from (``rng.Streams``; ``nn.CommonNoise`` draws
  a whole batch from one generator; a benchmark may hand in given normals). Batched: ``randn(shape)``
  returns ``(*batch, *shape)``.
- ``NoiseField``: the common noise of one layer or step, ``increment(y, dt, source)`` -> ``dW(y)``
  ``(..., N, d)``; what the discrete model calls (``MLPNoise``, every field below).
- ``LimitField``: a ``NoiseField`` that also gives its variance k(y, y) and the joint
  ``increment_and_variance`` the Euler-Maruyama step of the limit SDE needs (``GaussianField``,
  ``RandomFeatureField``, ``ReplayedNoise`` of either).
- ``ReplayableField``: a field whose draw is deterministic given standard normals ``z`` of shape
  ``normal_shape(y)``, ``apply(y, dt, z, source)``; ``replay.ReplayedNoise`` feeds it replayed normals.

The methods' arguments are positional-only here, so an implementation may name them as it likes.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class RandomSource(Protocol):
    """Standard normals for a batch of runs: ``randn(shape, dtype)`` -> ``(*batch, *shape)``."""

    batch: tuple[int, ...]

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32, /) -> torch.Tensor: ...


@runtime_checkable
class NoiseField(Protocol):
    """One fresh common-noise field per call, evaluated at every token: ``(..., N, d) -> (..., N, d)``."""

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource, /) -> torch.Tensor: ...


@runtime_checkable
class LimitField(NoiseField, Protocol):
    """A Brownian field of the limit SDE: increments plus the variance k(y, y), ``(..., N, 1)`` or a scalar."""

    def variance(self, y: torch.Tensor, /) -> torch.Tensor: ...

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource, /
    ) -> tuple[torch.Tensor, torch.Tensor]: ...


@runtime_checkable
class ReplayableField(Protocol):
    """A field drawn from given standard normals: ``apply(y, dt, z, source)`` with z ``(..., *normal_shape(y))``;
    ``source`` serves any other randomness of the field."""

    def normal_shape(self, y: torch.Tensor, /) -> tuple[int, ...]: ...

    def apply(self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource, /) -> torch.Tensor: ...
