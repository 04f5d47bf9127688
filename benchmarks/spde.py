"""Benchmark part ``spde``: one noise path to time T by the density solver (per resolution K) against a
particle cloud (per N), at equal accuracy of the first 8 modes on the circle (docs/spde.md section 10).

Setting (the convergence check's): ReLU noise with sU = sW = 0.5 at scale 0.5, M = 3 noise modes, softmax
attention beta = 2, von Mises-Fisher start (concentration 1), T = 0.5 in 20 steps, float64. Accuracy: the
first-8-mode distance at T to a K = 128 reference on the same path; the density's is measured per K, the
cloud's is C N^-1/2 with C fitted on clouds of 10^3 .. 10^5 (10^4 quick). At each N the density's cost is
that of the smallest K whose error is below the cloud's. Contenders are timed interleaved over ``rounds``
(``timing.interleaved``); reported: min / median / max seconds per path, the crossover N beyond which the
density is cheaper, the speed-up at N = 10^6 and the peak memory of both there.

    python -m benchmarks.spde [--quick] [--rounds 3] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import torch

from sdeformer.core.rng import Streams
from sdeformer.dynamics.sde import LimitSDE
from sdeformer.dynamics.sde import make_solver as sde_solver
from sdeformer.io.store import write_json
from sdeformer.spde.coupled import record
from sdeformer.spde.diagnostics import cloud_coefficients, low_mode_distance
from sdeformer.spde.fields import mlp_noise
from sdeformer.spde.initial import sample_vmf, von_mises_fisher
from sdeformer.spde.solver import DensitySolver

from .timing import conditions, interleaved, machine, peak_memory, spread

STEPS, HORIZON, BETA, REFERENCE = 20, 0.5, 2.0, 128
DEGREES = (8, 10, 12, 16, 24, 32, 48)
SIZES = (10, 30, 10**2, 300, 10**3, 10**4, 10**5, 10**6)


def make_solver(modes: int) -> DensitySolver:
    field = mlp_noise(2, "relu", 0.5, 0.5, modes=3, scale=0.5)
    return DensitySolver(field, modes, STEPS, HORIZON, beta=BETA)


def density_path(modes: int, device: torch.device, seed: int = 0):
    """A closure running one noise path of the density at degree ``modes``; returns the final coefficients."""
    solver = make_solver(modes)
    c0 = von_mises_fisher(solver.basis, 1.0, device=device)
    return lambda: solver.run(c0, seed=seed, saveat=STEPS).final


def particle_path(n: int, device: torch.device, seed: int = 0):
    """A closure running one noise path of N particles alone: ``LimitSDE`` + ``make_solver`` on the same field
    and the harmonic attention (exact softmax at O(N P)); the same seed draws the same B^k as the density run.
    Returns the cloud's final coefficients."""
    density = make_solver(8)
    sde = LimitSDE(density.field, density.particle_attention)
    x0 = sample_vmf(2, n, 1.0, Streams(seed + 1, (), device))
    solver = sde_solver(sde, STEPS, HORIZON)
    return lambda: cloud_coefficients(density.basis, solver.run(x0, seed=seed, saveat=STEPS).final)


def accuracy(seeds: int, fit_sizes: tuple[int, ...]) -> dict:
    """The density's first-8-mode error per K (worst over ``seeds`` paths) and the cloud's C in C N^-1/2."""
    ref_solver = make_solver(REFERENCE)
    cpu = torch.device("cpu")
    refs = [ref_solver.run(von_mises_fisher(ref_solver.basis, 1.0), seed=s, saveat=STEPS).final for s in range(seeds)]
    dens = {}
    for k in DEGREES:
        size = make_solver(k).basis.size
        dens[k] = max(
            float(low_mode_distance(make_solver(k).basis, density_path(k, cpu, s)(), refs[s][:size]))
            for s in range(seeds)
        )
    basis8 = make_solver(8).basis
    cloud = {}
    for n in fit_sizes:
        errs = []
        for s in range(seeds):
            solver = make_solver(REFERENCE)
            rec = record(
                solver, von_mises_fisher(solver.basis, 1.0), [sample_vmf(2, n, 1.0, Streams(s + 1, ()))], s, [STEPS]
            )
            errs.append(
                float(low_mode_distance(basis8, rec.density[-1][: basis8.size], rec.clouds[0][-1][: basis8.size]))
            )
        cloud[n] = float(np.mean(errs))
    c = float(np.exp(np.mean([math.log(e * math.sqrt(n)) for n, e in cloud.items()])))
    return {"density_error": dens, "cloud_error": cloud, "cloud_constant": c}


def matched_degree(density_error: dict, target: float) -> int:
    """The smallest K whose density error is below ``target`` (the largest K if none is)."""
    ok = [k for k in DEGREES if density_error[k] <= target]
    return min(ok) if ok else max(DEGREES)


def bench_spde(quick: bool = False, device: str | torch.device = "cpu", rounds: int = 3) -> dict:
    """The measurements of the module docstring, as one JSON-ready dict."""
    device = torch.device(device)
    sizes = SIZES[:-1] if quick else SIZES
    acc = accuracy(2 if quick else 3, (10**3, 10**4) if quick else (10**3, 10**4, 10**5))
    target = {n: acc["cloud_constant"] / math.sqrt(n) for n in sizes}
    matched = {n: matched_degree(acc["density_error"], target[n]) for n in sizes}
    contenders = {f"particles N={n}": particle_path(n, device) for n in sizes}
    contenders |= {f"density K={k}": density_path(k, device) for k in sorted(set(matched.values()) | {16, 32})}
    record_, _ = interleaved(contenders, device, rounds)
    med = {name: spread(s)["median"] for name, s in record_["seconds"].items()}
    rows = [
        {
            "N": n,
            "cloud_error": target[n],
            "K": matched[n],
            "particles_s": med[f"particles N={n}"],
            "density_s": med[f"density K={matched[n]}"],
        }
        for n in sizes
    ]
    cheaper = [r["N"] for r in rows if r["density_s"] < r["particles_s"]]
    top = sizes[-1]
    _, mem_particles, _ = peak_memory(particle_path(top, device), device)
    _, mem_density, _ = peak_memory(density_path(matched[top], device), device)
    return {
        "machine": machine(device),
        "conditions": conditions(),
        "setting": {"steps": STEPS, "horizon": HORIZON, "beta": BETA, "reference_K": REFERENCE, "noise_modes": 3},
        "accuracy": acc,
        "timing": {**record_, "spread": {name: spread(s) for name, s in record_["seconds"].items()}},
        "matched": rows,
        "crossover_N": min(cheaper) if cheaper else None,
        "speedup_at_top": {
            "N": top,
            "K": matched[top],
            "speedup": med[f"particles N={top}"] / med[f"density K={matched[top]}"],
        },
        "peak_memory_mb": {"particles": mem_particles, "density": mem_density, "N": top, "K": matched[top]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="density solver against particles at equal accuracy")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    result = bench_spde(args.quick, args.device, args.rounds)
    write_json(args.out / f"spde{'_quick' if args.quick else ''}.json", result)
    for row in result["matched"]:
        print(
            f"N = {row['N']:>8}: cloud error {row['cloud_error']:.2e}, K = {row['K']:>3}, "
            f"particles {row['particles_s']:.3f} s, density {row['density_s']:.4f} s"
        )
    print(
        f"crossover N: {result['crossover_N']}; speed-up at N = {result['speedup_at_top']['N']}: "
        f"{result['speedup_at_top']['speedup']:.0f}x; peak memory (MB): {result['peak_memory_mb']}"
    )


if __name__ == "__main__":
    main()
