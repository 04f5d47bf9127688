"""lost-in-the-middle (arXiv 2605.09213; borjanG/2026-lost-in-the-middle): the recency threshold t_crit of the
retrieval profile of causal ALiBi attention on the circle (BEYOND section 7; ``theory._retrieval``).

The peer's ``generate_u_shape_numerology_data.py`` writes t_crit(beta) at beta = 0.1 j, j = 1..48 (lambda = 1,
M = 8, n_max = 20) as ``beta t_crit`` rows (6 and 12 decimals) and prints it at beta = 1, 2, 3. Its time is the
paper's kernel unit (weights normalized over positions only); sdeformer's softmax attention is slower by
beta I_0(beta) (``retrieval.mode_rates``), so both are reported. Its lambda is the ALiBi bias per unit of
rescaled position, N times sdeformer's per-token ``alibi`` slope (``retrieval.paper_lambda``).

``part="particles"``: its ``generate_alibi_particle_circle_dynamics.py``: N = 64 angles from its "clusters" start
(seed 17: four clusters at 0.1 pi .. 1.9 pi, spread 0.075), weights over positions only, strictly causal, token 0
fixed (``attention._alibi.PositionalALiBiAttention``), beta = 1, lambda = 1, T = 10, dt = 0.0025; the peer steps
RK4 in the angles, sdeformer the noise-free limit ODE by the classical RK4 step (``dynamics._sde.RungeKutta4``,
the default: fourth order, as the peer's), or the angle-Euler (geodesic) step (``scheme="geodesic"``,
``dynamics._sde.GeodesicEuler``; ``scheme="projected"``: LN(x + dt v)). Statistic: the angles in [0, 2 pi) at the
peer's snapshot times t = 0.2 k, k = 0..50 (``(51, N)``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
from scipy.special import ive

from ..attention._alibi import PositionalALiBiAttention
from ..core._errors import ConfigError
from ..dynamics._loop import SaveAt
from ..dynamics._sde import LimitSDE, make_solver
from ..io._atomic import atomic_write_bytes
from ..theory._retrieval import threshold
from . import cells
from ._files import load_array
from ._progress import Plan, step as count_step

CURVE = [0.1 * j for j in range(1, 49)]  # the peer's threshold curve grid
FILE = "u_shape_numerology_lambda1_tcrit.dat"
PARTICLES = {"tokens": 64, "beta": 1.0, "lam": 1.0, "horizon": 10.0, "dt": 0.0025, "seed": 17}
SNAPSHOTS = 51  # t = 0.2 k


def clusters_start(tokens: int, seed: int) -> np.ndarray:
    """The peer's "clusters" start ``(N,)``: four groups of consecutive tokens at 0.1 pi .. 1.9 pi, each angle
    plus N(0, 0.075^2) from numpy's ``default_rng(seed)``, taken mod 2 pi."""
    labels = np.repeat(np.arange(4), math.ceil(tokens / 4))[:tokens]
    centers = np.linspace(0.1, 1.9, 4) * math.pi
    return np.mod(centers[labels] + np.random.default_rng(seed).normal(0.0, 0.075, size=tokens), 2 * math.pi)


STEPS = round(PARTICLES["horizon"] / PARTICLES["dt"])  # 4000


