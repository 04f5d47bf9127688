"""The shared time loop of the discrete model and the SDE solvers (THEORY sections 1, 3), the saved
``Trajectory`` and the check of the input tokens.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from .errors import ConfigError
from .protocols import RandomSource
from .rng import Seeds, Streams
from .sphere import project
from .validate import float_dtype, positive_int

Observer = Callable[[int, float, torch.Tensor], None]  # observer(k, t = k dt, x (..., N, d)) after each step


@dataclass(frozen=True)
class Trajectory:
    """Saved token states. ``x``: (S, ..., N, d); ``layers``: (S,) layer indices; ``t``: (S,) times l dt."""

    x: torch.Tensor
    layers: torch.Tensor
    t: torch.Tensor

    @property
    def final(self) -> torch.Tensor:
        """The last saved state, ``(..., N, d)``."""
        return self.x[-1]


def check_tokens(x: torch.Tensor, name: str = "x0") -> None:
    """Raise ConfigError unless ``x`` is a finite floating tensor ``(..., N, d)`` with N >= 1, d >= 2."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ConfigError(name, type(x).__name__, "must be a floating-point torch.Tensor of shape (..., N, d)")
    float_dtype(f"{name}.dtype", x.dtype)  # float16 refused
    if x.ndim < 2 or x.shape[-1] < 2 or x.shape[-2] < 1:
        raise ConfigError(name, tuple(x.shape), "must have shape (..., N, d) with N >= 1 and d >= 2")
    if not torch.isfinite(x).all():
        raise ConfigError(name, "NaN/inf", "must be finite")
    if (torch.linalg.vector_norm(x, dim=-1) == 0).any():
        raise ConfigError(name, "zero vector", "tokens must be non-zero (they are projected to the sphere)")


def _check_save_at(save_at: Sequence[int], start: int, stop: int) -> frozenset[int]:
    """The steps of ``save_at``, which must be sorted, unique integers in [start, stop]; else ConfigError."""
    allowed = f"sorted unique integer steps in [{start}, {stop}]"
    if isinstance(save_at, (str, bytes, torch.Tensor)) or not isinstance(save_at, Sequence):
        raise ConfigError("save_at", save_at, f"must be a list of {allowed}")
    steps = list(save_at)
    if any(isinstance(k, bool) or not isinstance(k, numbers.Integral) for k in steps):
        raise ConfigError("save_at", save_at, allowed)
    unsorted = any(b <= a for a, b in zip(steps, steps[1:], strict=False))
    if unsorted or (steps and not start <= steps[0] <= steps[-1] <= stop):
        raise ConfigError("save_at", save_at, allowed)
    return frozenset(int(k) for k in steps)


def integrate(
    step: Callable[[torch.Tensor, RandomSource], torch.Tensor],
    x0: torch.Tensor,
    dt: float,
    stop: int,
    *,
    seed: Seeds = 0,
    streams: RandomSource | None = None,
    save_every: int = 1,
    save_at: Sequence[int] | None = None,
    observer: Observer | None = None,
    progress: Callable[[int], None] | None = None,
    start: int = 0,
    final: int | None = None,
) -> Trajectory:
    """The time loop of the discrete model and the SDE solvers (THEORY sections 1, 3): ``x = step(x, streams)``
    for k = start+1 .. stop from LN(x0) ``(..., N, d)``; ``t`` = k dt.

    Saving: the start state always; then every k divisible by ``save_every`` and k = ``final`` (default
    ``stop``; the last step of the whole run), or, when ``save_at`` (sorted unique steps in [start, stop]) is
    given, exactly the steps it lists (``save_every`` and ``final`` are then ignored; ``save_at=[]`` keeps the
    start state only). Observing: ``observer(k, k dt, x)`` is called after each step with the new state
    ``(..., N, d)`` (statistics without storing states), then ``progress(k)``.
    ``streams`` (default: ``Streams(seed)`` over the batch shape of x0) is passed to every step.
    Raises ConfigError for bad tokens, save_every, save_at or a non-callable observer."""
    check_tokens(x0)
    every, final = positive_int("save_every", save_every), stop if final is None else final
    if save_at is None:
        keep = {k for k in range(start + 1, stop + 1) if k % every == 0 or k == final}
    else:
        keep = _check_save_at(save_at, start, stop)
    if observer is not None and not callable(observer):
        raise ConfigError("observer", type(observer).__name__, "must be callable as observer(k, t, x)")
    streams = Streams(seed, tuple(x0.shape[:-2]), x0.device) if streams is None else streams
    x = project(x0)
    saved, idx = [x], [start]
    for k in range(start + 1, stop + 1):
        x = step(x, streams)
        if k in keep:
            saved.append(x)
            idx.append(k)
        if observer is not None:
            observer(k, k * dt, x)
        if progress is not None:
            progress(k)
    steps = torch.tensor(idx)
    return Trajectory(torch.stack(saved), steps, steps.to(torch.float64) * dt)
