"""Figure 1 of the paper: ReLU vs tanh noise, attention off (THEORY section 6).

ReLU without biases forms clusters; tanh without biases gives an odd field, so tokens split into two
antipodal groups (THEORY section 2, 'not odd').
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from .. import plots
from ..config import ModelConfig
from ..diagnostics import cluster_count, interaction_energy, mean_abs_cosine, mean_cosine
from ..kernel import kernel_theory
from ..report import Figure, Section
from ..store import read_npz, write_npz
from ..sweep import run_sweep

SNAPSHOT_TIMES = (0.0, 1.0, 5.0, 20.0)
CLUSTER_THRESHOLD = 0.99


def figure1_configs(seed: int = 0) -> dict[str, ModelConfig]:
    base = ModelConfig(tokens=64, dim=4, width=2048, layers=2000, horizon=20.0, attention="off", su=0.0, sw=0.0,
                       seed=seed, save_every=100)
    return {act: base.replace(activation=act) for act in ("relu", "tanh")}


def figure1(out: Path, seed: int = 0, progress=None) -> Section:
    """Simulate (or load cached arrays), write ``figure1.png`` and ``figure1.npz``; return the section."""
    configs = figure1_configs(seed)
    cache = out / "figure1.npz"
    if cache.exists():
        arrays = read_npz(cache)
    else:
        trajs = run_sweep(list(configs.values()), progress=progress)
        arrays = {name: tr.x.numpy() for name, tr in zip(configs, trajs)}
        arrays["t"] = trajs[0].t.numpy()
        write_npz(cache, **arrays)
    t = arrays["t"]
    pick = [int(np.argmin(np.abs(t - s))) for s in SNAPSHOT_TIMES]
    rows, titles = [], {}
    for name in configs:
        final = torch.from_numpy(arrays[name][-1])
        theory = kernel_theory(name, 4)
        titles[name] = f"{name} ({'odd field' if theory.odd_field else 'not odd'})"
        rows.append(
            f"{name}: final E_beta = {float(interaction_energy(final)):.4f}, mean cosine = "
            f"{float(mean_cosine(final)):.3f}, mean |cosine| = {float(mean_abs_cosine(final)):.3f}, clusters "
            f"(cos > {CLUSTER_THRESHOLD}) = {int(cluster_count(final, CLUSTER_THRESHOLD))}; theory: odd field = "
            f"{theory.odd_field}, lambda_bar = {theory.lambda_bar:.4f}, lambda_1 = {theory.lambda1:.4f}."
        )
    plots.figure1(out / "figure1.png", {n: arrays[n][pick] for n in configs}, t[pick], titles)
    return Section(
        "Figure 1: ReLU forms clusters, tanh splits into antipodal pairs",
        ["Settings (THEORY section 6): N = 64, d = 4, m = 2048, L = 2000, T = 20, attention off, "
         f"sU = sW = 0, one run, seed {seed}. Prediction: ReLU has lambda_1 < 0 (weak synchronization: "
         "tokens gather into clusters) but lambda_bar > 0 without biases, so no exponential energy decay is "
         "promised; tanh without biases gives an odd field, so tokens cannot merge into one cluster and "
         "end in two antipodal groups (mean |cosine| near 1 while mean cosine stays near 0).", *rows],
        figures=[Figure(Path("figure1.png"), "first two coordinates of the 64 tokens at t = "
                        + ", ".join(f"{s:g}" for s in SNAPSHOT_TIMES) + "; rows: ReLU, tanh.")],
    )
