"""Propagation of chaos in W_2 on the 2-sphere (THEORY section 5: ``E sup_t W_2^2(mu^N_t, mu_t) <= C_T r_d(N)``,
ambient d = 3 < 4 so ``r_d(N) = N^-1/2``; docs/spde.md section 9).

The sphere has no quantile form, so W_2 (geodesic cost ``arccos(<x, y>)^2``) is computed by POT's exact solver
(``ot.emd2``, network simplex; an optional dependency, the ``theory`` extra) between the particles (mass 1/N
each) and the density as K weighted atoms: the points y_j of a spherical Fibonacci lattice (cells of equal area
4 pi / K) with masses ``rho(y_j) 4 pi / K`` (the few negative values the cut at degree L leaves set to 0, then
renormalised). That replaces the density by a discrete measure; its own distance to the density is the
approximation error (a quantisation error ~ 1 / K), estimated by ``grid_error``: W_2^2 between the atoms of K
and 4 K points. The
particles: i.i.d. draws of the von Mises-Fisher start and deterministic quasi-Monte Carlo points (a spherical
Fibonacci lattice pushed through the law's inverse CDF), driven with the density by one set of Brownian
coefficients, as on the circle (``chaos``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from ...spde._fields import mlp_noise
from ...spde._initial import von_mises_fisher
from ...spde._solver import DensitySolver
from .._power import SIGNED as WRONG
from .chaos import Chaos, tracked_run
from .chaos_power import falls as _falls, power_records

GOLDEN = (1 + math.sqrt(5)) / 2
MAX_ITER = 10**7  # network simplex iterations (the default 1e5 stops short at a few thousand atoms)


def _ot():
    try:
        import ot
    except ImportError as err:  # pragma: no cover - the optional extra
        raise ImportError("W_2 on the sphere needs POT: pip install 'sdeformer[theory]'") from err
    return ot


def density_atoms(solver: DensitySolver, c: torch.Tensor, atoms: int) -> tuple[np.ndarray, np.ndarray]:
    """The density of coefficients ``c`` ``(..., P)`` as ``atoms`` atoms: the Fibonacci lattice ``(K, 3)`` and
    masses ``(..., K)`` proportional to rho there (negatives set to 0, each row summing to 1)."""
    points = torch.from_numpy(qmc_vmf(atoms, 0.0))  # one basis table for every density of c
    rho = solver.basis.synthesize(c, points, solver.basis.prepare(points)).clamp(min=0.0).numpy()
    return points.numpy(), rho / rho.sum(-1, keepdims=True)


def geodesic_cost(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Squared great-circle distances ``(n, m)`` between unit vectors ``x`` ``(n, 3)`` and ``y`` ``(m, 3)``."""
    return np.arccos(np.clip(x @ y.T, -1.0, 1.0)) ** 2


def w2_sphere(x: np.ndarray, y: np.ndarray, a: np.ndarray | None = None, b: np.ndarray | None = None) -> float:
    """Exact W_2^2 with the geodesic cost between the discrete measures ``sum a_i delta_{x_i}`` and
    ``sum b_j delta_{y_j}`` (uniform masses when not given)."""
    a = np.full(x.shape[0], 1.0 / x.shape[0]) if a is None else a
    b = np.full(y.shape[0], 1.0 / y.shape[0]) if b is None else b
    return _emd2(geodesic_cost(x, y), b / b.sum() * a.sum(), a)


def _emd2(cost: np.ndarray, b: np.ndarray, a: np.ndarray | None = None) -> float:
    """POT's exact transport cost for the cost matrix ``(n, m)`` between masses ``a`` (uniform when not given)
    and ``b``."""
    a = np.full(cost.shape[0], 1.0 / cost.shape[0]) if a is None else a
    return float(np.asarray(_ot().emd2(a, b, cost, numItermax=MAX_ITER)))


def vmf_points(u: np.ndarray, phi: np.ndarray, concentration: float) -> np.ndarray:
    """Points of the von Mises-Fisher law about e_1 from uniforms ``u`` (inverse CDF of ``<e_1, x>``) and
    azimuths ``phi`` (same shape): ``(..., 3)``."""
    k = concentration
    w = 2 * u - 1 if k == 0 else 1 + np.log(math.exp(-2 * k) + u * -math.expm1(-2 * k)) / k
    s = np.sqrt(np.clip(1 - w * w, 0.0, None))
    return np.stack([w, s * np.cos(phi), s * np.sin(phi)], -1)


def qmc_vmf(n: int, concentration: float) -> np.ndarray:
    """The deterministic quasi-Monte Carlo points of the law: a spherical Fibonacci lattice (levels
    (k + 1/2) / n, azimuths 2 pi k / golden ratio) through ``vmf_points``, ``(n, 3)``."""
    k = np.arange(n)
    return vmf_points((k + 0.5) / n, 2 * math.pi * np.mod(k / GOLDEN, 1.0), concentration)


