"""Figures of report part ``architectures`` (BEYOND sections 7-10): the ALiBi retrieval profile, graph-mask rates,
the metastable staircase with and without noise, plateau durations against noise, two-species clustering.

Each function takes the typed result (``experiments._architectures.report.ArchitecturesResult``) and writes one PNG
atomically (``plots.save_figure``); ``architecture_figures`` draws them all under the names of
``experiments._architectures.report.FIGURES``. The experiment never imports this module: its caller draws.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.ticker import NullFormatter

from ._names import FIGURES
from ._save import plt, save_figure

if TYPE_CHECKING:
    from ..experiments._architectures.report import ArchitecturesResult


def alibi_figure(result: ArchitecturesResult, path: Path) -> Path:
    """Left: the last token's profile against source position (measured dots, theory lines) at three times.
    Middle: the last token's mean attention weights over positions at each time. Right: the pooled end slope
    against t, measured without and with common noise, and predicted."""
    a = result.alibi
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(14.0, 3.8))
    times, pos = np.asarray(a["times"]), np.asarray(a["positions"])
    for k, color in zip((0, len(times) // 2, len(times) - 1), ("C0", "C1", "C2")):
        left.plot(pos, np.asarray(a["profile_measured"][k]), ".", color=color, alpha=0.6)
        left.plot(pos, np.asarray(a["profile_theory"][k]), "-", color=color, label=f"t = {times[k]:g}")
    left.set_xlabel("source position s = k / N")
    left.set_ylabel("N x correlation with the last token")
    left.set_title(f"retrieval profile (N = {a['tokens']}, beta = {a['beta']:g}, lambda = {a['lam']:g})", fontsize=9)
    left.legend(fontsize=7)
    weights = np.asarray(a["attention"])  # (T, N)
    for k in range(len(times)):
        middle.plot(
            np.arange(1, weights.shape[1] + 1) / a["tokens"],
            weights[k],
            color=plt.get_cmap("viridis")(k / max(len(times) - 1, 1)),
            label=f"t = {times[k]:g}" if k in (0, len(times) - 1) else None,
        )
    middle.set_yscale("log")
    middle.set_xlabel("attended position j / N")
    middle.set_ylabel("attention weight (mean over runs)")
    middle.yaxis.set_minor_formatter(NullFormatter())
    middle.set_title("which positions the last token attends to", fontsize=9)
    middle.legend(fontsize=7)
    for run, color, label in ((a, "C0", "measured, no noise"), (result.alibi_noise, "C1", "measured, common noise")):
        right.plot(times, run["measured_slopes"], "o-", color=color, label=label)
    right.plot(times, a["predicted_slopes"], "--", color="C3", label="predicted (softmax rates)")
    right.axhline(0.0, color="gray", lw=0.8)
    right.axvline(
        a["predicted_crossing"], color="C3", lw=0.8, ls=":", label=f"predicted turn-over {a['predicted_crossing']:.2f}"
    )
    right.set_xlabel("t")
    right.set_ylabel("pooled end slope of the profile")
    right.set_title(f"measured turn-over {a['measured_crossing']:.2f} +- {a['crossing_se']:.2f} (s.e.)", fontsize=9)
    right.legend(fontsize=7)
    return save_figure(fig, path)


def graph_figure(result: ArchitecturesResult, path: Path) -> Path:
    """Measured against predicted consensus rate, one point per (graph, noise), error bars the tolerance."""
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    records = [c for c in result.checks if c["model"].startswith("graph")]
    for c in records:
        noisy = c["model"] == "graph+noise"
        ax.errorbar(c["predicted"], c["measured"], yerr=c["tolerance"], fmt="s" if noisy else "o",
                    color="C1" if noisy else "C0", capsize=3)  # fmt: skip
        ax.annotate(c["setting"]["mask"], (c["predicted"], c["measured"]), fontsize=7, xytext=(4, -8),
                    textcoords="offset points")  # fmt: skip
    lim = [min(c["predicted"] for c in records) * 0.8, max(c["predicted"] for c in records) * 1.2]
    ax.plot(lim, lim, "--", color="gray", lw=0.8)
    ax.plot([], [], "o", color="C0", label="no noise: discrete spectral-gap rate")
    ax.plot([], [], "s", color="C1", label="common noise: gap rate - lambda_1")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted consensus rate")
    ax.set_ylabel("measured decay rate of the log spread")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def staircase_figure(result: ArchitecturesResult, path: Path) -> Path:
    """E_beta against log(t) / beta, one panel per noise strength, plateaus shaded and labelled with their
    cluster sizes; dashed lines: the closed-form E_k of k equal clusters at equal spacing."""
    s = result.staircase
    strengths = s["strengths"]
    fig, axes = plt.subplots(1, len(strengths), figsize=(3.2 * len(strengths), 3.4), squeeze=False, sharey=True)
    tau = np.log(np.asarray(s["t"])) / s["beta"]
    for ax, c in zip(axes[0], strengths):
        ax.plot(tau, s["energy"][str(c)], color="C0", lw=1.2)
        for k, level in s["closed_form"].items():
            ax.axhline(level, color="gray", lw=0.6, ls="--")
            ax.text(tau[0], level, f"E_{k}", fontsize=6, va="bottom", color="gray")
        for p in s["plateaus"][str(c)]:
            ax.axvspan(p["tau_start"], p["tau_end"], color="C2", alpha=0.2)
            ax.text((p["tau_start"] + p["tau_end"]) / 2, p["level"], str(tuple(p["sizes"])), fontsize=6,
                    ha="center", va="top")  # fmt: skip
        ax.set_xlabel("log(t) / beta")
        ax.set_title(f"noise strength {c:g}", fontsize=9)
    axes[0][0].set_ylabel("E_beta")
    return save_figure(fig, path)


def durations_figure(result: ArchitecturesResult, path: Path, saddle: tuple[int, ...]) -> Path:
    """Mean time spent at the two-cluster ``saddle`` (the cluster sizes the experiment measured) against noise
    strength, with 95% intervals (the noiseless run drawn at the left edge)."""
    fig, ax = plt.subplots(figsize=(4.8, 3.6))
    items = sorted((float(c), d) for c, d in result.durations.items())
    positive = [c for c, _ in items if c > 0]
    edge = min(positive) / 3 if positive else 1.0
    x = [c if c > 0 else edge for c, _ in items]
    y = [d["mean"] for _, d in items]
    err = [0.0 if not np.isfinite(d["ci"]) else d["ci"] for _, d in items]
    ax.errorbar(x, y, yerr=err, fmt="o-", capsize=3, color="C0")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"noise strength (covariance factor; {edge:.2g} stands for none)")
    ax.set_ylabel(f"time at the saddle {saddle}")
    return save_figure(fig, path)


def species_figure(result: ArchitecturesResult, path: Path) -> Path:
    """Cluster counts of encoder and decoder against t and (right axis, dotted) the fraction of decoder tokens
    attached to an encoder token, one panel per noise mode."""
    modes = list(result.species)
    fig, axes = plt.subplots(1, len(modes), figsize=(3.8 * len(modes), 3.2), squeeze=False)
    for ax, mode in zip(axes[0], modes):
        v = result.species[mode]
        ax.plot(v["t"], v["clusters_y"], label="clusters of Y (encoder)")
        ax.plot(v["t"], v["clusters_x"], label="clusters of X (decoder)")
        twin = ax.twinx()
        twin.plot(v["t"], v["attached"], ":", color="C2")
        twin.set_ylim(0, 1.05)
        twin.set_ylabel("fraction of X attached to Y (dotted)", fontsize=7)
        ax.set_xlabel("t")
        ax.set_title(f"noise: {mode}", fontsize=9)
        ax.set_ylabel("clusters (mean over runs)")
    axes[0][0].legend(fontsize=7)
    return save_figure(fig, path)


def architecture_figures(result: ArchitecturesResult, folder: Path, saddle: tuple[int, ...]) -> list[Path]:
    """All figures of the part into ``folder``, named as ``FIGURES["architectures"]``; ``saddle``: the cluster sizes
    whose plateau durations were measured (``experiments``' ``SADDLE``)."""
    folder = Path(folder)
    draw = {"alibi": alibi_figure, "graphs": graph_figure, "staircase": staircase_figure,
            "durations": lambda r, p: durations_figure(r, p, saddle), "species": species_figure}  # fmt: skip
    return [fn(result, folder / FIGURES["architectures"][name]) for name, fn in draw.items()]
