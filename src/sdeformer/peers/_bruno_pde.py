"""Bruno, Pasqualotto, Agazzi's notebook PDE (``experiments.ipynb``, ``PDESimulation``): the density of the circle
dynamics, u_t + (u v)_x = 0, from the notebook's start (BEYOND section 10; THEORY section 4 without noise).

The notebook: n_points - 1 grid points x_j = 2 pi j / (n_points - 1), u0 = 1 / (2 pi) + sigma xi_j (xi: its
``torch.randn`` in float32 after ``torch.manual_seed(seed)``), Lax-Friedrichs steps dt = 0.02 dx, and the velocity
``conv1d`` of W(x) = -e^{beta cos x} sin x with u: torch's conv1d is a cross-correlation, v(x) = int W(x + y) u(y)
dy, the transport by the reflected density u(-y). The dynamics' velocity is the convolution int W(x - y) u(y) dy
(the mean-field limit of its own particles, and of ``UnnormalizedAttention(beta)``).

sdeformer runs the corrected PDE with its density solver (``spde.DensitySolver``, attention ``usa``, no noise: the
Lagrangian push-forward of the density by the particles' step), from the coefficients of the notebook's u0. About
the uniform state both parts of Fourier mode k grow at gamma_k = k^2 I_k(beta) / beta. The notebook's reflected
transport couples c_k to conj(c_k): its cos part (Re c_k) grows at +gamma_k and its sin part (Im c_k) decays at
-gamma_k, and Lax-Friedrichs adds the diffusion nu = dx^2 / (2 dt) (rates - nu k^2). ``as_published`` runs the
notebook's transport: the same density solver whose attention reads the reflected density (``ReflectedDensity``:
its quadrature grid is symmetric, so reflecting the measure permutes the grid's masses).
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
import torch

from ..core._validate import nonneg_float, positive_float, positive_int
from ..observables import exponential_rate

BETAS = (5.0, 7.0)  # the notebook's PDE cells
POINTS, SIGMA, SEED = 10_000, 0.01, 0  # its defaults
MODES, STEPS, SHOWN = 16, 100, 8  # the solver's resolution (degree), its steps, the modes reported


def start(n_points: int = POINTS, sigma: float = SIGMA, seed: int = SEED) -> tuple[torch.Tensor, torch.Tensor]:
    """The notebook's grid ``(M,)`` and u0 ``(M,)`` (float64; its noise drawn in float32, as the notebook draws)."""
    n_points = positive_int("n_points", n_points)
    x = torch.linspace(0, 2 * math.pi, n_points, dtype=torch.float64)[:-1]
    noise = torch.randn(len(x), generator=torch.Generator().manual_seed(int(seed)))  # float32
    return x, 1 / (2 * math.pi) * torch.ones_like(x) + nonneg_float("sigma", sigma) * noise


def rates(beta: float, modes: int = SHOWN) -> np.ndarray:
    """gamma_k = k^2 I_k(beta) / beta, k = 1..modes (``_bruno.rates``)."""
    from ._bruno import rates as gamma

    return gamma(beta, modes)


class ReflectedDensity:
    """A density solver's attention (``spde._attention.KernelAttention``) fed the reflected density rho(-y): the
    notebook's cross-correlation. Its ``moments`` take the masses of the solver's symmetric grid (y_j = 2 pi j / J,
    reflected onto y_{-j}); everything else is the inner attention's."""

    def __init__(self, inner):
        self.inner = inner

    def moments(self, y: torch.Tensor, masses: torch.Tensor, table=None) -> torch.Tensor:
        reflected = torch.remainder(-torch.arange(masses.shape[-1], device=masses.device), masses.shape[-1])
        return self.inner.moments(y, masses[..., reflected], table)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def measure(
    beta: float, n_points: int = POINTS, sigma: float = SIGMA, seed: int = SEED, steps: int = STEPS, reflected=False
) -> dict:
    """The PDE from the notebook's u0 for 1 / max gamma_k (linear: the perturbation grows by e), the corrected
    transport or (``reflected``) the notebook's: per mode k = 1..SHOWN the fitted growth rates of Re c_k (cos) and
    Im c_k (sin)."""
    from ..spde._fields import mlp_noise
    from ..spde._solver import DensitySolver

    beta = positive_float("beta", beta)
    horizon = 1.0 / float(rates(beta, MODES).max())
    no_noise = mlp_noise(2, scale=0.0, modes=1)
    solver = DensitySolver(no_noise, MODES, positive_int("steps", steps), horizon, attention="usa", beta=beta)
    if reflected:
        cast(Any, solver).attention = ReflectedDensity(solver.attention)  # the grid's attention, reflected
    x, u = start(n_points, sigma, seed)
    c0 = solver.basis.moments(torch.stack([x.cos(), x.sin()], -1), u * float(x[1] - x[0]))  # u dx at the points
    with torch.inference_mode():
        run = solver.run(c0.to(torch.complex128))
    c, t = run.x[:, 1 : SHOWN + 1].numpy(), run.t.numpy()  # (S, SHOWN)
    cos = [exponential_rate(t, np.abs(c[:, m].real)) for m in range(SHOWN)]
    sin = [exponential_rate(t, np.abs(c[:, m].imag)) for m in range(SHOWN)]
    return {"horizon": horizon, "cos": cos, "sin": sin}


def run(beta=None, as_published: bool = False, n_points: int = POINTS) -> dict:
    """Per beta (default the notebook's 5 and 7): gamma_k and the measured rates of the cos and sin parts of modes
    1..8, of the corrected PDE (default) or of the notebook's reflected transport (``as_published``)."""
    rows = []
    for b in np.atleast_1d(BETAS if beta is None else beta):
        rows.append(
            {"beta": float(b), "gamma": rates(float(b)).tolist(), **measure(float(b), n_points, reflected=as_published)}
        )
    return {"peer": "bruno", "part": "pde", "as_published": as_published, "n_points": n_points, "runs": rows}
