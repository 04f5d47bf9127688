"""Shape arithmetic in plain Python for the hot path, and ``run_param``: the one way a part receives a parameter
that may take one value per run of a batched run (``registry.Param(batched=True)``, docs/extending.md).

``torch.broadcast_shapes`` imports sympy on its first call (a large part of a short run's start-up:
docs/benchmarks.md, "Measurements behind the code's constants"); the engine needs only the broadcast rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ._errors import ConfigError


def broadcast_shape(*shapes: Sequence[int]) -> tuple[int, ...] | None:
    """The broadcast of ``shapes`` (numpy / torch rule: align on the right, sizes equal or 1), or None when they
    do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for sizes in zip(*((1,) * (rank - len(s)) + tuple(s) for s in shapes)):
        big = {n for n in sizes if n != 1}
        if len(big) > 1:
            return None
        out.append(big.pop() if big else 1)
    return tuple(out)


def run_param(
    value: Any, like: torch.Tensor, trailing: int, *, batch: Sequence[int] | None = None, name: str = "value"
) -> torch.Tensor:
    """A part's parameter in the shape its tensors need, in ``like``'s dtype and device: a number as a 0-d
    tensor; a ``(*batch,)`` tensor (one value per run of a batched run) as ``(*batch, 1, ..., 1)`` with
    ``trailing`` ones, so that it broadcasts against a ``(*batch, ...)`` tensor with ``trailing`` trailing dims
    (2 for tokens ``(*batch, N, d)``, 1 for a bias ``(*batch, m)``). With ``batch``, per-run values whose shape
    does not broadcast to it raise ConfigError naming ``name``."""
    t = torch.as_tensor(value, dtype=like.dtype, device=like.device)
    if not t.ndim:
        return t
    if batch is not None and broadcast_shape(t.shape, batch) != tuple(batch):
        raise ConfigError(
            name, tuple(t.shape), f"per-run values need a shape that broadcasts to the batch {tuple(batch)}"
        )
    return t.reshape(t.shape + (1,) * trailing)
