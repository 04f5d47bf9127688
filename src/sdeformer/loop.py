"""The shared time loop of the discrete model and the SDE solvers (THEORY sections 1, 3), the saved
``Trajectory`` and the check of the input tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from .errors import ConfigError
from .rng import Seeds, Streams
from .sphere import project


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
    if x.ndim < 2 or x.shape[-1] < 2 or x.shape[-2] < 1:
        raise ConfigError(name, tuple(x.shape), "must have shape (..., N, d) with N >= 1 and d >= 2")
    if not torch.isfinite(x).all():
        raise ConfigError(name, "NaN/inf", "must be finite")
    if (torch.linalg.vector_norm(x, dim=-1) == 0).any():
        raise ConfigError(name, "zero vector", "tokens must be non-zero (they are projected to the sphere)")


def integrate(step: Callable[[torch.Tensor, Streams], torch.Tensor], x0: torch.Tensor, dt: float, stop: int, *,
              seed: Seeds = 0, streams: Streams | None = None, save_every: int = 1,
              progress: Callable[[int], None] | None = None, start: int = 0, final: int | None = None) -> Trajectory:
    """The time loop of the discrete model and the SDE solvers (THEORY sections 1, 3): ``x = step(x, streams)``
    for k = start+1 .. stop from LN(x0) ``(..., N, d)``. Saves the start state, every k divisible by
    ``save_every`` and k = ``final`` (default ``stop``; the last step of the whole run); ``t`` = k dt.
    ``streams`` (default: ``Streams(seed)`` over the batch shape of x0) is passed to every step;
    ``progress(k)`` is called after each. Raises ConfigError for bad tokens or save_every."""
    check_tokens(x0)
    if not float(save_every) == int(save_every) or int(save_every) < 1:
        raise ConfigError("save_every", save_every, "must be a positive integer")
    final = stop if final is None else final
    streams = streams or Streams(seed, tuple(x0.shape[:-2]), x0.device)
    x = project(x0)
    saved, idx = [x], [start]
    for k in range(start + 1, stop + 1):
        x = step(x, streams)
        if k % save_every == 0 or k == final:
            saved.append(x)
            idx.append(k)
        if progress is not None:
            progress(k)
    steps = torch.tensor(idx)
    return Trajectory(torch.stack(saved), steps, steps.to(torch.float64) * dt)
