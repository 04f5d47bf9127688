"""Shape arithmetic in plain Python for the hot path.

``torch.broadcast_shapes`` imports sympy on its first call (0.3-1 s of a run's start-up, measured on torch
2.13 CPU); the engine needs only the broadcast rule itself.
"""

from __future__ import annotations

from collections.abc import Sequence


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
