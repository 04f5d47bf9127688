"""Figures 2-6 of the paper: 5 MLP choices x 18 panels (THEORY section 6).

Grid: d in {5, 64, 128} x sigma in {0, 0.1} (sU = sW = sigma) x attention scale s in {+1, 0, -1};
N = 64, L = 150, T = 5, beta = 1. Unstated in the paper, chosen here: m = 2048, Q = K = sqrt(beta) I,
one run per panel with seed 0. The panels of one MLP choice and one d are one job (``sweeps._jobs``): one
batched tensor program (``sweep.sweep_measure``), run in this process or on Dask workers, its arrays cached in
``parts/grid/<id>.npz`` under the config hash, so an interrupted reproduction resumes where it stopped and the
numbers do not depend on the executor. ``run_and_write`` returns one ``GridResult`` per MLP choice, which
``plots._paper.grid_figure`` draws as ``GridResult.figure`` (the reproduction draws them on its executor, one
figure per call); ``sections`` turns the results into the report's Figures 2-6. Clusters:
``observables.FIGURE_CLUSTER_COS``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..config import ModelConfig
from ..config._batches import sweep_measure
from ..dynamics._loop import Trajectory
from ..io._report import Figure, Section, Table
from ..observables import (
    FIGURE_CLUSTER_COS,
    cluster_count,
    cosine_histogram,
    interaction_energy,
    mean_cosine,
    pairwise_cosines,
    shared_cosines,
)
from ..sweeps._jobs import Job, run_jobs
from ._kernel_cache import kernel_theory  # memoised: Table 1 and the 90 panels share 24 settings
from ._results import Result

MLP_CHOICES = ("relu", "silu", "sigmoid", "tanh", "none")
DIMS = (5, 64, 128)
SIGMAS = (0.0, 0.1)
SCALES = (1.0, 0.0, -1.0)
COSINE_BINS = 120  # the figures draw each layer's N(N-1)/2 cosines as a histogram over this many bins of [-1, 1]
# The MLP field is drawn at the tokens from its exact conditional Gaussian law (same law as drawing U and W,
# fewer normals at d = 128; mlp_noise.MLPNoise, tested in tests/test_sampling_shortcut.py).
SAMPLING = "conditional"
UNSTATED = (
    "Unstated in the paper and chosen here: MLP width m = 2048 (as in Figure 1), Q = K = sqrt(beta) I "
    "with beta = 1, V = s I, one run per panel (seed 0), initial tokens i.i.d. uniform on the sphere. "
    "The random MLP is sampled at the tokens from its exact conditional Gaussian law given the tokens "
    "(the same law as drawing U, bU, W, bW; fewer random numbers at d = 128)."
)


ENERGY_NOTE = (
    "E_beta >= 0, with equality exactly when all tokens coincide. Once tokens have synchronized, the float32 "
    "sum of e^beta - e^(beta cos) cancels to within round-off (|E_beta| < 1e-6) and can come out slightly "
    "negative; such values are shown as 0 in the table and the figure."
)


def grid_configs(choice: str, seed: int = 0, layers: int = 150, width: int = 2048) -> list[ModelConfig]:
    """The 18 panel configs of one MLP choice, in panel order (d, sigma, s)."""
    mlp = choice != "none"
    return [
        ModelConfig(
            tokens=64,
            dim=d,
            width=width,
            layers=layers,
            horizon=5.0,
            beta=1.0,
            activation=choice if mlp else "relu",
            mlp=mlp,
            su=s,
            sw=s,
            attention="softmax",
            attention_scale=a,
            seed=seed,
            save_every=1,
            sampling=SAMPLING,
        )
        for d in DIMS
        for s in SIGMAS
        for a in SCALES
    ]


def _prediction(choice: str, d: int, sigma: float, scale: float) -> tuple[str, float | None]:
    """The theory's verdict for one panel (short text) and lambda_bar (None without MLP)."""
    if choice == "none":
        return (
            "no noise: pure attention flow"
            + (", attractive" if scale > 0 else ", repulsive" if scale < 0 else ", tokens frozen"),
            None,
        )
    from ._sync.eps import certified_eps  # eps = 4 max(0, -s) for V = s I, Q^T K = beta I (THEORY section 5)

    k, eps = kernel_theory(choice, d, bias_std=sigma), certified_eps(scale)
    if k.odd_field:
        verdict = "odd field: antipodal split, no single cluster"
    elif k.lambda_bar < 0 and eps + k.lambda_bar_prime < 0:
        verdict = f"lambda_bar < 0: energy decays (theorem applies, eps = {eps:g})"
    elif k.lambda_bar < 0:
        verdict = f"lambda_bar < 0 but eps + lambda_bar' = {eps + k.lambda_bar_prime:.2f} >= 0: not applicable"
    else:
        verdict = "lambda_bar >= 0: no exponential sync promised"
    return verdict, k.lambda_bar