def particles(beta: float = 1.0, scheme: str = "rk4", steps: int | None = None) -> dict:
    """The peer's particle run; the angles at its snapshot times ``(51, N)`` and the final ones. ``steps``: only
    that many steps of its dt (the time estimate's calibrated runs)."""
    p = PARTICLES
    theta = torch.tensor(clusters_start(p["tokens"], p["seed"]))
    x0 = torch.stack([theta.cos(), theta.sin()], -1)  # (N, 2)
    horizon = p["horizon"] if steps is None else steps * p["dt"]
    steps = STEPS if steps is None else steps
    sde = LimitSDE(None, PositionalALiBiAttention(beta, p["lam"]))
    solver = make_solver(sde, steps, horizon, scheme)  # rk4, geodesic (angle-Euler) or projected
    every = max(1, steps // (SNAPSHOTS - 1))
    x = solver.run(x0, saveat=SaveAt(every=every), progress=count_step).x  # (51, N, 2)
    angles = torch.remainder(torch.atan2(x[..., 1], x[..., 0]), 2 * math.pi)
    return {"times": [0.2 * k for k in range(SNAPSHOTS)], "angles": angles.tolist(), "scheme": scheme}


def run(
    beta=(1.0, 2.0, 3.0),
    lam: float = 1.0,
    m: float = 8.0,
    n_max: int = 20,
    tokens: int = 64,
    part: str = "threshold",
    scheme: str = "rk4",
) -> dict:
    """t_crit at each ``beta`` in the paper's time and in sdeformer's softmax time, the peer's curve, and the
    ALiBi slope per token (sdeformer's ``alibi``) of the peer's ``lam`` at ``tokens`` positions; ``part=
    "particles"``: the particle run (``particles``, its beta: the first of ``beta``, else 1)."""
    if _part(part, scheme) == "particles":
        first = float(np.atleast_1d(beta)[0]) if beta is not None else PARTICLES["beta"]
        return {"peer": "litm", "part": part, "beta": first, **particles(first, scheme)}
    betas = [float(b) for b in np.atleast_1d(beta)]
    rows = [
        {
            "beta": b,
            "t_crit_paper": threshold(b, lam, m, n_max, kernel="paper"),
            "t_crit_softmax": threshold(b, lam, m, n_max, kernel="softmax"),
            "time_ratio": b * float(ive(0, b)) * float(np.exp(b)),
        }
        for b in betas
    ]
    curve = [[b, threshold(b, lam, m, n_max, kernel="paper")] for b in CURVE]
    return {
        "peer": "litm",
        "settings": {"lam": lam, "M": m, "n_max": n_max, "tokens": tokens},
        "t_crit": rows,
        "curve": curve,
        "alibi_slope_per_token": lam / tokens,
    }


def _part(part: str, scheme: str) -> str:
    if part not in ("threshold", "particles"):
        raise ConfigError("part", part, "threshold or particles")
    if part == "particles" and scheme not in ("geodesic", "rk4", "projected"):
        raise ConfigError("scheme", scheme, "geodesic, rk4 or projected")
    return part


def plan(beta=None, part: str = "threshold", scheme: str = "rk4", **_options) -> Plan:
    """The run's size (``peers._progress.Plan``): the particles' 4000 steps (memory: the 51 saved states and the
    solver's stages, float64), or the threshold's t_crit root finds (each beta's two and the curve's 48)."""
    if _part(part, scheme) == "particles":
        first = float(np.atleast_1d(beta)[0]) if beta is not None else PARTICLES["beta"]
        memory = 8 * 2 * PARTICLES["tokens"] * (SNAPSHOTS + 8) + 8 * PARTICLES["tokens"] ** 2  # + the weights
        return Plan((STEPS,), lambda n: particles(first, scheme, steps=n), memory, ("part", part))
    betas = [float(b) for b in np.atleast_1d((1.0, 2.0, 3.0) if beta is None else beta)]
    top = max(betas)
    roots = 2 * len(betas) + len(CURVE)
    return Plan((roots,), lambda n: [threshold(top, 1.0, 8.0, 20) for _ in range(n)], unit="t_crit root finds")


def write(result: dict, folder: Path) -> list[Path]:
    """The peer's ``u_shape_numerology_lambda1_tcrit.dat`` layout; particles: ``angles.npy`` ``(51, N)``."""
    if result.get("part") == "particles":
        return [atomic_write_bytes(folder / "angles.npy", _npy(np.asarray(result["angles"])))]
    path = folder / FILE
    path.write_text("beta t_crit\n" + "".join(f"{b:.6f} {t:.12f}\n" for b, t in result["curve"]), encoding="ascii")
    return [path]


def _npy(a: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, a)
    return buffer.getvalue()


def _history(path: Path) -> np.ndarray:
    """The peer's angle history from its script's .npz (key ``theta``) or a saved .npy; ConfigError otherwise."""
    data = load_array(path, "the peer's .npz (theta) or a .npy of its history")
    if isinstance(data, np.lib.npyio.NpzFile):
        if "theta" not in data.files:
            raise ConfigError("compare", str(path), "the peer's .npz with its history 'theta'")
        data = data["theta"]
    n = PARTICLES["tokens"]
    if data.ndim != 2 or data.shape[1] != n or (data.shape[0] - 1) % (SNAPSHOTS - 1):  # transposed, or not its run
        raise ConfigError("compare", str(path), f"a history (steps + 1, {n}), steps a multiple of {SNAPSHOTS - 1}")
    return data


PARTICLE_TOL = 1e-4  # rad: the angle-Euler step against the peer's RK4 at its dt (first order, 3e-6 measured)


def compare(result: dict, path: Path) -> dict:
    """Cells (beta, t_crit per row) equal to the peer's printed digits (half a unit in the 12th decimal);
    particles: the peer's ``history`` ``(steps + 1, N)`` (the ``theta`` of the .npz its script writes,
    ``alibi_particle_circle_clusters_dynamics.npz``, or a .npy of it) at the snapshot times, angles equal within
    ``PARTICLE_TOL`` on the circle."""
    if result.get("part") == "particles":
        history = _history(path)
        every = (history.shape[0] - 1) // (SNAPSHOTS - 1)
        theirs = history[::every][:SNAPSHOTS]
        gap = np.abs(np.angle(np.exp(1j * (np.asarray(result["angles"]) - theirs))))  # on the circle
        return cells(gap, np.zeros_like(gap), PARTICLE_TOL)
    lines = path.read_text(encoding="ascii").split("\n")
    if not lines or lines[0].split() != ["beta", "t_crit"]:
        raise ConfigError("compare", str(path), "the peer's 'beta t_crit' table")
    try:
        theirs = [[float(v) for v in line.split()] for line in lines[1:] if line.strip()]
    except ValueError as exc:
        raise ConfigError("compare", str(path), f"the peer's 'beta t_crit' table ({exc})") from None
    if any(len(row) != 2 for row in theirs):
        raise ConfigError("compare", str(path), "the peer's 'beta t_crit' table: two numbers a row")
    return cells(result["curve"], theirs, 5e-13 + 1e-15)
