"""Propagation of chaos against an independently computed density (THEORY sections 4-5; docs/spde.md section 9).

The i.i.d. particle clouds are driven by the particles' own step (``DensitySolver.map_points``: the field's
Brownian coefficients z of each step, the clouds' empirical attention); the density they are compared with is the
finite-volume / Wong-Zakai scheme of ``chaos_scheme`` on the **same z**, which shares neither the field's code
nor the step with them. Its wrong models are the same scheme with the noise covariance x (1 + s), s in
``_power.SIGNED``.

Paired test per seed (``runs`` noise paths, one i.i.d. cloud of N points each, at the largest N): D_s =
sup_t W_2^2(cloud, wrong density) - sup_t W_2^2(cloud, right density) over the paths; caught when mean D_s >
``SIGMAS`` s.e. (``chaos_power.paired``). The catch rate is counted over K independent seeds; the right model's
false alarm on a seed: some wrong density fits the cloud significantly better, mean D_s < -SIGMAS s.e. (the
right model rejected in favour of a wrong one). THEORY section 5's proposition is stated for i.i.d. starts and
W_2: that is all this check compares (``within_proposition``); it runs one N, so it fits no rate and is not
compared with r_d (``chaos.w2_check`` does that). ``scheme_gap``: with ``spectral``, the same paired statistic
for the spectral solver's density (the particles' step pushed forward) against the independent one: what the
particles' time step adds, seen by the same test.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...core._rng import Streams, derive_seeds
from ...spde._initial import von_mises_fisher
from ...spde._solver import DensitySolver
from .._power import QUICK, REPORT, SIGNED, Plan, counted
from .._record import SIGMAS
from .chaos import SCALE, _angles, _periodic, _solver, default_levels, density_quantile, w2_circle
from .chaos_power import paired
from .chaos_scheme import FiniteVolume, circle_spectrum

CHECK = "propagation_of_chaos_independent_density"
QUANTITY = "the independent density's noise covariance (particles on the solver's step)"
STEPS = 20  # the report's step (chaos._solver); ``fine`` runs use more


def drive(solver: DensitySolver, theta0: np.ndarray, seed: int, every: int) -> tuple[np.ndarray, np.ndarray]:
    """The clouds with initial angles ``theta0`` ``(runs, N)`` under the particles' step of ``solver`` (z per
    step from ``Streams(seed)``, exactly as ``solver.run`` draws them): angles ``(S, runs, N)`` at steps 0,
    every, ..., and z ``(steps, runs, R)``."""
    runs = theta0.shape[0]
    source = Streams(seed, (runs,))
    t = torch.from_numpy(np.ascontiguousarray(theta0))
    x = torch.stack([t.cos(), t.sin()], -1)  # (runs, N, 2)
    pts = solver.grid.to(x.dtype)
    angles, zs = [_angles(x)], []
    for k in range(solver.steps):
        z = source.randn(solver.field.normal_shape(pts), pts.dtype)  # (runs, R, 1)
        x = solver.map_points(x, solver.particle_attention, z, source)
        zs.append(z[..., 0].numpy())
        if (k + 1) % every == 0:
            angles.append(_angles(x))
    return np.stack(angles), np.stack(zs)


def scheme(covariance: float = 1.0, steps: int = STEPS) -> FiniteVolume:
    """The independent scheme of ``chaos._solver``'s equation (ReLU noise sU = sW = 0.5 cut at degree 3, times
    ``SCALE``; softmax beta = 2; T = 0.5) with the covariance x ``covariance``."""
    eigen = circle_spectrum("relu", 0.5, 0.5, 3, SCALE * math.sqrt(covariance))
    return FiniteVolume(eigen, 2.0, steps, 0.5)


def sup_w2(fv: FiniteVolume, rho: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """sup over the saved times of W_2^2(cloud, density), densities ``(S, runs, J)``, clouds ``(S, runs, N)``
    -> ``(runs,)``."""
    n = angles.shape[-1]
    size = default_levels(n)
    t = (np.arange(size) + 0.5) / size
    out = np.zeros(angles.shape[:2])
    for s in range(angles.shape[0]):
        for r in range(angles.shape[1]):
            g = _periodic(fv.quantile(rho[s, r], t), t)
            out[s, r] = w2_circle(angles[s, r], np.zeros(1), size, g)
    return out.max(0)


def independent_seed(n: int, runs: int, seed: int, steps: int = STEPS, spectral: bool = False) -> dict:
    """One seed: ``runs`` paths, an i.i.d. cloud of ``n`` points each from the von Mises-Fisher law (kappa 1),
    driven with ``steps`` steps; sup_t W_2^2 of the cloud to the independent density at covariance x 1 and
    x (1 + s) (``right``, ``wrong`` {s: (runs,)}); with ``spectral`` also to the spectral solver's density
    on the same z (``spectral`` (runs,))."""
    right = _solver()
    solver = DensitySolver(right.field, right.basis.degree, steps, right.horizon, beta=2.0)
    c0 = von_mises_fisher(solver.basis, 1.0).numpy()
    theta0 = density_quantile(c0, np.random.default_rng(seed).random(runs * n)).reshape(runs, n)
    every = max(1, steps // 4)
    angles, z = drive(solver, theta0, seed, every)
    out: dict = {"wrong": {}}
    for cov in (1.0, *(1 + s for s in SIGNED)):
        fv = scheme(cov, steps)
        rho = fv.run(np.broadcast_to(fv.initial(1.0), (runs, fv.cells)).copy(), z, every)
        w = sup_w2(fv, rho, angles)
        if cov == 1.0:
            out["right"] = w
        else:
            out["wrong"][round(cov - 1, 6)] = w
    if spectral:
        c = solver.run(torch.from_numpy(c0).expand(runs, -1).clone(), seed=seed, saveat=every).x.numpy()
        size = default_levels(n)
        t = (np.arange(size) + 0.5) / size
        ws = [[w2_circle(angles[s, r], c[s, r], size, _periodic(density_quantile(c[s, r], t), t))
               for r in range(runs)] for s in range(c.shape[0])]  # fmt: skip
        out["spectral"] = np.asarray(ws).max(0)
    return out


def _se(a: np.ndarray) -> float:
    return float(a.std(ddof=1) / math.sqrt(a.size))


def _z(right: np.ndarray, other: np.ndarray) -> float:
    return paired({"sup_w2_last_paths": right}, {"sup_w2_last_paths": other})["z"]


def independent_check(
    quick: bool = False, seed: int = 0, runs: int = 32, plan: Plan | None = None, steps: int = STEPS
) -> dict:
    """The record of the module docstring at N = 10^4 (quick: 10^3), ``runs`` paths per seed, K = ``plan.seeds``
    independent seeds (REPORT 8, QUICK 2), ``steps`` steps; the spectral solver's gap on every seed."""
    plan = plan or (QUICK if quick else REPORT)
    n = 1000 if quick else 10000
    seeds = derive_seeds(seed, plan.seeds)
    found = {k: independent_seed(n, runs, k, steps, spectral=True) for k in seeds}
    return independent_record(found, n, runs, steps)


