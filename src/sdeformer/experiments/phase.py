"""Phase diagram of synchronization (THEORY sections 2 and 5).

P(sync) = fraction of seeds whose final E_beta is below ``threshold``, over activation x d x bias std x
attention scale, simulated with the limit SDE (Gaussian field). All scales and seeds of one
(activation, d, bias std) run as one batched tensor. The kernel criterion lambda_bar = 0 is computed on a
fine (d, bias std) grid for the overlay.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np
import torch

from ..attention import SoftmaxAttention
from ..diagnostics import interaction_energy
from ..errors import ConfigError
from ..kernel import kernel_theory
from ..fields import GaussianField
from ..sde import LimitSDE, make_solver
from ..sphere import uniform_sphere
from .rates import single_threaded

THRESHOLD = 1e-3  # final E_beta below this counts as synchronized
FINE = 41  # points per axis of the lambda_bar grid

FULL = dict(activations=("relu", "tanh", "silu"), dims=(4, 8, 16, 64), bias_stds=(0.0, 0.05, 0.1, 0.3),
            scales=(1.0, 0.0, -1.0), seeds=4, tokens=12, steps=200, horizon=10.0)
QUICK = dict(activations=("relu", "tanh"), dims=(4, 16, 64), bias_stds=(0.0, 0.1, 0.3), scales=(0.0, 1.0),
             seeds=2, tokens=8, steps=60, horizon=8.0)


@single_threaded
def phase(activations: Sequence[str] = FULL["activations"], dims: Sequence[int] = FULL["dims"],
          bias_stds: Sequence[float] = FULL["bias_stds"], scales: Sequence[float] = FULL["scales"],
          seeds: int = FULL["seeds"], tokens: int = FULL["tokens"], steps: int = FULL["steps"],
          horizon: float = FULL["horizon"], beta: float = 1.0, threshold: float = THRESHOLD, seed: int = 0,
          progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Returns probability ``(A, D, B, S)``, final_energy ``(A, D, B, S, seeds)``, lambda_bar ``(A, D, B)`` and
    the fine lambda_bar grids (per activation, ``(FINE, FINE)`` over dims_fine x bias_fine)."""
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
    for a, act in enumerate(activations):
        for i, d in enumerate(dims):
            x0 = uniform_sphere(tokens, d, batch=(S * int(seeds),), seed=seed + d)  # (S * seeds, N, d)
            initial[a, i] = float(interaction_energy(x0.double(), beta).mean())
            for j, b in enumerate(bias_stds):
                lam[a, i, j] = kernel_theory(act, d, bias_std=b, beta=beta).lambda_bar
                sde = LimitSDE(GaussianField(act, b, b, beta=beta), attention)
                traj = make_solver(sde, steps, horizon).solve(x0, seed=seed + 1000 * i + j, save_every=steps)
                final[a, i, j] = interaction_energy(traj.final.double(), beta).reshape(S, int(seeds)).numpy()
                if progress is not None:
                    progress(1)
    dims_fine = np.linspace(min(dims), max(dims), FINE)
    bias_fine = np.linspace(min(bias_stds), max(bias_stds), FINE)
    lam_fine = {act: [[kernel_theory(act, int(round(d)), bias_std=float(b)).lambda_bar for b in bias_fine]
                      for d in dims_fine] for act in activations}
    return {"activations": list(activations), "dims": list(dims), "bias_stds": list(bias_stds),
            "scales": list(scales), "seeds": int(seeds), "tokens": tokens, "steps": steps, "horizon": horizon,
            "threshold": threshold, "probability": (final < threshold).mean(-1), "final_energy": final,
            "initial_energy": initial, "lambda_bar": lam, "dims_fine": dims_fine, "bias_fine": bias_fine,
            "lambda_bar_fine": lam_fine,
            "wall_s": time.perf_counter() - start}


def agreement(result: dict[str, Any], finite_time: bool = False) -> float:
    """Fraction of noise-only cells (attention scale 0) where 'P(sync) >= 1/2' matches the kernel verdict:
    lambda_bar < 0 and the field not odd; with ``finite_time`` also lambda_bar T < log(threshold / E_beta(0))
    (the decay near synchrony is at rate lambda_bar, so a finite horizon needs that much). nan without scale 0."""
    if 0.0 not in result["scales"]:
        return float("nan")
    lam = np.asarray(result["lambda_bar"])  # (A, D, B)
    predicted = lam < 0
    if finite_time:
        need = np.log(result["threshold"] / np.asarray(result["initial_energy"]))[:, :, None]  # (A, D, 1)
        predicted &= lam * result["horizon"] < need
    for a, act in enumerate(result["activations"]):
        for j, b in enumerate(result["bias_stds"]):
            if kernel_theory(act, 4).activation.odd and b == 0.0:
                predicted[a, :, j] = False
    observed = np.asarray(result["probability"])[..., result["scales"].index(0.0)] >= 0.5  # (A, D, B)
    return float((observed == predicted).mean())