@dataclass(frozen=True)
class GridResult(Result):
    """One MLP choice (Figure ``number``): per panel k of ``configs``, the histogram ``cos_counts`` (K, S, COSINE_BINS)
    of the pairwise cosines and E_beta ``energy`` (K, S) at saved ``layers`` (S,), and final mean cosine and
    clusters (K,)."""

    JSON_KEYS = ("choice", "number", "panels")
    choice: str
    number: int
    configs: tuple[ModelConfig, ...]
    layers: np.ndarray
    cos_counts: np.ndarray
    energy: np.ndarray
    final_mean_cos: np.ndarray
    final_clusters: np.ndarray

    @property
    def label(self) -> str:
        return "no MLP" if self.choice == "none" else f"{self.choice} MLP"

    @property
    def figure(self) -> str:
        """The file name of its figure in the report folder."""
        return f"figure{self.number}_{self.choice}.png"

    @cached_property
    def panels(self) -> list[dict[str, Any]]:
        """Per panel: its setting, the theory's prediction and the measured energies, mean cosine, clusters."""
        rows = []
        for i, c in enumerate(self.configs):
            verdict, lam = _prediction(self.choice, c.dim, c.su, c.attention_scale)
            rows.append(
                {
                    "dim": c.dim,
                    "sigma": c.su,
                    "scale": c.attention_scale,
                    "lambda_bar": lam,
                    "prediction": verdict,
                    "energy_first": float(self.energy[i, 0]),
                    "energy_last": float(self.energy[i, -1]),
                    "final_mean_cos": float(self.final_mean_cos[i]),
                    "final_clusters": int(self.final_clusters[i]),
                }
            )
        return rows


def _measure(traj: Trajectory) -> dict[str, torch.Tensor]:
    """The grid's observables of one batched run (``x``: (S, G, N, d)), each with the settings first."""
    x = traj.x.movedim(1, 0)  # (G, S, N, d)
    with shared_cosines(x):  # the histograms and the energies read one cosine matrix
        counts = cosine_histogram(pairwise_cosines(x), COSINE_BINS).to(torch.float32)  # (G, S, bins)
        energy = interaction_energy(x)  # (G, S)
    return {
        "layers": traj.steps.expand(x.shape[0], -1),
        "cos_counts": counts,
        "energy": energy,
        "final_clusters": cluster_count(x[:, -1], FIGURE_CLUSTER_COS),
        "final_mean_cos": mean_cosine(x[:, -1]),
    }


def simulate_panels(configs: Sequence[ModelConfig]) -> dict[str, np.ndarray]:
    """One job of the grid: panels of one MLP choice and one d (one batched run, ``sweep.sweep_measure``):
    layers (K, S), cos_counts (K, S, COSINE_BINS), energy (K, S), final_clusters and final_mean_cos (K,)."""
    return {k: v.numpy() for k, v in sweep_measure(configs, _measure).stack().items()}


def grid_jobs(choice: str, seed: int, sizes: dict) -> list[Job]:
    """The jobs of one MLP choice: one per d (the panels that share one tensor program), keyed by their configs."""
    configs = grid_configs(choice, seed, **sizes)
    jobs = []
    for d in DIMS:
        panels = [c for c in configs if c.dim == d]
        key = {"grid": [c.to_dict() for c in panels]}
        jobs.append(Job(simulate_panels, {"configs": panels}, key, units=len(panels) * panels[0].layers))
    return jobs