def chaos_w2_sphere(solver: DensitySolver, sizes: Sequence[int], runs: int, **options: Any) -> Chaos:
    """i.i.d. and QMC clouds of every size from the von Mises-Fisher law, driven with the density by ``solver``
    over ``runs`` noise paths (one batch); exact W_2^2 against the density's grid measure at ``saves`` + 1
    equally spaced times; the density as ``atoms`` x the largest N atoms (``density_atoms``). ``options``: those
    of ``chaos_w2_sphere_models`` (seed, saves, concentration, atoms)."""
    return chaos_w2_sphere_models(solver, (), sizes, runs, **options)[0]


def driven_clouds(
    solver: DensitySolver,
    wrong: Sequence[DensitySolver],
    sizes: Sequence[int],
    runs: int,
    *,
    seed: int = 0,
    saves: int = 2,
    concentration: float = 1.0,
):
    """i.i.d. and QMC clouds of every size from the von Mises-Fisher law (i.i.d. and QMC alternating, ``sizes``
    order), driven with the density by ``solver`` over ``runs`` noise paths (one batch, saved at ``saves`` + 1
    equally spaced times), and the densities of ``wrong`` re-run on the same Brownian coefficients: (trajectory,
    the largest tail share per path, [right density, *wrong densities] ``(S, runs, P)`` each)."""
    if solver.dim != 3:
        raise ValueError("W_2 on the sphere: the density solver must be on the 2-sphere (dim 3)")
    c0 = von_mises_fisher(solver.basis, concentration)
    rng = np.random.default_rng(seed)
    clouds: list[torch.Tensor] = []
    for n in sizes:
        iid = vmf_points(rng.random((runs, n)), 2 * math.pi * rng.random((runs, n)), concentration)
        qmc = np.broadcast_to(qmc_vmf(n, concentration), (runs, n, 3))
        clouds += [torch.from_numpy(np.ascontiguousarray(iid)), torch.from_numpy(np.ascontiguousarray(qmc))]
    every = max(1, solver.steps // saves)
    batch = c0.expand(runs, -1).clone()
    traj, tail = tracked_run(solver, batch, seed, every, clouds)
    return traj, tail, [traj.x[0], *(w.run(batch, seed=seed, saveat=every).x for w in wrong)]


def chaos_w2_sphere_models(
    solver: DensitySolver,
    wrong: Sequence[DensitySolver],
    sizes: Sequence[int],
    runs: int,
    *,
    atoms: int = 4,
    qmc_upto: int | None = None,
    **options,
) -> tuple[Chaos, ...]:
    """``chaos_w2_sphere`` for the right density and, against the same clouds, each density of ``wrong`` (another
    equation, e.g. another noise covariance) run on the same Brownian coefficients (same seed): one ``Chaos``
    each. Only the densities are re-run; the cost matrix of a cloud against the atoms is computed once for all
    models, and a transport whose masses equal the right model's (the common start) is not solved again.
    ``qmc_upto``: QMC clouds larger than this are not transported (NaN: the atoms do not resolve them,
    ``QMC_ATOMS``). ``options``: those of ``driven_clouds`` (seed, saves, concentration)."""
    traj, tail, densities = driven_clouds(solver, wrong, sizes, runs, **options)
    masses = [density_atoms(solver, c, atoms * max(sizes)) for c in densities]  # (K, 3), (S, runs, K) each
    points = masses[0][0]
    w2 = np.zeros((len(masses), 2, len(sizes), masses[0][1].shape[0], runs))
    for j, cloud in enumerate(traj.x[1:]):
        if j % 2 and qmc_upto is not None and sizes[j // 2] > qmc_upto:
            w2[:, 1, j // 2] = np.nan
            continue
        for s in range(w2.shape[3]):
            for r in range(runs):
                cost = geodesic_cost(cloud[s, r].numpy(), points)
                for m, (_, mass) in enumerate(masses):
                    same = m > 0 and np.array_equal(mass[s, r], masses[0][1][s, r])
                    w2[m, j % 2, j // 2, s, r] = w2[0, j % 2, j // 2, s, r] if same else _emd2(cost, mass[s, r])
    return tuple(Chaos(tuple(int(n) for n in sizes), ("iid", "qmc"), traj.t.numpy(), w, dim=3, tail=tail) for w in w2)


def grid_error(solver: DensitySolver, c: torch.Tensor, atoms: int) -> float:
    """W_2^2 between the atoms of the density ``c`` ``(P,)`` on ``atoms`` and 4 x ``atoms`` points: the size of
    the approximation of the density by its atoms."""
    coarse, fine = (density_atoms(solver, c, k) for k in (atoms, 4 * atoms))
    return w2_sphere(coarse[0], fine[0], coarse[1], fine[1])


QMC_ATOMS = 12  # QMC clouds are judged where the density has at least this many atoms per particle (section 9)
DEGREE = 24  # the density's degree: every one of the 32 paths resolved at every step (at 16 one path is not)


def _solver(covariance: float = 1.0) -> DensitySolver:
    """softmax beta = 2, ReLU noise (sU = sW = 0.5, degree 2) at amplitude 0.3 (its covariance x ``covariance``),
    density degree ``DEGREE``, 20 steps to T = 0.3."""
    return DensitySolver(mlp_noise(3, "relu", 0.5, 0.5, modes=2, scale=0.3 * math.sqrt(covariance)), DEGREE, 20, 0.3,
                         beta=2.0)  # fmt: skip


def sphere_table(
    sizes: Sequence[int] = (100, 300, 1000), runs: int = 32, seed: int = 0, atoms: int = 4, wrong: Sequence[float] = ()
) -> dict:
    """The measurement of docs/spde.md section 9 on the sphere (``_solver``), von Mises-Fisher start (concentration
    1), W_2^2 at t = 0, T/2, T over ``runs`` noise paths: ``w2`` (the rows of ``Chaos.rows``, with their fitted
    ``slope``), ``slope`` per particle kind, ``grid_error`` (the atoms' quantisation error at the start for
    ``atoms`` N / 4 and ``atoms`` N points, N the largest size: about 1 / K) and ``wrong`` (relative size s ->
    the rows against the density with the noise covariance x (1 + s) on the same Brownian coefficients and
    clouds, ``chaos_w2_sphere_models``)."""
    solver = _solver()
    c0 = von_mises_fisher(solver.basis, 1.0)
    top = atoms * max(sizes) // 4
    errors = {top // 4: grid_error(solver, c0, top // 4), top: grid_error(solver, c0, top)}
    rows, wrong_rows = _measure(sizes, runs, seed, atoms, wrong)
    return {"w2": rows, "slope": {r["particles"]: r["slope"] for r in rows}, "grid_error": errors,
            "atoms": atoms * max(sizes), "wrong": wrong_rows}  # fmt: skip


def _measure(
    sizes: Sequence[int], runs: int, seed: int, atoms: int, wrong: Sequence[float]
) -> tuple[list[dict], dict[float, list[dict]]]:
    """``sphere_table``'s rows for the right density and for each covariance x (1 + s) of ``wrong``."""
    count = atoms * max(sizes)
    found = chaos_w2_sphere_models(_solver(), [_solver(1 + s) for s in wrong], sizes, runs, seed=seed, saves=2,
                                   atoms=atoms, qmc_upto=count // QMC_ATOMS)  # fmt: skip
    return _rows(found[0], count), {s: _rows(c, count) for s, c in zip(wrong, found[1:])}


def _rows(chaos: Chaos, atoms: int) -> list[dict]:
    """``Chaos.rows``: i.i.d. clouds at every size, QMC clouds at the sizes with ``QMC_ATOMS`` atoms per particle."""
    iid = replace(chaos, kinds=chaos.kinds[:1], w2=chaos.w2[:1])
    return [iid.rows()[0], chaos.upto(atoms // QMC_ATOMS).rows()[1]]


def sphere_check(quick: bool = False, seed: int = 0, runs: int = 32) -> dict:
    """The sphere's propagation of chaos in ``reproduce spde`` (``sphere_table`` at N = 100, 300, 1000 with 4000
    atoms; quick N = 50, 100 with 1200), judged as the circle's (``chaos_power.power_records``): per particle kind
    a record that holds when every path is resolved, for i.i.d. clouds the 95% intervals of the slopes of sup_t
    W_2^2 and of the part the dynamics adds lie below the slope of r_d(N), and the paired test at the largest N
    catches a wrong density (noise covariance x 0.8 .. 1.2, against the same clouds) with computed P >= 0.8,
    confirmed by one re-run on seed + 1. QMC clouds are judged at the sizes with ``QMC_ATOMS`` atoms per particle
    (their dynamics' part is small enough for the atoms' quantisation to raise it below that). Without POT (the
    ``theory`` extra) no record, and ``skipped`` says why."""
    try:
        _ot()
    except ImportError as err:  # the optional extra: the part runs without it and says what is missing
        return {"w2": [], "slope": {}, "skipped": str(err)}
    sizes = (50, 100) if quick else (100, 300, 1000)
    atoms = 12 if quick else 4
    table = sphere_table(sizes, runs, seed, atoms=atoms, wrong=WRONG)
    again = (seed + 1, lambda wrong: _measure(sizes, runs, seed + 1, atoms, wrong))  # the confirming re-run
    records = power_records("propagation_of_chaos_sphere", table["w2"], table["wrong"], again=again)
    for r in records:
        r |= {"falls_faster_than_r_d": _falls(r), "resolved": r["resolved_paths"] == r["paths"]}
        r |= {"grid_error": table["grid_error"], "verdict": "holds" if r["holds"] else "not resolved"}
    return {"w2": records, "slope": table["slope"], "grid_error": table["grid_error"], "atoms": table["atoms"]}
