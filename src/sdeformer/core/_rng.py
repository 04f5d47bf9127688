"""Explicit randomness (docs/design.md: no global RNG; THEORY section 1: one noise stream per run).

A run over a batch of shape ``B`` keeps one ``torch.Generator`` per batch element, so that element k of a
batched run draws exactly the numbers an unbatched run with the same seed draws: batched equals unbatched.
``Seeds`` is an int (one run; or, for a batch, the root of ``derive_seeds``), a list or tuple of ints (one per
batch element, row-major), or None (seed 0). Every seed is an int in [0, 2**63) (``validate.seed``): negative,
larger, float, string and nested seeds raise ConfigError, so no two seeds alias the same stream.

Three kinds of source, selected by name (``make_streams``, ``ModelConfig.rng``): ``"generator"`` (``Streams``, the
default: the numbers of every recorded run), ``"counter"`` (``core._counter.CounterStreams``: Philox, the
whole batch in vectorised ops, state = one draw counter per stream) and ``"splitmix"``
(``core._splitmix.SplitMixStreams``: the same design with SplitMix64's mixer, a third of Philox's work: many
small runs in one batch). All keep batched equal to unbatched and checkpoint through ``get_state`` /
``set_state``; their numbers differ (same law).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import torch

from ._errors import ConfigError
from ._validate import seed as check_seed, seed_sequence

if TYPE_CHECKING:
    from ._counter import CounterStreams
    from ._splitmix import SplitMixStreams

Seeds = int | Sequence[int] | None
RNG_KINDS = ("generator", "counter", "splitmix")
StreamSource: TypeAlias = "Streams | CounterStreams | SplitMixStreams"  # make_streams: randn, get_state, set_state


def derive_seeds(seed: int, count: int) -> list[int]:
    """``count`` independent 63-bit seeds derived from one root seed (numpy SeedSequence)."""
    state = np.random.SeedSequence(check_seed("seed", seed)).generate_state(count, dtype=np.uint64)
    return [int(s) >> 1 for s in state]


def seed_list(seed: Seeds, batch: tuple[int, ...]) -> list[int]:
    """One seed per batch element (row-major); an int seeds an unbatched run directly."""
    count = math.prod(batch)
    if seed is None:
        seed = 0
    if isinstance(seed, (int, np.integer)):
        return [check_seed("seed", seed)] if batch == () else derive_seeds(seed, count)  # pyright: ignore[reportArgumentType]
    if isinstance(seed, torch.Tensor) and seed.numel() == 1:
        return seed_list(seed.item(), batch)  # pyright: ignore[reportArgumentType]
    seeds = seed_sequence("seed", seed)
    if len(seeds) != count:
        raise ConfigError("seed", seed, f"needs one seed per batch element ({count} for batch shape {batch})")
    return seeds


GENERATOR_BYTES = 5000  # one torch.Generator of a run and its state (4.6 kB measured): memory estimates count it


class Streams:
    """One generator per batch element; ``randn(shape)`` returns ``(*batch, *shape)`` (a
    ``contracts.RandomSource``)."""

    def __init__(self, seed: Seeds, batch: tuple[int, ...], device: str | torch.device = "cpu"):
        self.batch = tuple(batch)
        self.device = torch.device(device)
        self.generators = [torch.Generator(device=self.device).manual_seed(s) for s in seed_list(seed, self.batch)]

    @classmethod
    def from_generator(cls, generator: torch.Generator, batch: tuple[int, ...]) -> Streams:
        """Use one caller-owned generator for the whole batch (drawn element by element)."""
        obj = cls.__new__(cls)
        obj.batch, obj.device = tuple(batch), generator.device
        obj.generators = [generator] * math.prod(batch)
        return obj

    def get_state(self) -> list[torch.Tensor]:
        """The generators' states (for checkpoints); restore with ``set_state``."""
        return [g.get_state() for g in self.generators]

    def set_state(self, states: list[torch.Tensor]) -> None:
        for g, s in zip(self.generators, states, strict=True):
            g.set_state(s)

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """Standard normals ``(*batch, *shape)``; element k from generator k."""
        out = torch.empty((len(self.generators), *shape), dtype=dtype, device=self.device)
        for row, g in zip(out, self.generators):
            row.normal_(generator=g)  # in place: no copy
        return out.reshape(self.batch + tuple(shape))


def randn(
    batch: tuple[int, ...],
    shape: tuple[int, ...],
    *,
    seed: Seeds = None,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device = "cpu",
) -> torch.Tensor:
    """Standard normals ``(*batch, *shape)`` from ``generator`` if given, else from per-element seeded streams."""
    streams = Streams.from_generator(generator, batch) if generator is not None else Streams(seed, batch, device)
    return streams.randn(shape, dtype)


def skip(source: object, shape: tuple[int, ...], dtype: torch.dtype) -> None:
    """Advance ``source`` past one draw of ``shape`` whose numbers are not needed: a counter source only counts it
    (``DrawCounted.skip``: no numbers made), any other source draws it; the later numbers are the same either way."""
    counted = getattr(source, "skip", None)
    if counted is not None:
        counted(shape, dtype)
    else:
        source.randn(shape, dtype)  # pyright: ignore[reportAttributeAccessIssue]


def check_kind(kind: object) -> str:
    """``kind`` if it names a source of ``RNG_KINDS``; ConfigError otherwise."""
    if not isinstance(kind, str) or kind not in RNG_KINDS:
        raise ConfigError("rng", kind, f"one of {list(RNG_KINDS)}")
    return kind


def make_streams(kind: str, seed: Seeds, batch: tuple[int, ...], device: str | torch.device = "cpu") -> StreamSource:
    """The random source named ``kind`` (``RNG_KINDS``) for ``batch`` streams seeded by ``seed`` (as ``Streams``).
    "counter" is the choice on a GPU, where the generator loop launches one kernel per run and draw; on a CPU
    the loop is faster (docs/benchmarks.md, "Counter-based randomness"). Raises ConfigError for another name."""
    from ._counter import CounterStreams  # counter imports this module (seed_list)
    from ._splitmix import SplitMixStreams

    kind = check_kind(kind)
    if kind != "generator":
        return (CounterStreams if kind == "counter" else SplitMixStreams)(seed, batch, device)
    launch_warning(torch.device(device), math.prod(batch))
    return Streams(seed, batch, device)


GPU_LOOP_RUNS = 64  # runs from which the generator loop on a GPU is worth a warning (one launch per run and draw)


@functools.cache
def launch_warning(device: torch.device, runs: int) -> str | None:
    """Warn once per (device, runs) when the generator source would draw for ``runs`` >= ``GPU_LOOP_RUNS`` runs on
    a GPU one kernel launch per run and draw; returns the text, or None where there is nothing to say."""
    if device.type == "cpu" or runs < GPU_LOOP_RUNS:
        return None
    text = (
        f"rng='generator' on {device} draws for {runs} runs with one kernel launch per run and draw; "
        "rng='counter' (ModelConfig.rng, --rng, a spec's base) draws the whole batch in one go"
    )
    warnings.warn(text, RuntimeWarning, stacklevel=3)
    return text
