"""Backpropagation through a deep run in bounded memory: segments of steps recomputed in the backward pass with the
same draws replayed (``TokenDynamics.run(..., checkpoint=K)``; docs/field.md, "Training through the model").

Without it, the backward pass of an L-step run keeps every step's activations: memory grows like L. With
segments of K steps, the forward pass keeps only the state at each segment's start (L / K states) and the random
source's state there; the backward pass recomputes one segment at a time (K steps of activations), drawing the
same normals again from the restored source, so the recomputed segment is the forward one bit for bit and the
gradients equal those of the plain run. With K = ceil(sqrt(L)) (``checkpoint=True``) the peak grows like
sqrt(L): 4x from L = 64 to L = 1,024 (benchmarks/checkpoint_memory.py measures it).

The segments are torch's re-entrant checkpoints: the forward pass runs without a graph (the graph's own nodes,
not only its tensors, would otherwise grow like L: 40 kB a layer at N = 32, d = 16) and the backward pass runs
``backward`` on each recomputed segment. Hence two rules of torch's: gradients arrive by ``loss.backward()`` into
the ``.grad`` of leaf tensors (``torch.autograd.grad`` sees no path from the loss to a parameter the model holds:
torch's "appears to not have been used in the graph"), and a parameter the model
holds must be a leaf or be formed inside the step (a tensor computed from a leaf before the run would be
backpropagated once per segment: torch refuses the second time).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint as torch_checkpoint

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ..core._validate import positive_int

State = Any  # a tensor or a tuple of tensors


def segment_length(checkpoint: int | bool, steps: int) -> int:
    """K: the steps of one recomputed segment (True: ceil(sqrt(steps))); ConfigError naming ``checkpoint``."""
    if checkpoint is True:
        return max(1, math.ceil(math.sqrt(steps)))
    if isinstance(checkpoint, bool):
        raise ConfigError("checkpoint", checkpoint, "True, None or a positive number of steps per segment")
    return positive_int("checkpoint", checkpoint)


def _flat(state: State) -> tuple[torch.Tensor, ...]:
    return state if isinstance(state, tuple) else (state,)


def _source_state(source: RandomSource) -> Any:
    if not (hasattr(source, "get_state") and hasattr(source, "set_state")):
        raise ConfigError("checkpoint", type(source).__name__, "needs a random source with get_state/set_state")
    return source.get_state()  # pyright: ignore[reportAttributeAccessIssue]


def run_segments(
    step: Callable[[State, RandomSource], State],
    state0: State,
    source: RandomSource,
    start: int,
    stop: int,
    length: int,
    keep: frozenset[int],
    on_step: Callable[[int, State], None],
    restart: Callable[[int], None],
) -> tuple[list[State], list[int]]:
    """Steps ``start+1 .. stop`` in segments of ``length`` under ``torch.utils.checkpoint``: the states of the
    steps in ``keep`` and their indices. ``on_step(k, state)`` (observers, progress) runs in the forward pass only;
    ``restart(k)`` sets the model's clock to k steps done before a segment is recomputed (and back to ``stop``
    after it), the source is set to the segment's start state and restored after it."""
    tuple_state = isinstance(state0, tuple)
    saved: list[State] = []
    idx: list[int] = []
    state = state0
    anchor = torch.empty(0, requires_grad=True)  # an input that requires grad: the parameters' gradients flow
    for k0 in range(start, stop, length):
        k1 = min(stop, k0 + length)
        kept = [k for k in range(k0 + 1, k1 + 1) if k in keep]
        begin_draws, calls = _source_state(source), [0]

        def segment(_grad_anchor, *parts: torch.Tensor, k0=k0, k1=k1, kept=kept, begin_draws=begin_draws, calls=calls):
            replay = calls[0] > 0
            calls[0] += 1
            after = None
            if replay:  # the backward pass: the same clock and draws as the forward segment
                after = source.get_state()  # pyright: ignore[reportAttributeAccessIssue]
                source.set_state(begin_draws)  # pyright: ignore[reportAttributeAccessIssue]
                restart(k0)
            x = parts if tuple_state else parts[0]
            outs = []
            for k in range(k0 + 1, k1 + 1):
                x = step(x, source)
                if k in kept:
                    outs.extend(_flat(x))
                if not replay:
                    on_step(k, x)
            if replay:
                source.set_state(after)  # pyright: ignore[reportAttributeAccessIssue]
                restart(stop)
            return (*_flat(x), *outs)

        out = torch_checkpoint(segment, anchor, *_flat(state), use_reentrant=True)
        width = len(_flat(state))
        state = tuple(out[:width]) if tuple_state else out[0]
        for j, k in enumerate(kept):
            parts = tuple(out[width * (j + 1) : width * (j + 2)])
            saved.append(parts if tuple_state else parts[0])
            idx.append(k)
    return saved, idx
