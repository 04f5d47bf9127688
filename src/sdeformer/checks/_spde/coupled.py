"""Particles and the density on one noise path (THEORY sections 4-5; docs/spde.md section 9): clouds of N
i.i.d. tokens from mu_0 and the density solver share every Brownian coefficient B^k (one tuple state of the
time loop), and the weak distance between the cloud and the density is measured at the saved times while the
density is resolved. Error against N: E sup_t of the distance, its log-log slope beside the propagation-of-
chaos bound (W_2^2 <= C N^-1/2 for d < 4, so the distance's bound slope is -1/4; the sampling error alone
gives -1/2 in these Fourier distances, which is what the measurement should show).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...core._rng import Streams, derive_seeds
from ...dynamics._loop import SaveAt
from ...observables import bootstrap_slope, loglog_slope
from ...spde._diagnostics import (
    TAIL_TOL,
    cloud_coefficients,
    low_mode_distance,
    negative_sobolev,
    resolution,
    tail_share,
)
from ...spde._initial import sample_vmf, von_mises_fisher
from ...spde._solver import DensitySolver


@dataclass(frozen=True)
class Convergence:
    """Weak distances between N-particle clouds and the density on the same noise paths.

    ``times`` (S,); ``low`` and ``h1`` (S, len(sizes), runs): the low-mode (degrees 1..8) and H^-1 distances;
    ``resolved`` (S, runs): the density was resolved at that time; ``error`` (len(sizes), runs): the sup over
    the resolved times of ``low``; ``slope`` of its mean against N with a bootstrap 95% interval."""

    sizes: tuple[int, ...]
    times: np.ndarray
    low: np.ndarray
    h1: np.ndarray
    resolved: np.ndarray
    error: np.ndarray
    slope: float
    slope_ci: tuple[float, float]
    bound_slope: float = -0.25  # W_2 <= C N^-1/4 from W_2^2 <= C N^-1/2 (THEORY section 5, d < 4)


@dataclass(frozen=True)
class Recording:
    """A density run with its clouds, kept at the saved steps without storing the clouds: ``t`` (S,),
    ``density`` (S, ..., P) coefficients, ``clouds`` one (S, ..., P) coefficient tensor per cloud and
    ``points`` the first ``keep`` tokens of each cloud (S, ..., keep, d); ``every``: the times and the density's
    tail share (``diagnostics.tail_share``, ``(steps + 1, ...)``) of every step, for ``diagnostics.resolution``."""

    t: np.ndarray
    density: torch.Tensor
    clouds: tuple[torch.Tensor, ...]
    points: tuple[torch.Tensor, ...]
    every: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))


def record(
    solver: DensitySolver,
    c0: torch.Tensor,
    clouds: Sequence[torch.Tensor] = (),
    seed: int = 0,
    steps: Sequence[int] | None = None,
    keep: int = 0,
    progress: Callable[[int], None] | None = None,
) -> Recording:
    """Run the density (and the clouds on its noise path) and record the start and the steps ``steps`` (default:
    every step) through a ``SaveAt`` observer, so that memory stays O(N) however many steps are saved, and the
    density's tail share at every step (``Recording.every``); ``progress(k)`` after each step."""
    wanted = frozenset(range(1, solver.steps + 1) if steps is None else steps)
    basis = solver.basis
    rows: list[tuple[float, tuple[torch.Tensor, ...]]] = []
    tails: list[tuple[float, np.ndarray]] = []

    def observe(k: int, t: float, state) -> None:
        parts = state if isinstance(state, tuple) else (state,)
        tails.append((t, tail_share(basis, parts[0]).cpu().numpy()))
        if k in wanted or k == 0:
            rows.append(
                (
                    t,
                    (
                        parts[0],
                        *(cloud_coefficients(basis, x) for x in parts[1:]),
                        *(x[..., :keep, :].clone() for x in parts[1:]),
                    ),
                )
            )

    state0 = (c0, *clouds) if clouds else c0
    observe(0, 0.0, state0)
    saveat = SaveAt(final_only=True, observers=(observe,))
    solver.run(c0, seed=seed, saveat=saveat, particles=tuple(clouds), progress=progress)
    n = len(clouds)
    stacked = [torch.stack([r[1][i] for r in rows]) for i in range(1 + 2 * n)]
    every = (np.array([t for t, _ in tails]), np.stack([v for _, v in tails]))
    return Recording(
        np.array([r[0] for r in rows]), stacked[0], tuple(stacked[1 : 1 + n]), tuple(stacked[1 + n :]), every
    )


def particle_convergence(
    solver: DensitySolver,
    sizes: Sequence[int],
    runs: int,
    concentration: float = 1.0,
    seed: int = 0,
    saves: int = 4,
    tol: float = TAIL_TOL,
    mismatch: bool = False,
) -> Convergence:
    """Clouds of every size and the density from the von Mises-Fisher law, ``runs`` noise paths, distances at
    ``saves`` + 1 equally spaced times. ``mismatch``: compare the clouds with the density of another noise path
    (the wrong coupling, whose error must not fall with N)."""
    sizes = tuple(int(n) for n in sizes)
    basis = solver.basis
    steps = sorted({round(i * solver.steps / saves) for i in range(1, saves + 1)})
    low, h1, tails, times = [], [], [], np.zeros(0)
    noise_seeds, cloud_seeds = derive_seeds(seed, 2 * runs), derive_seeds(seed + 1, runs)
    c0 = von_mises_fisher(basis, concentration)
    for r in range(runs):
        clouds = [
            sample_vmf(solver.dim, n, concentration, Streams(cloud_seeds[r] + i, ())) for i, n in enumerate(sizes)
        ]
        rec = record(solver, c0, clouds, noise_seeds[r], steps)
        own = record(solver, c0, (), noise_seeds[runs + r], steps) if mismatch else rec
        density = own.density
        low.append(
            [[float(low_mode_distance(basis, density[i], cc[i])) for cc in rec.clouds] for i in range(len(rec.t))]
        )
        h1.append([[float(negative_sobolev(basis, density[i], cc[i])) for cc in rec.clouds] for i in range(len(rec.t))])
        tails.append((tail_share(basis, density).numpy(), own.every))
        times = rec.t
    low_a, h1_a = np.moveaxis(np.array(low), 0, -1), np.moveaxis(np.array(h1), 0, -1)  # (S, sizes, runs)
    resolved = np.stack([resolution(times, tail, tol, every).resolved for tail, every in tails], -1)  # (S, runs)
    error = np.where(resolved[:, None, :], low_a, 0.0).max(0)  # (sizes, runs)
    slope = loglog_slope(sizes, error.mean(-1)) if len(sizes) > 1 else float("nan")
    ci = bootstrap_slope(sizes, error) if len(sizes) > 1 and runs > 1 else (float("nan"), float("nan"))
    return Convergence(sizes, times, low_a, h1_a, resolved, error, slope, ci)
