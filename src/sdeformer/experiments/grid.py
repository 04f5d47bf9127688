"""Figures 2-6 of the paper: 5 MLP choices x 18 panels (THEORY section 6).

Grid: d in {5, 64, 128} x sigma in {0, 0.1} (sU = sW = sigma) x attention scale s in {+1, 0, -1};
N = 64, L = 150, T = 5, beta = 1. Unstated in the paper, chosen here: m = 2048, Q = K = sqrt(beta) I,
one run per panel with seed 0. Each MLP choice is one call of the batched engine (``sweep.run_sweep``),
three tensor programs (one per d). Arrays are cached per MLP choice in ``grid_<choice>.npz`` together
with the config hash, so an interrupted reproduction resumes where it stopped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from .. import plots
from ..config import ModelConfig
from ..diagnostics import cluster_count, interaction_energy, mean_cosine, pairwise_cosines
from ..kernel import kernel_theory
from ..report import Figure, Section, Table
from ..store import config_hash, read_npz, write_npz
from ..sweep import run_sweep

MLP_CHOICES = ("relu", "silu", "sigmoid", "tanh", "none")
DIMS = (5, 64, 128)
SIGMAS = (0.0, 0.1)
SCALES = (1.0, 0.0, -1.0)
CLUSTER_THRESHOLD = 0.99
# The MLP field is drawn at the tokens from its exact conditional Gaussian law (same law as drawing U and W,
# fewer normals at d = 128; noise.MLPNoise, tested in tests/test_sampling_shortcut.py).
SAMPLING = "conditional"
UNSTATED = ("Unstated in the paper and chosen here: MLP width m = 2048 (as in Figure 1), Q = K = sqrt(beta) I "
            "with beta = 1, V = s I, one run per panel (seed 0), initial tokens i.i.d. uniform on the sphere. The random MLP is sampled "
            "at the tokens from its exact conditional Gaussian law given the tokens (the same law as drawing U, bU, W, bW; "
            "fewer random numbers at d = 128).")


def grid_configs(choice: str, seed: int = 0, layers: int = 150, width: int = 2048) -> list[ModelConfig]:
    """The 18 panel configs of one MLP choice, in panel order (d, sigma, s)."""
    mlp = choice != "none"
    return [ModelConfig(tokens=64, dim=d, width=width, layers=layers, horizon=5.0, beta=1.0,
                        activation=choice if mlp else "relu", mlp=mlp, su=s, sw=s, attention="softmax",
                        attention_scale=a, seed=seed, save_every=1, sampling=SAMPLING)
            for d in DIMS for s in SIGMAS for a in SCALES]


def _prediction(choice: str, d: int, sigma: float, scale: float) -> tuple[str, float | None]:
    """The theory's verdict for one panel (short text) and lambda_bar (None without MLP)."""
    if choice == "none":
        return ("no noise: pure attention flow" + (", attractive" if scale > 0 else ", repulsive" if scale < 0
                                                   else ", tokens frozen"), None)
    k = kernel_theory(choice, d, bias_std=sigma)
    if k.odd_field:
        verdict = "odd field: antipodal split, no single cluster"
    elif k.lambda_bar < 0:
        verdict = "lambda_bar < 0: energy decays" + (" (theorem applies, eps = 0)" if scale >= 0 else
                                                        " (repulsive attention: eps > 0)")
    else:
        verdict = "lambda_bar >= 0: no exponential sync promised"
    return verdict, k.lambda_bar


def run_grid_choice(choice: str, out: Path, seed: int = 0, progress=None, **sizes) -> dict[str, np.ndarray]:
    """Simulate one MLP choice's 18 panels (or load them) -> arrays layers, cos (18, S, P), energy (18, S)."""
    configs = grid_configs(choice, seed, **sizes)
    key = config_hash([c.to_dict() for c in configs])
    cache = out / f"grid_{choice}.npz"
    if cache.exists():
        arrays = read_npz(cache)
        if str(arrays.get("config_hash")) == key:
            if progress:
                progress(len(configs) * configs[0].layers)
            return arrays
    trajs = run_sweep(configs, progress=progress)
    cos = torch.stack([pairwise_cosines(tr.x) for tr in trajs])  # (18, S, P)
    energy = torch.stack([interaction_energy(tr.x) for tr in trajs])  # (18, S)
    clusters = torch.stack([cluster_count(tr.final, CLUSTER_THRESHOLD) for tr in trajs])  # (18,)
    mean_cos = torch.stack([mean_cosine(tr.final) for tr in trajs])  # (18,)
    arrays = {"layers": trajs[0].layers.numpy(), "cos": cos.to(torch.float16).numpy(), "energy": energy.numpy(),
              "final_clusters": clusters.numpy(), "final_mean_cos": mean_cos.numpy(), "config_hash": np.array(key)}
    write_npz(cache, **arrays)
    return arrays


def grid(out: Path, seed: int = 0, progress=None, choices=MLP_CHOICES, **sizes) -> list[Section]:
    """Figures 2-6: one PNG and one report section per MLP choice."""
    sections = []
    for number, choice in enumerate(choices, start=2):
        arrays = run_grid_choice(choice, out, seed, progress, **sizes)
        configs = grid_configs(choice, seed, **sizes)
        titles, rows = [], []
        for i, c in enumerate(configs):
            verdict, lam = _prediction(choice, c.dim, c.su, c.attention_scale)
            lam_txt = "" if lam is None else f", lambda_bar={lam:.3g}"
            titles.append(f"d={c.dim} sigma={c.su:g} s={c.attention_scale:+g}{lam_txt}")
            rows.append([c.dim, c.su, c.attention_scale, "" if lam is None else lam, verdict,
                         float(arrays["energy"][i, 0]), float(arrays["energy"][i, -1]),
                         float(arrays["final_mean_cos"][i]), int(arrays["final_clusters"][i])])
        label = "no MLP" if choice == "none" else f"{choice} MLP"
        png = f"figure{number}_{choice}.png"
        plots.grid_figure(out / png, arrays["layers"], arrays["cos"].astype(np.float32), arrays["energy"], titles,
                          f"Figure {number}: {label}")
        sections.append(Section(
            f"Figure {number}: {label}",
            ["Each panel: all N(N-1)/2 = 2016 pairwise cosines against layer (as a per-layer density, every pair "
             "counted) and E_beta (beta = 1) against layer. "
             "Panel setting beside the theory's prediction in the table (odd field; sign of lambda_bar; the "
             "synchronization theorem needs V = I, i.e. s = +1 or s = 0, for eps = 0).", UNSTATED],
            tables=[Table(["d", "sigma", "s", "lambda_bar", "prediction", "E_beta(0)", "E_beta(L)",
                           "final mean cos", f"clusters (cos>{CLUSTER_THRESHOLD})"], rows, f"Figure {number} panels")],
            figures=[Figure(Path(png), f"{label}; rows: (d, sigma) = " + ", ".join(
                f"({d}, {s:g})" for d in DIMS for s in SIGMAS) + "; columns: s = +1, 0, -1.")],
        ))
    return sections
