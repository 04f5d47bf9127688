"""The one time loop of every model and solver (THEORY sections 1, 3, 4), what it saves (``SaveAt``) and what it
returns (``Trajectory``), for any state: tokens on the sphere ``(..., N, d)``, or a tuple of tensors (tokens
with a radius, a density on a grid and its particles).

``integrate(step, state0, dt, stop, ...)`` runs ``state = step(state, source)`` for k = start+1 .. stop; the
``SaveAt`` decides which steps are kept and which observers see each step; the result holds the saved states
stacked along a new leading axis, their step indices and times, and the run's stats (steps, wall time).
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ..core._rng import Seeds, make_streams
from ..core._sphere import project
from ..core._validate import float_dtype, positive_float, positive_int
from ._checkpoint import run_segments, segment_length

Observer = Callable[[int, float, Any], None]  # observer(k, t = k dt, state) after each step
State = Any  # a tensor or a tuple of tensors


@dataclass(frozen=True)
class Trajectory:
    """Saved states. ``x``: (S, ...) (a tuple of such for a tuple state); ``steps``: (S,) indices k of the saved
    steps (a layer of the discrete model, a step of an SDE scheme); ``t``: (S,) times k dt; ``stats``: ``steps``
    (the number taken) and ``wall_s`` (seconds)."""

    x: Any
    steps: torch.Tensor
    t: torch.Tensor
    stats: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def layers(self) -> torch.Tensor:
        """The former name of ``steps`` (kept for code written against it; it counts SDE steps too)."""
        return self.steps

    @property
    def final(self) -> Any:
        """The last saved state, ``(..., N, d)`` for tokens."""
        return tuple(s[-1] for s in self.x) if isinstance(self.x, tuple) else self.x[-1]

    def to_xarray(self, config: Any = None) -> Any:
        """The saved states as an ``xarray.Dataset`` (dims time x [run] x token x dim; ``config``: a
        ``ModelConfig`` or mapping whose values become coordinates); ``labels.trajectory_dataset``."""
        from ._labels import trajectory_dataset

        values = config.to_dict() if hasattr(config, "to_dict") else config
        return trajectory_dataset(self, values)


@dataclass(frozen=True)
class SaveAt:
    """What a run keeps (what diffrax calls SaveAt). The start state is always kept; then exactly one of:
    ``every`` k-th step and the model's last step (the default, k = 1); ``steps``, sorted unique step indices;
    ``times``, for each t the first step whose time k dt reaches t (the peers' rule); ``final_only``, only the
    last step of the run. ``observers``: ``observer(k, k dt, state)`` after each step (statistics without
    storing states). An int where a SaveAt is expected means ``SaveAt(every=int)``."""

    every: int | None = None
    steps: Sequence[int] | None = None
    times: Sequence[float] | None = None
    final_only: bool = False
    observers: tuple[Observer, ...] = ()

    def __post_init__(self) -> None:
        given = [n for n in ("every", "steps", "times") if getattr(self, n) is not None] + (
            ["final_only"] if self.final_only else []
        )
        if len(given) > 1:
            raise ConfigError("saveat", given, "give one of every, steps, times or final_only")
        if self.every is not None:
            positive_int("save_every", self.every)
        for obs in self.observers:
            if not callable(obs):
                raise ConfigError("observer", type(obs).__name__, "must be callable as observer(k, t, x)")

    def keep(self, start: int, stop: int, final: int, dt: float) -> frozenset[int]:
        """The steps in (start, stop] to save; ``final``: the model's last step (saved with ``every``)."""
        if self.steps is not None:
            return _check_steps(self.steps, start, stop)
        if self.times is not None:
            return frozenset(_first_step_reaching(t, dt, start, stop) for t in self.times)
        if self.final_only:
            return frozenset({stop})
        every = self.every or 1
        return frozenset(k for k in range(start + 1, stop + 1) if k % every == 0 or k == final)


def as_saveat(saveat: SaveAt | int | None) -> SaveAt:
    """``saveat`` as a SaveAt (an int k: every k-th step; None: every step). Raises ConfigError otherwise."""
    if saveat is None:
        return SaveAt()
    if isinstance(saveat, SaveAt):
        return saveat
    if isinstance(saveat, bool) or not isinstance(saveat, numbers.Integral):
        raise ConfigError("saveat", saveat, "a SaveAt or a positive integer (save every k-th step)")
    return SaveAt(every=int(saveat))


def _check_steps(steps: Sequence[int], start: int, stop: int) -> frozenset[int]:
    """The steps, which must be sorted, unique integers in [start, stop]; else ConfigError."""
    allowed = f"sorted unique integer steps in [{start}, {stop}]"
    if isinstance(steps, (str, bytes, torch.Tensor)) or not isinstance(steps, Sequence):
        raise ConfigError("save_at", steps, f"must be a list of {allowed}")
    ks = list(steps)
    if any(isinstance(k, bool) or not isinstance(k, numbers.Integral) for k in ks):
        raise ConfigError("save_at", steps, allowed)
    unsorted = any(b <= a for a, b in zip(ks, ks[1:], strict=False))
    if unsorted or (ks and not start <= ks[0] <= ks[-1] <= stop):
        raise ConfigError("save_at", steps, allowed)
    return frozenset(int(k) for k in ks)


def _first_step_reaching(t: float, dt: float, start: int, stop: int) -> int:
    """The first step k in [start, stop] with k dt >= t (up to rounding); ConfigError outside the run."""
    if not isinstance(t, numbers.Real) or not math.isfinite(t) or not start * dt <= t <= stop * dt * (1 + 1e-12):
        raise ConfigError("save times", t, f"finite times in [{start * dt:g}, {stop * dt:g}]")
    return min(stop, max(start, math.ceil(t / dt - 1e-9)))


def check_tokens(x: torch.Tensor, name: str = "x0") -> None:
    """Raise ConfigError unless ``x`` is a finite floating tensor ``(..., N, d)`` with N >= 1, d >= 2."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ConfigError(name, type(x).__name__, "must be a floating-point torch.Tensor of shape (..., N, d)")
    float_dtype(f"{name}.dtype", x.dtype)  # float16 refused
    if x.device.type == "meta":
        raise ConfigError(name, "meta tensor", "tokens with values (a 'cpu' or 'cuda' tensor), not 'meta'")
    if x.ndim < 2 or x.shape[-1] < 2 or x.shape[-2] < 1:
        raise ConfigError(name, tuple(x.shape), "must have shape (..., N, d) with N >= 1 and d >= 2")
    if not torch.isfinite(x).all():
        raise ConfigError(name, "NaN/inf", "must be finite")
    if (torch.linalg.vector_norm(x, dim=-1) == 0).any():
        raise ConfigError(name, "zero vector", "tokens must be non-zero (they are projected to the sphere)")


def _same_shape(before: State, after: State) -> None:
    """ConfigError naming ``x0`` when a step changed the state's shape: per-run parameters ``(G,)`` (a beta per
    run) broadcast unbatched tokens ``(N, d)`` to ``(G, N, d)``; the tokens must carry that batch themselves."""
    if isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor) and before.shape != after.shape:
        raise ConfigError(
            "x0", tuple(before.shape), f"tokens of shape {tuple(after.shape)}: the model's per-run parameters carry a"
            " batch the tokens lack (give x0 one run per value, e.g. x0.expand(G, N, d))",
        )  # fmt: skip


def _stack(states: list[State]) -> Any:
    if isinstance(states[0], tuple):
        return tuple(torch.stack(parts) for parts in zip(*states))
    return torch.stack(states)


def integrate(
    step: Callable[[State, RandomSource], State],
    state0: State,
    dt: float,
    stop: int,
    *,
    source: RandomSource,
    saveat: SaveAt | int | None = None,
    progress: Callable[[int], None] | None = None,
    start: int = 0,
    final: int | None = None,
    checkpoint: int | bool | None = None,
    restart: Callable[[int], None] = lambda _k: None,
) -> Trajectory:
    """The time loop (THEORY sections 1, 3, 4): ``state = step(state, source)`` for k = start+1 .. stop from
    ``state0`` (any state; the start state is saved as given); ``t`` = k dt. ``saveat`` picks the saved steps
    (``final``: the model's last step, default ``stop``) and the observers, then ``progress(k)`` is called
    after each step. ``checkpoint`` (K steps, or True for ceil(sqrt(steps))): segments of K steps recomputed in
    the backward pass with the same draws (``_checkpoint.run_segments``; ``restart(k)`` sets the model's clock).
    Raises ConfigError for a bad ``saveat`` or ``checkpoint``."""
    save = as_saveat(saveat)
    keep = save.keep(start, stop, stop if final is None else final, dt)
    began = time.perf_counter()

    def on_step(k: int, state: State) -> None:
        if k == start + 1:
            _same_shape(state0, state)
        for obs in save.observers:
            obs(k, k * dt, state)
        if progress is not None:
            progress(k)

    saved, idx = [state0], [start]
    if checkpoint is not None and checkpoint is not False:
        length = segment_length(checkpoint, stop - start)
        more, more_idx = run_segments(step, state0, source, start, stop, length, keep, on_step, restart)
        saved, idx = saved + more, idx + more_idx
    else:
        state = state0
        for k in range(start + 1, stop + 1):
            state = step(state, source)
            if k in keep:
                saved.append(state)
                idx.append(k)
            on_step(k, state)
    steps = torch.tensor(idx)
    stats = {"steps": float(stop - start), "wall_s": time.perf_counter() - began}
    return Trajectory(_stack(saved), steps, steps.to(torch.float64) * dt, stats)


class TokenDynamics:
    """Base of every model of tokens on the sphere (the discrete model, the SDE solvers): ``total`` equal steps
    of size ``dt`` on [0, horizon], a ``step(x, source)`` ``(..., N, d) -> (..., N, d)``, and the one verb
    ``run``. Raises ConfigError for a bad number of steps or horizon."""

    def __init__(self, total: int, horizon: float, name: str = "steps"):
        self.total, self.horizon = positive_int(name, total), positive_float("horizon", horizon)

    @property
    def dt(self) -> float:
        return self.horizon / self.total

    def step(self, x: torch.Tensor, source: RandomSource) -> torch.Tensor:
        raise NotImplementedError

    def start_state(self, x0: torch.Tensor) -> torch.Tensor:
        """The state a run starts from: LN(x0), tokens on the sphere (a model with a radius keeps x0)."""
        return project(x0)

    def begin(self, start: int) -> None:
        """Called by ``run`` before its first step ``start + 1`` (a time-dependent model sets its clock)."""

    def run(
        self,
        x0: torch.Tensor,
        seed: Seeds = 0,
        saveat: SaveAt | int | None = None,
        *,
        streams: RandomSource | None = None,
        rng: str = "generator",
        progress: Callable[[int], None] | None = None,
        start: int = 0,
        stop: int | None = None,
        checkpoint: int | bool | None = None,
    ) -> Trajectory:
        """Run steps ``start+1 .. stop`` (default: all) from ``start_state(x0)`` (LN(x0) for tokens on the sphere)
        ``(..., N, d)`` (``integrate``); ``t`` = k dt. A run resumed at ``start`` > 0 continues from x0 as given
        (the state a segment ended in: projecting it again would move it by rounding).

        ``seed``: int or one int per batch element (see :mod:`sdeformer.core._rng`); ``streams`` overrides it
        (pass the same Streams to continue a run in segments); ``rng`` names the source made from ``seed`` without
        ``streams`` (``core._rng.make_streams``: generator, counter or splitmix). ``saveat`` (``SaveAt``, or an int k
        for every k-th step; default every step): the start state is always saved, and with ``every`` the model's last
        step too. ``progress(k)`` is called after each step. Raises ConfigError for bad tokens, step range or
        saveat."""
        stop = self.total if stop is None else int(stop)
        if not 0 <= start <= stop <= self.total:
            raise ConfigError("stop", stop, f"need 0 <= start <= stop <= {self.total}")
        check_tokens(x0)
        source = make_streams(rng, seed, tuple(x0.shape[:-2]), x0.device) if streams is None else streams
        self.begin(start)
        state0 = self.start_state(x0) if start == 0 else x0
        return integrate(
            self.step, state0, self.dt, stop, source=source, saveat=as_saveat(saveat), progress=progress,
            start=start, final=self.total, checkpoint=checkpoint, restart=self.begin,
        )  # fmt: skip
