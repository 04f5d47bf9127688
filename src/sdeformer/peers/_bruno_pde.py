"""Bruno, Pasqualotto, Agazzi's notebook PDE (``experiments.ipynb``, ``PDESimulation``): the density of the circle
dynamics, u_t + (u v)_x = 0, from the notebook's start (BEYOND section 10; THEORY section 4 without noise).

The notebook: M = n_points - 1 grid points x_j = 2 pi j / M, u0 = 1 / (2 pi) + sigma xi_j (xi: its ``torch.randn``
in float32 after ``torch.manual_seed(seed)``), and ``num_steps = int(T / dt)`` rows of its table U, row 0 the start,
each next row one Lax-Friedrichs step of dt = 0.02 dx: u_j <- (u_{j-1} + u_{j+1}) / 2 - dt / (2 dx) (f_{j+1} -
f_{j-1}), f = u v, periodic. Its velocity is torch's ``conv1d`` of the kernel W(x) = -e^{beta cos x} sin x (times
dx, the grid taken twice) with u, a cross-correlation: v(x_i) = sum_j W(x_i + x_j) u_j dx, the transport by the
reflected density u(-y). Its new row is a float32 tensor (made without a dtype), so every step of its float64 run is
rounded to float32. ``lax_friedrichs`` is that scheme, step for step (the same cross-correlation call, the same
elementwise order, the float32 row): ``as_published`` runs it at the notebook's cells (beta 5 to T = 0.5, beta 7
to T = 0.08, 10000 points) and ``compare`` counts the cells of the notebook's saved ``U`` it equals.

The dynamics' velocity is the convolution int W(x - y) u(y) dy (the mean-field limit of its own particles, and of
``UnnormalizedAttention(beta)``). sdeformer runs that corrected PDE with its density solver (``spde.DensitySolver``,
attention ``usa``, no noise: the push-forward of the density by the particles' step) from the coefficients of the
notebook's u0. About the uniform state both parts of Fourier mode k grow at gamma_k = k^2 I_k(beta) / beta; the
reflected transport couples c_k to conj(c_k), so its cos part (Re c_k) grows at +gamma_k and its sin part (Im c_k)
decays at -gamma_k, and Lax-Friedrichs adds the numerical diffusion nu = dx^2 / (2 dt) = 25 dx (rates - nu k^2).
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import torch

from ..core._errors import ConfigError
from ..core._validate import fits_in_memory, nonneg_float, positive_float, positive_int
from ..io._atomic import atomic_write_bytes
from ..observables import exponential_rate
from ._progress import Plan, step as count_step

BETAS = (5.0, 7.0)  # the notebook's PDE cells
HORIZONS = {5.0: 0.5, 7.0: 0.08}  # their T
POINTS, SIGMA, SEED, COURANT = 10_000, 0.01, 0, 0.02  # its defaults; dt = COURANT dx
MODES, STEPS, SHOWN = 16, 100, 8  # the solver's resolution (degree), its steps, the modes reported
EQUAL = 1e-12  # cells equal: the notebook's rows are float32, so any change of its arithmetic moves one by >= 1e-9


def start(n_points: int = POINTS, sigma: float = SIGMA, seed: int = SEED) -> tuple[torch.Tensor, torch.Tensor]:
    """The notebook's grid ``(M,)`` and u0 ``(M,)`` (float64; its noise drawn in float32, as the notebook draws)."""
    n_points = _points(n_points)
    x = torch.linspace(0, 2 * math.pi, n_points, dtype=torch.float64)[:-1]
    noise = torch.randn(len(x), generator=torch.Generator().manual_seed(int(seed)))  # float32
    return x, 1 / (2 * math.pi) * torch.ones_like(x) + nonneg_float("sigma", sigma) * noise


def _points(n_points: int) -> int:
    n_points = positive_int("n_points", n_points)
    if n_points < 4:
        raise ConfigError("n_points", n_points, "at least 4 (3 grid points)")
    return n_points


def rates(beta: float, modes: int = SHOWN) -> np.ndarray:
    """gamma_k = k^2 I_k(beta) / beta, k = 1..modes (``_bruno.rates``)."""
    from ._bruno import rates as gamma

    return gamma(beta, modes)


def horizon(beta: float, maxtime=None) -> float:
    """T of the published run: ``maxtime``, else the notebook's T for its two betas, else 1 / max gamma_k."""
    if maxtime is not None:
        return positive_float("maxtime", maxtime)
    return HORIZONS.get(float(beta), 1.0 / float(rates(beta, MODES).max()))


