"""Figure 1 of the paper: ReLU vs tanh noise, attention off (THEORY section 6).

ReLU without biases forms clusters; tanh without biases gives an odd field, so tokens split into two
antipodal groups (THEORY section 2, 'not odd'). ``run_and_write`` simulates the two runs as jobs
(``sweeps._jobs``: in this process or side by side on Dask workers; cached in ``parts/figure1`` under their
configs, seed included) and returns a ``Figure1Result`` with the snapshots that ``plots._paper.figure1`` draws
as ``FIGURE``; ``section`` turns it into the report section. Clusters: ``observables.FIGURE_CLUSTER_COS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..config import ModelConfig
from ..config._batches import run_sweep
from ..core._kernel import kernel_theory
from ..io._report import Figure, Section
from ..observables import FIGURE_CLUSTER_COS, cluster_count, interaction_energy, mean_abs_cosine, mean_cosine
from ..plots._names import FIGURES
from ._results import Result

SNAPSHOT_TIMES = (0.0, 1.0, 5.0, 20.0)
FIGURE = FIGURES["figure1"]["figure1"]  # the plots own the name


def figure1_configs(seed: int = 0) -> dict[str, ModelConfig]:
    base = ModelConfig(
        tokens=64,
        dim=4,
        width=2048,
        layers=2000,
        horizon=20.0,
        attention="off",
        su=0.0,
        sw=0.0,
        seed=seed,
        save_every=100,
    )
    return {act: base.replace(activation=act) for act in ("relu", "tanh")}


@dataclass(frozen=True)
class Figure1Result(Result):
    """Saved times ``t`` (S,), per activation its final observables and the kernel theory's constants, and the
    states ``snapshots[name]`` (P, N, d) at the saved times ``snapshot_t`` (P,) nearest to ``SNAPSHOT_TIMES``."""

    JSON_KEYS = ("seed", "final")
    seed: int
    t: np.ndarray
    final: dict[str, dict[str, Any]]
    snapshots: dict[str, np.ndarray]
    snapshot_t: np.ndarray


def _final(name: str, x: np.ndarray) -> dict[str, Any]:
    """Observables of the last saved state of ``x`` (S, N, d) and the theory for activation ``name`` at d = 4."""
    last, theory = torch.from_numpy(x[-1]), kernel_theory(name, 4)
    return {
        "energy": float(interaction_energy(last)),
        "mean_cos": float(mean_cosine(last)),
        "mean_abs_cos": float(mean_abs_cosine(last)),
        "clusters": int(cluster_count(last, FIGURE_CLUSTER_COS)),
        "odd_field": theory.odd_field,
        "lambda_bar": theory.lambda_bar,
        "lambda1": theory.lambda1,
    }


def simulate_run(config: ModelConfig) -> dict[str, np.ndarray]:
    """One activation's run (a ``sweeps.Job``): states x ``(S, N, d)`` and saved times t ``(S,)``."""
    [traj] = run_sweep([config])
    return {"x": traj.x.numpy(), "t": traj.t.numpy()}


def run_and_write(
    out: Path, seed: int = 0, progress: Callable[[int], None] | None = None, executor: Any = None
) -> Figure1Result:
    """Simulate the two runs as jobs on ``executor`` (default: this process; on Dask they run side by side),
    cached in ``out/parts/figure1`` under their configs."""
    from ..sweeps._jobs import Job, run_jobs

    configs = figure1_configs(seed)
    jobs = [Job(simulate_run, {"config": c}, {"figure1": c.to_dict()}, units=c.layers) for c in configs.values()]
    parts = run_jobs(jobs, Path(out) / "parts" / "figure1", executor, progress)
    arrays = {name: part["x"] for name, part in zip(configs, parts)}  # (S, N, d) each
    t = parts[0]["t"]
    pick = [int(np.argmin(np.abs(t - s))) for s in SNAPSHOT_TIMES]
    final = {name: _final(name, arrays[name]) for name in configs}
    return Figure1Result(seed, t, final, {n: arrays[n][pick] for n in configs}, t[pick])


def _measured(name: str, final: dict) -> str:
    """What the run shows, computed from its final state (never asserted)."""
    k, abs_cos, cos = final["clusters"], final["mean_abs_cos"], final["mean_cos"]
    shape = "one cluster" if k == 1 else f"{k} clusters"
    if abs_cos > 0.9 and cos < 0.5 * abs_cos:
        shape += " in antipodal groups (mean |cosine| near 1, mean cosine much smaller)"
    return f"Measured for {name}: {shape}; mean |cosine| = {abs_cos:.3f}, mean cosine = {cos:.3f}."


def section(result: Figure1Result) -> Section:
    """The report section of Figure 1: the settings, the prediction and the measured final states."""
    rows = [
        f"{name}: final E_beta = {f['energy']:.4f}, mean cosine = {f['mean_cos']:.3f}, mean |cosine| = "
        f"{f['mean_abs_cos']:.3f}, clusters (cos > {FIGURE_CLUSTER_COS}) = {f['clusters']}; theory: odd field = "
        f"{f['odd_field']}, lambda_bar = {f['lambda_bar']:.4f}, lambda_1 = {f['lambda1']:.4f}."
        for name, f in result.final.items()
    ]
    return Section(
        "Figure 1: ReLU and tanh (odd field) at d = 4 without biases",
        [
            "Settings (THEORY section 6): N = 64, d = 4, m = 2048, L = 2000, T = 20, attention off, "
            f"sU = sW = 0, one run, seed {result.seed}. Prediction: ReLU has lambda_1 < 0 (weak synchronization: "
            "tokens gather into clusters) but lambda_bar > 0 without biases, so no exponential energy decay is "
            "promised; tanh without biases gives an odd field, so antipodal tokens stay antipodal and the tokens "
            "cannot all merge into one cluster.",
            *rows,
            *[_measured(name, f) for name, f in result.final.items()],
        ],
        figures=[
            Figure(
                Path(FIGURE),
                "first two coordinates of the 64 tokens at t = "
                + ", ".join(f"{s:g}" for s in SNAPSHOT_TIMES)
                + "; rows: ReLU, tanh.",
            )
        ],
    )
