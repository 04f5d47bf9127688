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
-gamma_k, and Lax-Friedrichs adds the diffusion nu = dx^2 / (2 dt) (rates - nu k^2); ``as_published`` reports
those rates (the linearization of the notebook's scheme, not a run: sdeformer has no reflected kernel).
"""

from __future__ import annotations

import math

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


def published_rates(beta: float, n_points: int = POINTS, modes: int = SHOWN) -> tuple[np.ndarray, np.ndarray]:
    """The notebook's scheme linearized: (cos rates gamma_k - nu k^2, sin rates -gamma_k - nu k^2), nu = dx^2 /
    (2 dt) = 25 dx its Lax-Friedrichs diffusion."""
    gamma, k = rates(beta, modes), np.arange(1, modes + 1)
    nu = 25 * 2 * math.pi / (n_points - 1)
    return gamma - nu * k**2, -gamma - nu * k**2


def measure(beta: float, n_points: int = POINTS, sigma: float = SIGMA, seed: int = SEED, steps: int = STEPS) -> dict:
    """The corrected PDE from the notebook's u0 for 1 / max gamma_k (linear: the perturbation grows by e): per mode
    k = 1..SHOWN the fitted growth rates of Re c_k (cos) and Im c_k (sin)."""
    from ..spde._fields import mlp_noise
    from ..spde._solver import DensitySolver

    beta = positive_float("beta", beta)
    horizon = 1.0 / float(rates(beta, MODES).max())
    no_noise = mlp_noise(2, scale=0.0, modes=1)
    solver = DensitySolver(no_noise, MODES, positive_int("steps", steps), horizon, attention="usa", beta=beta)
    x, u = start(n_points, sigma, seed)
    c0 = solver.basis.moments(torch.stack([x.cos(), x.sin()], -1), u * float(x[1] - x[0]))  # u dx at the points
    with torch.inference_mode():
        run = solver.run(c0.to(torch.complex128))
    c, t = run.x[:, 1 : SHOWN + 1].numpy(), run.t.numpy()  # (S, SHOWN)
    cos = [exponential_rate(t, np.abs(c[:, m].real)) for m in range(SHOWN)]
    sin = [exponential_rate(t, np.abs(c[:, m].imag)) for m in range(SHOWN)]
    return {"horizon": horizon, "cos": cos, "sin": sin}


def run(beta=None, as_published: bool = False, n_points: int = POINTS) -> dict:
    """Per beta (default the notebook's 5 and 7): gamma_k and the rates of the cos and sin parts of modes 1..8, the
    corrected PDE's measured (default) or the notebook's scheme's (``as_published``)."""
    rows = []
    for b in np.atleast_1d(BETAS if beta is None else beta):
        row = {"beta": float(b), "gamma": rates(float(b)).tolist()}
        if as_published:
            cos, sin = published_rates(float(b), n_points)
            row.update(cos=cos.tolist(), sin=sin.tolist())
        else:
            row.update(measure(float(b), n_points))
        rows.append(row)
    return {"peer": "bruno", "part": "pde", "as_published": as_published, "n_points": n_points, "runs": rows}