def lax_friedrichs(
    beta: float, n_points: int = POINTS, maxtime=None, sigma: float = SIGMA, seed: int = SEED
) -> tuple[np.ndarray, float]:
    """The notebook's published scheme: its table U ``(int(T / dt), M)`` (float64, rows after the first rounded to
    float32) and dt."""
    beta = positive_float("beta", beta)
    x, u0 = start(n_points, sigma, seed)
    dx = x[1] - x[0]
    dt = COURANT * dx
    steps = int(horizon(beta, maxtime) / dt)
    if steps < 2:
        raise ConfigError("maxtime", maxtime, f"at least two rows of dt = {float(dt):.3g} (0.02 dx)")
    fits_in_memory("n_points", n_points, 8 * steps * len(x))
    kernel = ((-torch.exp(beta * torch.cos(x)) * torch.sin(x)).repeat(2) * dx)[None, None]  # W on the grid, twice
    lam = dt / (2 * dx)
    table = torch.empty(steps, len(x), dtype=torch.float64)
    table[0] = u0
    row = torch.empty(len(x), dtype=torch.float32)  # the notebook's new row: float32
    with torch.inference_mode():
        for t in range(1, steps):
            u = table[t - 1]
            v = torch.nn.functional.conv1d(kernel, u[None, None])[0, 0, : len(x)]  # v_i = sum_j W(x_i + x_j) u_j dx
            f = u * v
            row.copy_(0.5 * (u.roll(1) + u.roll(-1)) - lam * (f.roll(-1) - f.roll(1)))
            table[t] = row
            count_step()
    return table.numpy(), float(dt)


def fitted(table: np.ndarray, dt: float, until: float | None = None) -> dict:
    """The growth rates of the cos (Re c_k) and sin (Im c_k) parts of modes 1..SHOWN of a table U on the notebook's
    grid, c_k(t) = sum_j U(t, x_j) e^{-i k x_j} dx / sqrt(2 pi): least-squares slopes of their logs over t <= until
    (the whole table if None)."""
    m = table.shape[1]
    x = 2 * math.pi * np.arange(m) / m
    t = np.arange(table.shape[0]) * dt
    keep = slice(None) if until is None else slice(0, max(3, int(np.searchsorted(t, until, side="right"))))
    c = table[keep] @ np.exp(-1j * np.outer(x, np.arange(1, SHOWN + 1))) * (2 * math.pi / m) / math.sqrt(2 * math.pi)
    cos = [exponential_rate(t[keep], np.abs(c[:, k].real)) for k in range(SHOWN)]
    sin = [exponential_rate(t[keep], np.abs(c[:, k].imag)) for k in range(SHOWN)]
    return {"cos": cos, "sin": sin}


def measure(beta: float, n_points: int = POINTS, sigma: float = SIGMA, seed: int = SEED, steps: int = STEPS) -> dict:
    """The corrected PDE from the notebook's u0 for 1 / max gamma_k (linear: the perturbation grows by e), by
    sdeformer's density solver: per mode k = 1..SHOWN the fitted growth rates of Re c_k (cos) and Im c_k (sin)."""
    from ..spde._fields import mlp_noise
    from ..spde._solver import DensitySolver

    beta = positive_float("beta", beta)
    fits_in_memory("points", n_points, 3 * 16 * n_points * (2 * MODES + 1))  # its complex moments and temporaries
    window = 1.0 / float(rates(beta, MODES).max())
    no_noise = mlp_noise(2, scale=0.0, modes=1)
    solver = DensitySolver(no_noise, MODES, positive_int("steps", steps), window, attention="usa", beta=beta)
    x, u = start(n_points, sigma, seed)
    c0 = solver.basis.moments(torch.stack([x.cos(), x.sin()], -1), u * float(x[1] - x[0]))  # u dx at the points
    with torch.inference_mode():
        run = solver.run(c0.to(torch.complex128), progress=count_step)
    c, t = run.x[:, 1 : SHOWN + 1].numpy(), run.t.numpy()  # (S, SHOWN)
    cos = [exponential_rate(t, np.abs(c[:, m].real)) for m in range(SHOWN)]
    sin = [exponential_rate(t, np.abs(c[:, m].imag)) for m in range(SHOWN)]
    return {"horizon": window, "cos": cos, "sin": sin}


def published(beta: float, n_points: int = POINTS, maxtime=None, seed: int = SEED) -> dict:
    """The notebook's run at ``beta``: its table ``U`` (an array: written by ``write``, not printed), T, dt, its
    diffusion nu, and the rates fitted over the linear window t <= 1 / max gamma_k."""
    table, dt = lax_friedrichs(beta, n_points, maxtime, seed=seed)
    window = 1.0 / float(rates(beta, MODES).max())
    dx = 2 * math.pi / (n_points - 1)
    info = {"maxtime": horizon(beta, maxtime), "dt": dt, "rows": table.shape[0], "nu": dx * dx / (2 * dt)}
    return {**info, "horizon": window, **fitted(table, dt, window), "U": table}


