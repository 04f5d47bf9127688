"""The contracts between the parts of a run (THEORY sections 1, 3; BEYOND section 0), in one place.

Every part of a model is an object with declared methods; code asks a part for a capability by its contract
(``isinstance(part, OnePoint)``, ``require(part, PairCovariance)``), never by its concrete class or by a flag.
The contracts are structural (``typing.Protocol``): a part needs no base class, only the methods.

- ``RandomSource``: where every random draw of a run comes from (``core._rng.Streams``); batched:
  ``randn(shape)`` returns ``(*batch, *shape)``.
- ``NoiseField``: the common noise of one layer or step, ``increment(y, dt, source)`` -> ``dW(y)``
  ``(..., N, d)``; what the discrete model needs.
- ``Variance``: ``variance(y)`` = tr(P_y C(y, y)) / (d - 1) ``(..., N, 1)`` or a scalar, the k(y, y) of the
  Ito correction ``-(d-1)/2 k(y, y) y``.
- ``LimitField``: a ``NoiseField`` with ``Variance`` and the joint ``increment_and_variance``, what the solvers
  of the limit SDE need.
- ``OnePoint``: ``one_point(y, dt, source)``, an independent copy of the field's increment at each token only
  (partial sharing, BEYOND section 1).
- ``PairCovariance``: ``pair_covariance(x)`` = C_ij(X) per unit time ``(..., N, N, d, d)`` (the one-step
  moment test of BEYOND section 0).
- ``Replayable``: ``normal_shape(y)`` and ``apply(y, dt, z, source)``, deterministic given the standard
  normals ``z``, so that ``noise._replay.ReplayedNoise`` can drive two runs with one Brownian path.
- ``AttentionDrift``: ``drift(x, source=None)`` ``(..., N, d) -> (..., N, d)``; a drift that draws random
  numbers (random-batch attention) draws them from ``source``.
- ``NormScheme``: ``layer(x, t, dt, attention, noise, source)``, one layer's normalizations around its two
  sub-steps (Post-LN, Pre-LN, ...: BEYOND section 6), and ``on_sphere``.
- ``Scheme``: ``step(x, source)``, one step of an SDE solver.
- ``Observable``: a function of token states ``(..., N, d)``, the runs' beta ``(...)`` and its spec entry, to
  ``(...)`` (the sweeps' columns).

``missing(cls, contract)`` lists the methods a class lacks; ``require`` raises a one-line ConfigError naming
the part and the method; the registries call it when a part is registered.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch

from .core._errors import ConfigError


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
class Variance(Protocol):
    """k(y, y) = tr(P_y C(y, y)) / (d - 1) at each token, ``(..., N, 1)`` or a scalar tensor."""

    def variance(self, y: torch.Tensor, /) -> torch.Tensor: ...


@runtime_checkable
class LimitField(NoiseField, Variance, Protocol):
    """A Brownian field of the limit SDE: increments, the variance k(y, y) and both from one evaluation."""

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource, /
    ) -> tuple[torch.Tensor, torch.Tensor]: ...


@runtime_checkable
class OnePoint(Protocol):
    """An independent copy G_i of the increment at each token i only, ``(..., N, d) -> (..., N, d)``."""

    def one_point(self, y: torch.Tensor, dt: float, source: RandomSource, /) -> torch.Tensor: ...


@runtime_checkable
class PairCovariance(Protocol):
    """C_ij(X) = E[xi_i xi_j^T] / dt, ``(..., N, d) -> (..., N, N, d, d)`` (BEYOND section 0)."""

    def pair_covariance(self, x: torch.Tensor, /) -> torch.Tensor: ...


@runtime_checkable
class Replayable(Protocol):
    """A field drawn from given standard normals: ``apply(y, dt, z, source)`` with z ``(..., *normal_shape(y))``;
    ``source`` serves any other randomness of the field."""

    def normal_shape(self, y: torch.Tensor, /) -> tuple[int, ...]: ...

    def apply(self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource, /) -> torch.Tensor: ...


@runtime_checkable
class AttentionDrift(Protocol):
    """An attention drift ``(..., N, d) -> (..., N, d)``; random drifts draw from ``source``."""

    def drift(self, x: torch.Tensor, source: RandomSource | None = None, /) -> torch.Tensor: ...


@runtime_checkable
class NormScheme(Protocol):
    """One layer's normalizations around its attention and noise sub-steps: ``layer(x, t, dt, attention,
    noise, source)`` ``(..., N, d) -> (..., N, d)`` (``attention`` / ``noise`` None when off); ``on_sphere``:
    whether the state stays on the sphere (a part without it is taken to)."""

    on_sphere: bool

    def layer(
        self,
        x: torch.Tensor,
        t: float,
        dt: float,
        attention: AttentionDrift | None,
        noise: NoiseField | None,
        source: RandomSource,
        /,
    ) -> torch.Tensor: ...


@runtime_checkable
class Scheme(Protocol):
    """A time-stepping scheme of the limit SDE: ``step(x, source)`` ``(..., N, d) -> (..., N, d)``."""

    def step(self, x: torch.Tensor, source: RandomSource, /) -> torch.Tensor: ...


@runtime_checkable
class Observable(Protocol):
    """One number per run: tokens ``(..., N, d)``, the runs' beta ``(...)`` and the spec entry (its parameters,
    e.g. ``threshold``) -> ``(...)``."""

    def __call__(self, x: torch.Tensor, beta: torch.Tensor, spec: Any, /) -> torch.Tensor: ...


# the capabilities a registry entry may claim, by name
CAPABILITIES: dict[str, type] = {
    "noise": NoiseField,
    "variance": Variance,
    "limit": LimitField,
    "one_point": OnePoint,
    "pair_covariance": PairCovariance,
    "replayable": Replayable,
    "attention": AttentionDrift,
    "scheme": Scheme,
    "observable": Observable,
    "norm": NormScheme,
}
_OWN = {"__init__", "__call__"}


def methods(contract: type) -> tuple[str, ...]:
    """The methods a contract declares (its own and its bases'), e.g. ``('increment',)`` for NoiseField."""
    names: set[str] = set()
    for klass in contract.__mro__:
        if klass in (Protocol, object) or not getattr(klass, "_is_protocol", False):
            continue
        names |= {n for n, v in vars(klass).items() if callable(v) and (not n.startswith("_") or n in _OWN)}
    return tuple(sorted(names - {"__init__"}))


def missing(part: object, contract: type) -> tuple[str, ...]:
    """The methods of ``contract`` that ``part`` (a class or an instance) does not define."""
    return tuple(n for n in methods(contract) if not callable(getattr(part, n, None)))


def require(part: object, contract: type, name: str | None = None) -> None:
    """Raise ConfigError unless ``part`` implements every method of ``contract`` (one line naming both)."""
    absent = missing(part, contract)
    if absent:
        label = name or getattr(part, "__name__", type(part).__name__)
        methods_text = ", ".join(n + "()" for n in absent)
        raise ConfigError("part", label, f"lacks {methods_text} required by contracts.{contract.__name__}")
