"""Figures of the paper (THEORY section 6): Figure 1 snapshots, Figures 2-6 cosine/energy grids, and the energy
curve of one ``sdeformer simulate`` run. Each takes the typed result of its experiment (``sdeformer.experiments``)
and writes one PNG atomically; the experiments never import this module (their callers draw)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.ticker import MaxNLocator

from ._save import fixed_layout, plt, save_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..experiments._figure1 import Figure1Result
    from ..experiments._grid import GridResult
    from ..experiments._simulate import SimulateResult


def cosine_energy_panel(
    ax: Axes, layers: np.ndarray, counts: np.ndarray, energy: np.ndarray, title: str, left: bool, right: bool
) -> None:
    """All pairwise cosines against layer, drawn from their per-layer histogram ``counts`` (S, bins) over equal
    bins of [-1, 1] (every pair counts; blue, log colour scale, one rasterized image), and E_beta (S,) on a twin
    axis (red). Axis labels only on the ``left`` and ``right`` columns."""
    ax.imshow(
        np.log1p(counts.T),  # (bins, S)
        origin="lower",
        aspect="auto",
        cmap="Blues",
        interpolation="nearest",
        extent=(layers[0], layers[-1], -1.0, 1.0),
        rasterized=True,
    )
    ax.set_title(title, fontsize=8, y=1.0)  # a fixed y: no per-draw title placement pass
    ax.set_ylim(-1.0, 1.0)
    ax.set_yticks([-1.0, -0.5, 0.0, 0.5, 1.0])
    ax.tick_params(labelsize=7)
    if left:
        ax.set_ylabel("pairwise cosine", fontsize=8)
    twin = ax.twinx()
    twin.plot(layers, np.maximum(energy, 0.0), color="tab:red", lw=1.2)
    twin.set_ylim(bottom=0)
    twin.yaxis.set_major_locator(MaxNLocator(4))
    twin.tick_params(labelsize=7, colors="tab:red")
    if right:
        twin.set_ylabel("E_beta", fontsize=8, color="tab:red")


def grid_figure(result: GridResult, path: Path, ncols: int = 3) -> Path:
    """Figures 2-6: one panel per setting of ``result`` (cosine histograms (K, S, bins), E_beta (K, S)), titled
    with its setting and lambda_bar."""
    layers, counts, energy = result.layers, result.cos_counts, result.energy
    titles = [
        f"d={p['dim']} sigma={p['sigma']:g} s={p['scale']:+g}"
        + ("" if p["lambda_bar"] is None else f", lambda_bar={p['lambda_bar']:.3g}")
        for p in result.panels
    ]
    suptitle = f"Figure {result.number}: {result.label}"
    k = len(titles)
    nrows = -(-k // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.0 * ncols, 2.3 * nrows), sharex=True, squeeze=False)
    fixed_layout(fig, left=0.65, right=0.75, top=0.75, bottom=0.5, hspace=0.4, wspace=0.95)
    for i, ax in enumerate(axes.flat):
        if i < k:
            col = i % ncols
            cosine_energy_panel(ax, layers, counts[i], energy[i], titles[i], col == 0, col == ncols - 1)
        else:
            ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("layer", fontsize=8)
    fig.suptitle(
        suptitle + "  (blue: density of all pairwise cosines, log scale; red, right axis: E_beta)",
        fontsize=10,
        y=1 - 0.25 / fig.get_size_inches()[1],
    )
    return save_figure(fig, path, tight=False)


def figure1(result: Figure1Result, path: Path) -> Path:
    """Figure 1: first two coordinates of the tokens at a few times (``result.snapshots[name]``: (S, N, d) at
    ``result.snapshot_t``), one row per activation titled with its oddness.

    Colour = token index (a token keeps its colour over time); grey circle: the unit circle, which the
    projection of the unit sphere S^{d-1} onto (x_1, x_2) fills."""
    snapshots, times = result.snapshots, result.snapshot_t
    titles = {name: f"{name} ({'odd field' if f['odd_field'] else 'not odd'})" for name, f in result.final.items()}
    names = list(snapshots)
    fig, axes = plt.subplots(
        len(names), len(times), figsize=(2.6 * len(times) + 1.0, 2.8 * len(names) + 0.3), squeeze=False
    )
    fixed_layout(fig, left=0.55, right=1.05, top=0.65, bottom=0.5, hspace=0.45, wspace=0.25)
    circle = np.linspace(0, 2 * np.pi, 200)
    ticks = [-1.0, 0.0, 1.0]
    points = None
    for r, name in enumerate(names):
        for c, t in enumerate(times):
            ax = axes[r, c]
            x = snapshots[name][c]
            ax.plot(np.cos(circle), np.sin(circle), color="0.85", lw=0.8)
            points = ax.scatter(x[:, 0], x[:, 1], s=9, c=np.arange(len(x)), cmap="viridis")
            ax.set_aspect("equal")
            ax.set_xlim(-1.05, 1.05)
            ax.set_ylim(-1.05, 1.05)
            ax.set_xticks(ticks, [] if r < len(names) - 1 else ["-1", "0", "1"], fontsize=7)
            ax.set_yticks(ticks, [] if c > 0 else ["-1", "0", "1"], fontsize=7)
            ax.set_title(f"{titles[name]}, t = {t:g}", fontsize=8, y=1.0)
            if r == len(names) - 1:
                ax.set_xlabel("x_1 (first coordinate)", fontsize=8)
            if c == 0:
                ax.set_ylabel("x_2 (second coordinate)", fontsize=8)
    assert points is not None
    w, h = fig.get_size_inches()
    bar = fig.colorbar(points, cax=fig.add_axes((1 - 0.8 / w, 0.5 / h, 0.12 / w, 1 - 1.15 / h)))
    bar.set_label("token index i (colour kept over time)", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    fig.suptitle(
        "Figure 1: tokens' first two coordinates (N = 64, d = 4, m = 2048, L = 2000, T = 20, attention off)",
        fontsize=9,
        y=1 - 0.2 / fig.get_size_inches()[1],
    )
    return save_figure(fig, path, tight=False)


def energy_plot(result: SimulateResult, path: Path) -> Path:
    """E_beta against time (log scale when positive) of one ``simulate`` run, titled with its setting."""
    cfg = result.config
    title = (
        f"E_beta, {cfg['activation']} d={cfg['dim']} sU={cfg['su']:g} sW={cfg['sw']:g} s={cfg['attention_scale']:+g}"
    )
    t, energy = result.t, result.energy
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(t, energy, color="tab:red")
    if np.all(energy > 0):
        ax.set_yscale("log")
    ax.set_xlabel("t = layer * dt")
    ax.set_ylabel("E_beta")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)