def independent_record(found: dict[int, dict], n: int, runs: int, steps: int) -> dict:
    """The record from ``independent_seed``'s results on K seeds (``found``: seed -> result)."""
    seeds = list(found)
    z = {s: [_z(found[k]["right"], found[k]["wrong"][s]) for k in seeds] for s in SIGNED}

    def caught(size: float, k: int) -> bool:
        i = seeds.index(k)
        if size == 0:
            return min(z[s][i] for s in SIGNED) < -SIGMAS
        return z[size][i] > SIGMAS

    fields = counted(caught, seeds).fields()
    gap = [_z(found[k]["right"], found[k]["spectral"]) for k in seeds]
    record = {"check": CHECK, "particles": "iid", "N": n, "paths": runs, "steps": steps, "quantity": QUANTITY}
    record |= fields | {"sign_only": False, "within_proposition": True, "compared_with_r_d": False}  # one N
    record |= {"paired_z_per_seed": {f"{s:g}": [round(v, 2) for v in z[s]] for s in SIGNED}}
    record |= {"scheme_gap_z_per_seed": [round(v, 2) for v in gap]}
    for name in ("right", "spectral"):  # pooled over the K x runs paths: mean and s.e.
        pooled = np.concatenate([found[k][name] for k in seeds])
        record |= {f"{name}_sup_w2": float(pooled.mean()), f"{name}_sup_w2_se": _se(pooled)}
    record |= {"holds": fields["size_80"] is not None and fields["false_alarm_rate"] == 0}
    if fields["size_80"] is None:
        said = ", ".join(f"{a}: {b:.2g}" for a, b in fields["catch_rate"].items())
        record["reason"] = f"no covariance error up to 20 % caught with P >= 0.8 ({said})"
    return record
