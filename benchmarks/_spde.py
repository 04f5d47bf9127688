"""Benchmark part ``spde``: one noise path to time T by the density solver (per resolution K) against a
particle cloud (per N), at equal total error of the first 8 modes on the circle (docs/spde.md section 10).

Setting (the convergence check's): ReLU noise with sU = sW = 0.5 at scale 0.5, M = 3 noise modes, softmax
attention beta = 2, von Mises-Fisher start (concentration 1), T = 0.5 in 20 steps, float64. Accuracy
(``spde_accuracy``): every contender's first-8-mode distance at T to a fine reference on the same Brownian path
(the density at K = 48 in 20 x REFINE steps), so the scheme's strong (time-step) error is included, for the
density per K and for clouds of N i.i.d. particles and of N deterministic quantile (QMC) particles. Matched: the
smallest K (and per kind the smallest N) whose mean error is within ``MATCH`` of the smallest error any
density reaches at 20 steps. Contenders are timed interleaved over ``rounds`` (``timing.interleaved``, the load
average before each round recorded); reported: min / median / max seconds per path and the ratio particles /
density within each round (min / median / max), at every N and at the matched N of each kind.

    python -m benchmarks spde [--quick] [--rounds 5] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from sdeformer.core._rng import Streams
from sdeformer.dynamics._sde import LimitSDE, make_solver as sde_solver
from sdeformer.io._formats import write_json
from sdeformer.spde._diagnostics import cloud_coefficients
from sdeformer.spde._initial import sample_vmf, von_mises_fisher

from ._spde_accuracy import BETA, HORIZON, REFERENCE_K, REFINE, STEPS, coupled_errors, make_solver, reference_error
from ._timing import conditions, interleaved, machine, peak_memory, ratio, spread

DEGREES = (8, 10, 12, 16, 24, 32)
SIZES = (10, 30, 10**2, 300, 10**3, 10**4, 10**5)
MATCH = 1.1  # a contender matches when its mean error is within 10 % of the smallest density error


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


def matched(errors: dict, floor: float) -> int | None:
    """The smallest key (K or N) whose mean error is within MATCH of ``floor`` (None if none is)."""
    ok = [k for k, e in errors.items() if e["mean"] <= MATCH * floor]
    return min(ok) if ok else None


def bench_spde(quick: bool = False, device: str | torch.device = "cpu", rounds: int = 5) -> dict:
    """The measurements of the module docstring, as one JSON-ready dict."""
    device = torch.device(device)
    sizes = SIZES[:-1] if quick else SIZES
    acc = coupled_errors(DEGREES, sizes, paths=4 if quick else 8)
    floor = min(e["mean"] for e in acc["density"].values())
    k = matched(acc["density"], floor) or max(DEGREES)
    match = {kind: matched(acc[kind], floor) for kind in ("iid", "qmc")}
    contenders = {f"particles N={n}": particle_path(n, device) for n in sizes}
    contenders[f"density K={k}"] = density_path(k, device)
    record_, _ = interleaved(contenders, device, rounds, warmup=True)
    secs = record_["seconds"]
    rows = [
        {
            "N": n,
            "iid_error": acc["iid"][n],
            "qmc_error": acc["qmc"][n],
            "particles_s": spread(secs[f"particles N={n}"]),
            "ratio": ratio(secs[f"particles N={n}"], secs[f"density K={k}"]),
        }
        for n in sizes
    ]
    _, mem_particles, _ = peak_memory(particle_path(sizes[-1], device), device)
    _, mem_density, _ = peak_memory(density_path(k, device), device)
    return {
        "machine": machine(device),
        "conditions": conditions(),
        "setting": {
            "steps": STEPS,
            "horizon": HORIZON,
            "beta": BETA,
            "reference_K": REFERENCE_K,
            "refine": REFINE,
            "noise_modes": 3,
            "match": MATCH,
        },  # fmt: skip
        "accuracy": acc,
        "reference_error": reference_error(paths=4 if quick else 8),
        "floor": floor,
        "density": {"K": k, "seconds": spread(secs[f"density K={k}"]), "error": acc["density"][k]},
        "matched_N": match,
        "timing": record_,
        "rows": rows,
        "peak_memory_mb": {"particles": mem_particles, "density": mem_density, "N": sizes[-1], "K": k},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="density solver against particles at equal accuracy")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    result = bench_spde(args.quick, args.device, args.rounds)
    write_json(args.out / f"spde{'_quick' if args.quick else ''}.json", result, checksum=True)
    d = result["density"]
    print(f"time-step floor {result['floor']:.2e}; density K = {d['K']}: {d['seconds']['median']:.4f} s")
    for row in result["rows"]:
        r = row["ratio"]
        print(
            f"N = {row['N']:>7}: error iid {row['iid_error']['mean']:.2e}, QMC {row['qmc_error']['mean']:.2e}; "
            f"particles {row['particles_s']['median']:.3f} s; ratio {r['median']:.2g} [{r['min']:.2g}, {r['max']:.2g}]"
        )
    print(f"matched N: {result['matched_N']}; load {result['timing']['load_average']}")


if __name__ == "__main__":
    main()