def _result(choice: str, number: int, seed: int, sizes: dict, parts: list[dict[str, np.ndarray]]) -> GridResult:
    """One choice's result from its jobs' parts (panel order is d-major, as in ``grid_configs``)."""
    cat = {
        k: np.concatenate([p[k] for p in parts]) for k in ("cos_counts", "energy", "final_mean_cos", "final_clusters")
    }
    configs = tuple(grid_configs(choice, seed, **sizes))
    layers = parts[0]["layers"][0]  # (S,): the same saved layers in every panel
    return GridResult(
        choice, number, configs, layers, cat["cos_counts"], cat["energy"], cat["final_mean_cos"], cat["final_clusters"]
    )


def run_and_write(
    out: Path,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    choices=MLP_CHOICES,
    executor: Any = None,
    **sizes,
) -> list[GridResult]:
    """The results of Figures 2, 3, ... for ``choices`` in order. Every (choice, d) is a job on ``executor``
    (default: this process; a ``sweeps.DaskExecutor`` spreads them over its workers) whose arrays are cached in
    ``out/parts/grid``."""
    from ..io._progress import stage
    from ..sweeps import LocalExecutor

    executor = executor or LocalExecutor(threads=None)
    jobs = [grid_jobs(choice, seed, sizes) for choice in choices]
    stage(f"Figures 2-{len(choices) + 1}: simulating {sum(map(len, jobs))} groups of panels (or reading them)")
    parts = run_jobs([j for js in jobs for j in js], Path(out) / "parts" / "grid", executor, progress)
    numbered = list(enumerate(choices, start=2))
    n = len(DIMS)
    return [
        _result(choice, number, seed, sizes, parts[(number - 2) * n : (number - 1) * n]) for number, choice in numbered
    ]


ONE_RUN = "one run, the paper's panel (a single realisation, not a mean)"


def sections(results: list[GridResult]) -> list[Section]:
    """One report section per MLP choice: the panel table against the theory, and the figure."""
    out = []
    for r in results:
        rows = [
            [
                p["dim"],
                p["sigma"],
                p["scale"],
                "" if p["lambda_bar"] is None else p["lambda_bar"],
                p["prediction"],
                max(p["energy_first"], 0.0),
                max(p["energy_last"], 0.0),  # E_beta >= 0: float32 round-off below 0 at full sync shown as 0
                p["final_mean_cos"],
                p["final_clusters"],
            ]
            for p in r.panels
        ]
        out.append(
            Section(
                f"Figure {r.number}: {r.label}",
                [
                    "Each panel: all N(N-1)/2 = 2016 pairwise cosines against layer (as a per-layer density, every "
                    "pair counted) and E_beta (beta = 1) against layer. "
                    "Panel setting beside the theory's prediction in the table (odd field; sign of lambda_bar; the "
                    "synchronization theorem needs V = I, i.e. s = +1 or s = 0, for eps = 0).",
                    ENERGY_NOTE,
                    UNSTATED,
                ],
                tables=[
                    Table(
                        [
                            "d",
                            "sigma",
                            "s",
                            "λ̄",
                            "prediction",
                            "E_beta(0)",
                            "E_beta(L)",
                            "final mean cos",
                            f"clusters (cos>{FIGURE_CLUSTER_COS})",
                        ],
                        rows,
                        f"Figure {r.number} panels",
                        from_runs=True,
                        exact=dict.fromkeys(("sigma", "s"), "a setting")
                        | {"λ̄": "closed form (THEORY section 2)"}
                        | dict.fromkeys(("E_beta(0)", "E_beta(L)", "final mean cos"), ONE_RUN),
                    )
                ],
                figures=[
                    Figure(
                        Path(r.figure),
                        f"{r.label}; rows: (d, sigma) = "
                        + ", ".join(f"({d}, {s:g})" for d in DIMS for s in SIGMAS)
                        + "; columns: s = +1, 0, -1.",
                    )
                ],
            )
        )
    return out
