"""Figures of the paper (THEORY section 6): Figure 1 snapshots, Figures 2-6 cosine/energy grids, and the energy
curve of one ``sdeformer simulate`` run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import plt, save_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes

COSINE_BINS = 120


def cosine_energy_panel(ax: Axes, layers: np.ndarray, cos: np.ndarray, energy: np.ndarray, title: str) -> None:
    """All pairwise cosines ``cos`` (S, P) against layer, drawn as their density per layer (every pair
    counts; blue, log colour scale), and E_beta (S,) on a twin axis (red)."""
    edges = np.linspace(-1.0, 1.0, COSINE_BINS + 1)
    counts = np.stack([np.histogram(row, bins=edges)[0] for row in cos], axis=1)  # (bins, S)
    density = np.log1p(counts.astype(np.float64))
    ax.imshow(
        density,
        origin="lower",
        aspect="auto",
        cmap="Blues",
        interpolation="nearest",
        extent=(layers[0], layers[-1], -1.0, 1.0),
    )
    ax.set_title(title, fontsize=8)
    ax.tick_params(labelsize=7)
    twin = ax.twinx()
    twin.plot(layers, energy, color="tab:red", lw=1.2)
    twin.set_ylim(bottom=0)
    twin.tick_params(labelsize=7, colors="tab:red")


def grid_figure(
    path: Path,
    layers: np.ndarray,
    cos: np.ndarray,
    energy: np.ndarray,
    titles: Sequence[str],
    suptitle: str,
    ncols: int = 3,
) -> Path:
    """Figures 2-6: one panel per setting. ``cos``: (K, S, P), ``energy``: (K, S)."""
    k = len(titles)
    nrows = -(-k // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.0 * ncols, 2.3 * nrows), sharex=True, squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i < k:
            cosine_energy_panel(ax, layers, cos[i], energy[i], titles[i])
        else:
            ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("layer", fontsize=8)
    fig.suptitle(
        suptitle + "  (blue: density of all pairwise cosines, log scale; red, right axis: E_beta)", fontsize=10
    )
    fig.tight_layout()
    return save_figure(fig, path)


def figure1(path: Path, snapshots: dict[str, np.ndarray], times: np.ndarray, titles: dict[str, str]) -> Path:
    """Figure 1: first two coordinates of the tokens at a few times. ``snapshots[name]``: (S, N, d)."""
    names = list(snapshots)
    fig, axes = plt.subplots(len(names), len(times), figsize=(2.6 * len(times), 2.7 * len(names)), squeeze=False)
    circle = np.linspace(0, 2 * np.pi, 200)
    for r, name in enumerate(names):
        for c, t in enumerate(times):
            ax = axes[r, c]
            x = snapshots[name][c]
            ax.plot(np.cos(circle), np.sin(circle), color="0.85", lw=0.8)
            ax.scatter(x[:, 0], x[:, 1], s=9, c=np.arange(len(x)), cmap="viridis")
            ax.set_aspect("equal")
            ax.set_xlim(-1.05, 1.05)
            ax.set_ylim(-1.05, 1.05)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"{titles[name]}, t = {t:g}", fontsize=8)
    fig.suptitle(
        "Figure 1: tokens' first two coordinates (N = 64, d = 4, m = 2048, L = 2000, T = 20, attention off)", fontsize=9
    )
    fig.tight_layout()
    return save_figure(fig, path)


def energy_plot(path: Path, t: np.ndarray, energy: np.ndarray, title: str) -> Path:
    """E_beta against time (log scale when positive)."""
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(t, energy, color="tab:red")
    if np.all(energy > 0):
        ax.set_yscale("log")
    ax.set_xlabel("t = layer * dt")
    ax.set_ylabel("E_beta")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)
