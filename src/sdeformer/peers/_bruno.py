"""Bruno, Pasqualotto, Agazzi (ICLR 2025; gbruno16/transformers-metastability, dafd7da): the Fourier modes of
the circle dynamics (BEYOND section 10).

The notebook's ``ParticlesSimulation`` moves N angles by Euler steps of theta_i' = (1/N) sum_j e^{beta cos(theta_j
- theta_i)} sin(theta_j - theta_i): the unnormalized attention with V = I on the circle, which is sdeformer's
``UnnormalizedAttention(beta)`` in the noise-free limit (``LimitSDE(None, ...)``), stepped as the notebook steps,
by Euler in the angle (``GeodesicEuler``). Linearized about the uniform state, Fourier mode k of the density grows at

    gamma_k = k^2 I_k(beta) / beta,

so the mode with the largest gamma_k sets the number of clusters first seen. The notebook's ``g_coeff`` divides
by pi beta (pi times too small for its own particles): ``as_published`` reports that. ``run`` measures each
mode's growth rate from the particles (the slope of log |mu_k(t)| while |mu_k| < ``LINEAR``, mu_k = (1/N) sum
e^{-i k theta}) and the dominant mode, beside gamma_k; ``run(part="pde")`` the notebook's PDE (``_bruno_pde``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
from scipy.special import ive

from ..attention._variants import UnnormalizedAttention
from ..core._errors import ConfigError
from ..core._validate import positive_int
from ..dynamics._sde import GeodesicEuler, LimitSDE
from ..io._atomic import atomic_write_text
from ..observables import exponential_rate
from ._bruno_pde import compare as compare_pde, write_tables
from ._progress import Plan, step as count_step

BETAS = (1.0, 2.0, 5.0, 10.0, 20.0)
LINEAR = 0.1  # |mu_k| below this: the linear regime the rate is fitted in
STEPS = 100  # Euler steps of a particle run
RESOLVED = 0.5  # modes with gamma_k >= this times the largest grow visibly above the sampling noise 1 / sqrt(N)


def rates(beta: float, modes: int = 10, as_published: bool = False) -> np.ndarray:
    """gamma_k = k^2 I_k(beta) / beta, k = 1..modes ``(modes,)`` (the notebook's: divided by pi)."""
    k = np.arange(1, positive_int("modes", modes) + 1)
    out = k**2 * ive(k, beta) * math.exp(beta) / beta
    return out / math.pi if as_published else out


def measure(beta: float, tokens: int = 1000, modes: int = 10, seed: int = 0, steps: int = STEPS) -> np.ndarray:
    """Each resolved mode's growth rate ``(modes,)`` (nan for the others: gamma_k < ``RESOLVED`` max gamma, lost
    in the sampling noise) from ``tokens`` particles at uniform i.i.d. angles (``seed``), run for 4 / max gamma_k
    (the dominant mode grows by e^4) in ``steps`` steps. A mode that is the product of two growing ones (k = i + j)
    grows at gamma_i + gamma_j once they are large, faster than its own gamma_k: read the dominant modes."""
    gamma = rates(beta, modes)
    horizon = 4.0 / float(gamma.max())
    theta = torch.rand(tokens, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2 * math.pi
    x0 = torch.stack([theta.cos(), theta.sin()], -1)  # (N, 2)
    run = GeodesicEuler(LimitSDE(None, UnnormalizedAttention(beta)), steps, horizon).run(
        x0, progress=count_step
    )  # angle-Euler
    angles = torch.atan2(run.x[..., 1], run.x[..., 0])  # (S, N)
    k = torch.arange(1, modes + 1, dtype=torch.float64)
    mu = torch.exp(-1j * k[None, :, None] * angles[:, None, :]).mean(-1).abs().numpy()  # (S, modes)
    t = run.t.numpy()
    out = []
    for m in range(modes):
        linear = np.flatnonzero(mu[:, m] >= LINEAR)
        stop = int(linear[0]) if linear.size else mu.shape[0]
        resolved = gamma[m] >= RESOLVED * gamma.max() and stop >= 3
        out.append(exponential_rate(t[:stop], mu[:stop, m]) if resolved else math.nan)
    return np.array(out)


def run(
    beta=None,
    tokens: int = 1000,
    modes: int = 10,
    as_published: bool = False,
    seed: int = 0,
    part: str = "particles",
    **pde_options,
) -> dict:
    """Per beta (default 1, 2, 5, 10, 20): gamma_k, the measured rates, the dominant mode (largest gamma_k) and
    its measured rate over gamma_k (published gamma: over gamma_k / pi). ``part="pde"``: the notebook's PDE
    (``peers._bruno_pde``; ``points``, ``maxtime``)."""
    if part == "pde":
        from ._bruno_pde import run as pde

        points = pde_options.pop("points", None)
        return pde(beta, as_published, **({"n_points": points} if points is not None else {}), seed=seed, **pde_options)
    if part != "particles":
        raise ConfigError("part", part, "particles or pde")
    if pde_options:
        raise ConfigError(next(iter(pde_options)), "given", "an option of --part pde")
    rows = []
    for b in np.atleast_1d(BETAS if beta is None else beta):
        theory, measured = rates(float(b), modes, as_published), measure(float(b), tokens, modes, seed)
        rows.append(
            {
                "beta": float(b),
                "gamma": theory.tolist(),
                "measured": measured.tolist(),
                "dominant": int(np.argmax(theory)) + 1,
                "dominant_rate_ratio": float(measured[np.argmax(theory)] / theory.max()),
            }
        )
    return {"peer": "bruno", "part": "particles", "as_published": as_published, "tokens": tokens, "runs": rows}


def plan(beta=None, tokens: int = 1000, modes: int = 10, seed: int = 0, part: str = "particles", **options) -> Plan:
    """The run's size (``peers._progress.Plan``): per beta ``STEPS`` steps of ``tokens`` particles (memory: the
    saved states, the modes' complex (S, modes, N) exponentials and three temporaries, and the (N, N) weights of
    every step: freed, but the allocator may keep them, 0.02-0.6 GB measured for 100 steps at N = 1000), or the
    PDE's (``_bruno_pde.plan``)."""
    if part == "pde":
        from ._bruno_pde import plan as pde

        return pde(beta, seed=seed, **options)
    if part != "particles":
        raise ConfigError("part", part, "particles or pde")
    if set(options) - {"as_published"}:
        raise ConfigError(next(iter(set(options) - {"as_published"})), "given", "an option of --part pde")
    betas = [float(b) for b in np.atleast_1d(BETAS if beta is None else beta)]
    states = STEPS + 1
    memory = 8 * states * tokens * 2 + 3 * 16 * states * modes * tokens + 8 * tokens * tokens * states
    top = max(betas)

    def trial(n: int) -> None:
        measure(top, tokens, modes, seed, steps=n)

    return Plan((STEPS,) * len(betas), trial, memory, ("beta", betas))


def write(result: dict, folder: Path) -> list[Path]:
    """``rates.csv``: beta, k, gamma_k, measured rate (the PDE: ``pde_rates.csv``, the rates of the cos and sin
    parts, and with ``--as-published`` the notebook's tables ``U_beta{beta}.npy``)."""
    pde = result.get("part") == "pde"
    tables = write_tables(result, folder) if pde else []
    path, columns = (folder / "pde_rates.csv", ("cos", "sin")) if pde else (folder / "rates.csv", ("measured",))
    lines = [",".join(("beta", "k", "gamma", *columns))]
    for r in result["runs"]:
        for k, values in enumerate(zip(r["gamma"], *(r[c] for c in columns), strict=True), 1):
            lines.append(f"{r['beta']:g},{k}," + ",".join(f"{v:.10g}" for v in values))
    return [atomic_write_text(path, "\n".join(lines) + "\n"), *tables]


def compare(result: dict, path: Path) -> dict:
    """The PDE (``--as-published``): the cells of the notebook's saved ``U`` (``_bruno_pde.compare``). The particles:
    the notebook writes no table (its rates are recorded in the tests)."""
    if result.get("part") == "pde":
        return compare_pde(result, path)
    raise ConfigError(
        "compare", str(path), "bruno's particle cells write no table; its rates are recorded in the tests"
    )