def run(beta=None, as_published: bool = False, n_points: int = POINTS, maxtime=None, seed: int = SEED) -> dict:
    """Per beta (default the notebook's 5 and 7): gamma_k and the measured rates of the cos and sin parts of modes
    1..8, of the corrected PDE by the density solver (default) or of the notebook's published Lax-Friedrichs scheme
    (``as_published``, with its table ``U``)."""
    rows, betas = [], _betas(beta, maxtime, as_published)
    for b in betas:
        measured = published(b, n_points, maxtime, seed) if as_published else measure(b, n_points, seed=seed)
        rows.append({"beta": b, "gamma": rates(b).tolist(), **measured})
    return {"peer": "bruno", "part": "pde", "as_published": as_published, "n_points": n_points, "runs": rows}


def _betas(beta, maxtime, as_published: bool) -> list[float]:
    if maxtime is not None and not as_published:
        raise ConfigError(
            "maxtime", maxtime, "the published scheme's T: with --as-published (the solver runs 1 / gamma)"
        )
    return [float(b) for b in np.atleast_1d(BETAS if beta is None else beta)]


MAX_ROWS = 10**7  # rows of one published table (the notebook's: 39,784 at beta 5)


def plan(beta=None, as_published: bool = False, points: int = POINTS, maxtime=None, seed: int = SEED) -> Plan:
    """The run's size (``peers._progress.Plan``): per beta the published table's rows after the first (int(T /
    dt) - 1 steps; memory: the tables, kept for ``write``, one copy, and twice torch's conv1d column buffer, M (M +
    1) float64 a step, measured; more than ``MAX_ROWS`` refused naming --maxtime), or the density solver's
    ``STEPS`` (memory: its complex moments and temporaries)."""
    betas, n_points = _betas(beta, maxtime, as_published), _points(points)
    top = max(betas)
    if not as_published:
        memory = 3 * 16 * n_points * (2 * MODES + 1)

        def trial(n: int) -> None:
            measure(top, n_points, seed=seed, steps=n)

        return Plan((STEPS,) * len(betas), trial, memory, ("--points", n_points))
    dt = COURANT * 2 * math.pi / (n_points - 1)  # torch.linspace's step, as ``start`` makes the grid
    rows = [int(horizon(b, maxtime) / dt) for b in betas]
    if max(rows) > MAX_ROWS:
        raise ConfigError("--maxtime", maxtime, f"at most {MAX_ROWS:.0e} rows of dt = {dt:.3g} (0.02 dx)")
    if min(rows) < 2:
        raise ConfigError("--maxtime", maxtime, f"at least two rows of dt = {dt:.3g} (0.02 dx)")
    m = n_points - 1
    memory = 8 * m * (sum(rows) + max(rows)) + 2 * 8 * m * (m + 1)  # + conv1d's column buffer, 8 M (M + 1) a step

    def published_rows(n: int) -> None:  # n steps: n + 1 rows
        published(top, n_points, (n + 1.5) * dt, seed)

    return Plan(tuple(r - 1 for r in rows), published_rows, memory, ("--points", n_points))


def write_tables(result: dict, folder: Path) -> list[Path]:
    """The published run's tables, ``U_beta{beta}.npy`` (the notebook's ``U``, steps x points)."""
    paths = []
    for r in result["runs"]:
        if "U" in r:
            buffer = io.BytesIO()
            np.save(buffer, r["U"])
            paths.append(atomic_write_bytes(folder / f"U_beta{r['beta']:g}.npy", buffer.getvalue()))
    return paths


def compare(result: dict, path: Path) -> dict:
    """Cells of the notebook's saved ``U`` (after its cell, ``np.save(path, results.cpu().numpy())``) equal to the
    published run of the same shape within ``EQUAL``, and the largest difference; block by block (its default table
    is 3 GB)."""
    from . import cells
    from ._files import load_array

    if not result["as_published"]:
        raise ConfigError("compare", str(path), "the notebook's U is its published scheme: add --as-published")
    theirs = load_array(path, "the notebook's U saved by np.save", mmap_mode="r")
    runs = [r for r in result["runs"] if r["U"].shape == theirs.shape]
    if len(runs) != 1:
        shapes = [r["U"].shape for r in result["runs"]]
        raise ConfigError("compare", str(path), f"a U of shape one of {shapes} (its {theirs.shape}); give one --beta")
    ours = runs[0]["U"]
    blocks = [cells(ours[s : s + 1024], theirs[s : s + 1024], EQUAL) for s in range(0, len(ours), 1024)]
    equal, total = sum(b["equal"] for b in blocks), sum(b["total"] for b in blocks)
    return {"equal": equal, "total": total, "max_diff": max(b["max_diff"] for b in blocks), "beta": runs[0]["beta"]}
