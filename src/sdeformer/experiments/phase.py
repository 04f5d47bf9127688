"""Phase diagram of synchronization (THEORY sections 2 and 5).

P(sync) = fraction of seeds whose final E_beta is below ``threshold``, over activation x d x bias std x
attention scale, simulated with the limit SDE (Gaussian field). All scales and seeds of one
(activation, d, bias std) run as one batched tensor. The kernel criterion lambda_bar = 0 is computed on a
fine (d, bias std) grid for the overlay. ``run_and_write`` writes ``phase.json`` (``PhaseResult.to_json()``),
``phase.npz`` (probability, final_energy, lambda_bar) and ``phase.png``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..attention import SoftmaxAttention
from ..diagnostics import interaction_energy
from ..errors import ConfigError
from ..fields import GaussianField
from ..kernel import kernel_theory
from ..rng import derive_seeds
from ..sde import LimitSDE, make_solver
from ..sphere import uniform_sphere
from ..store import write_json, write_npz
from .results import Result
from .threads import single_threaded

THRESHOLD = 1e-3  # final E_beta below this counts as synchronized
FINE = 41  # points per axis of the lambda_bar grid

FULL: dict[str, Any] = dict(
    activations=("relu", "tanh", "silu"),
    dims=(4, 8, 16, 64),
    bias_stds=(0.0, 0.05, 0.1, 0.3),
    scales=(1.0, 0.0, -1.0),
    seeds=4,
    tokens=12,
    steps=200,
    horizon=10.0,
)
QUICK: dict[str, Any] = dict(
    activations=("relu", "tanh"),
    dims=(4, 16, 64),
    bias_stds=(0.0, 0.1, 0.3),
    scales=(0.0, 1.0),
    seeds=2,
    tokens=8,
    steps=60,
    horizon=8.0,
)


@dataclass(frozen=True)
class PhaseResult(Result):
    """P(sync) ``probability`` (A, D, B, S) and ``final_energy`` (A, D, B, S, seeds) over the grid, E_beta(0)
    ``initial_energy`` (A, D), ``lambda_bar`` (A, D, B) and the fine lambda_bar grids (per activation,
    ``(FINE, FINE)`` over dims_fine x bias_fine)."""

    JSON_KEYS = (
        "activations",
        "dims",
        "bias_stds",
        "scales",
        "seeds",
        "threshold",
        "probability",
        "lambda_bar",
        "agreement",
        "agreement_finite_t",
        "wall_s",
    )
    activations: list[str]
    dims: list[int]
    bias_stds: list[float]
    scales: list[float]
    seeds: int
    tokens: int
    steps: int
    horizon: float
    threshold: float
    probability: np.ndarray
    final_energy: np.ndarray
    initial_energy: np.ndarray
    lambda_bar: np.ndarray
    dims_fine: np.ndarray
    bias_fine: np.ndarray
    lambda_bar_fine: dict[str, list[list[float]]]
    wall_s: float

    @property
    def agreement(self) -> float:
        """Noise-only cells where 'P(sync) >= 1/2' matches the kernel verdict (``agreement_with_kernel``)."""
        return agreement_with_kernel(self)

    @property
    def agreement_finite_t(self) -> float:
        """The same with the finite-horizon requirement (``agreement_with_kernel(finite_time=True)``)."""
        return agreement_with_kernel(self, finite_time=True)


def settings_for(quick: bool = False, **overrides: Any) -> dict[str, Any]:
    """The QUICK or FULL grid, with the given (not None) overrides."""
    return {**(QUICK if quick else FULL), **{k: v for k, v in overrides.items() if v is not None}}


def progress_units(settings: dict[str, Any]) -> int:
    """How often ``phase(**settings)`` calls ``progress(1)``: once per (activation, d, bias std) cell."""
    return len(settings["activations"]) * len(settings["dims"]) * len(settings["bias_stds"])


@single_threaded
def phase(
    activations: Sequence[str] = FULL["activations"],
    dims: Sequence[int] = FULL["dims"],
    bias_stds: Sequence[float] = FULL["bias_stds"],
    scales: Sequence[float] = FULL["scales"],
    seeds: int = FULL["seeds"],
    tokens: int = FULL["tokens"],
    steps: int = FULL["steps"],
    horizon: float = FULL["horizon"],
    beta: float = 1.0,
    threshold: float = THRESHOLD,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> PhaseResult:
    """Simulate the grid (see module docstring). Initial tokens per d and noise per (d, bias std) derive from
    ``seed`` and are shared by the activations (common random numbers)."""
    if int(seeds) < 1 or not dims or not bias_stds or not scales or not activations:
        raise ConfigError("grid", (activations, dims, bias_stds, scales, seeds), "every axis needs >= 1 value")
    if min(dims) < 4:
        raise ConfigError("dims", list(dims), "d >= 4 (lambda_bar < 0 needs d >= 4)")
    start = time.perf_counter()
    A, D, B, S = len(activations), len(dims), len(bias_stds), len(scales)
    final = np.zeros((A, D, B, S, int(seeds)))
    initial = np.zeros((A, D))
    lam = np.zeros((A, D, B))
    scale = torch.tensor(scales, dtype=torch.float32).repeat_interleave(int(seeds))  # (S * seeds,)
    attention = SoftmaxAttention(beta, scale)
    derived = derive_seeds(seed, D * (B + 1))
    x_seeds, noise_seeds = derived[:D], [derived[D + i * B : D + (i + 1) * B] for i in range(D)]
    for a, act in enumerate(activations):
        for i, d in enumerate(dims):
            x0 = uniform_sphere(tokens, d, batch=(S * int(seeds),), seed=x_seeds[i])  # (S * seeds, N, d)
            initial[a, i] = float(interaction_energy(x0.double(), beta).mean())
            for j, b in enumerate(bias_stds):
                lam[a, i, j] = kernel_theory(act, d, bias_std=b, beta=beta).lambda_bar
                sde = LimitSDE(GaussianField(act, b, b, beta=beta), attention)
                traj = make_solver(sde, steps, horizon).solve(x0, seed=noise_seeds[i][j], save_every=steps)
                final[a, i, j] = interaction_energy(traj.final.double(), beta).reshape(S, int(seeds)).numpy()
                if progress is not None:
                    progress(1)
    dims_fine = np.linspace(min(dims), max(dims), FINE)
    bias_fine = np.linspace(min(bias_stds), max(bias_stds), FINE)
    lam_fine = {
        act: [[kernel_theory(act, int(round(d)), bias_std=float(b)).lambda_bar for b in bias_fine] for d in dims_fine]
        for act in activations
    }
    return PhaseResult(
        activations=list(activations),
        dims=list(dims),
        bias_stds=list(bias_stds),
        scales=list(scales),
        seeds=int(seeds),
        tokens=tokens,
        steps=steps,
        horizon=horizon,
        threshold=threshold,
        probability=(final < threshold).mean(-1),
        final_energy=final,
        initial_energy=initial,
        lambda_bar=lam,
        dims_fine=dims_fine,
        bias_fine=bias_fine,
        lambda_bar_fine=lam_fine,
        wall_s=time.perf_counter() - start,
    )


def run_and_write(out: Path, settings: dict[str, Any], progress: Callable[[int], None] | None = None) -> PhaseResult:
    """``phase(**settings)``, then ``phase.json``, ``phase.npz`` and ``phase.png`` into ``out``."""
    from ..plots.checks import phase_figure

    result = phase(**settings, progress=progress)
    write_json(Path(out) / "phase.json", result.to_json())
    write_npz(
        Path(out) / "phase.npz",
        probability=result.probability,
        final_energy=result.final_energy,
        lambda_bar=result.lambda_bar,
    )
    phase_figure(result, Path(out) / "phase.png")
    return result


def agreement_with_kernel(result: PhaseResult, finite_time: bool = False) -> float:
    """Fraction of noise-only cells (attention scale 0) where 'P(sync) >= 1/2' matches the kernel verdict:
    lambda_bar < 0 and the field not odd; with ``finite_time`` also lambda_bar T < log(threshold / E_beta(0))
    (the decay near synchrony is at rate lambda_bar, so a finite horizon needs that much). nan without scale 0."""
    if 0.0 not in result.scales:
        return float("nan")
    lam = np.asarray(result.lambda_bar)  # (A, D, B)
    predicted = lam < 0
    if finite_time:
        need = np.log(result.threshold / np.asarray(result.initial_energy))[:, :, None]  # (A, D, 1)
        predicted &= lam * result.horizon < need
    for a, act in enumerate(result.activations):
        for j, b in enumerate(result.bias_stds):
            if kernel_theory(act, 4).activation.odd and b == 0.0:
                predicted[a, :, j] = False
    observed = np.asarray(result.probability)[..., result.scales.index(0.0)] >= 0.5  # (A, D, B)
    return float((observed == predicted).mean())
