"""Figures of a real model held against the theory (THEORY sections 1, 2; BEYOND section 1; docs/real.md): the
per-layer statistics with intervals beside the controls, the empirical kernel against kappa and independent
noise for three blocks, the common share per block, the attention's fit per block. Each writes one PNG;
``real_figures`` draws a record's five (the caller hands it to ``real``'s ``run_and_write``, and its paths to
``report_section``), ``models_figure`` the verdict figure of several models."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._names import FIGURES
from ._real_band import band_figure
from ._save import plt, save_figure

STATS = (("mean_cos", "mean pairwise cosine"), ("effective_rank", "effective rank"), ("energy", "E_beta, beta = 1"))


def statistics_figure(record: dict, path: Path) -> Path:
    """mean cosine, effective rank and E_1 per layer with 95 % bands: the model, each control and the fitted model."""
    fig, axes = plt.subplots(1, len(STATS), figsize=(12, 3.6))
    parts = {"trained": record, **record.get("controls", {})}
    for ax, (key, label) in zip(axes, STATS, strict=True):
        for name, part in parts.items():
            s = part["statistics"][key]
            x = np.arange(len(s["mean"]))
            ax.plot(x, s["mean"], marker="o", label=name)
            ax.fill_between(x, s["low"], s["high"], alpha=0.25)
        fitted = record.get("fitted", {}).get("statistics", {}).get(key)
        if fitted is not None:
            x = np.arange(len(fitted["fitted"]))
            ax.plot(x, fitted["fitted"], "k--", marker="x", label="fitted model")
            ax.fill_between(x, fitted["fitted_low"], fitted["fitted_high"], color="k", alpha=0.15)
        ax.set_xlabel("layer (0 = embeddings)")
        ax.set_ylabel(label)
    axes[0].legend()
    return _save(fig, path)


def kernel_figure(record: dict, path: Path) -> Path:
    """C_l(c) with its 95 % band, the fitted kappa(c)/kappa(1) (rho = 1), partial noise rho kappa(c)/kappa(1) and
    independent noise (0), three blocks; the pairs per bin as bars on a second axis."""
    from ..real._kernel import theory_curve

    kern, layers, d = record["kernel"], int(record["layers"]), int(record["dim"])
    chosen = sorted({0, layers // 2, layers - 1})
    fig, axes = plt.subplots(1, len(chosen), figsize=(4.4 * len(chosen), 3.8), squeeze=False)
    for ax, layer in zip(axes[0], chosen, strict=True):
        c = np.array(kern["curve"][layer], dtype=float)
        lo, hi = (np.array(kern[k][layer], dtype=float) for k in ("low", "high"))
        mid = np.array(kern["cosine"][layer], dtype=float)
        count = np.array(kern["count"][layer], dtype=float)
        ok = np.isfinite(c) & np.isfinite(mid)
        bars = ax.twinx()
        edges = np.linspace(-1.0, 1.0, len(count) + 1)
        bars.bar(edges[:-1], count, width=np.diff(edges), align="edge", color="0.85", zorder=0)
        bars.set_yscale("log")
        bars.set_ylabel("pairs per bin", color="0.5")
        ax.set_zorder(bars.get_zorder() + 1)
        ax.patch.set_visible(False)
        ax.errorbar(mid[ok], c[ok], yerr=[c[ok] - lo[ok], hi[ok] - c[ok]], fmt="o", ms=3, label="measured C(c)")
        grid = np.linspace(np.nanmin(mid[ok]), 1.0, 60)
        row = kern["layers"][layer]
        for key, label, style in (("fit_theory", "kappa/kappa(1)", "-"), ("fit_partial", "rho kappa/kappa(1)", "--")):
            fit = row[key]
            ax.plot(grid, fit["share"] * theory_curve(grid, d, fit["su"], fit["sw"]), style, label=label)
        ax.axhline(0.0, color="k", ls=":", label="independent noise")
        ax.set_title(
            f"block {layer + 1}: R^2 {record['kernel_r2_theory'][layer]:.2g} (theory), "
            f"{record['kernel_r2_partial'][layer]:.2f} (partial)",
            fontsize=9,
        )
        ax.set_xlabel("cosine c of the MLP inputs")
        ax.set_ylabel("C(c) = E<f_i, f_j> / E|f|^2")
    axes[0][0].legend(fontsize=7)
    return _save(fig, path)


def _per_block(record: dict, key: str, path: Path, label: str, band: list | None = None) -> Path:
    fig, ax = plt.subplots(figsize=(5, 3.6))
    parts = {"trained": record, **record.get("controls", {})}
    for name, part in parts.items():
        y = np.asarray(part[key], dtype=float)
        x = np.arange(1, len(y) + 1)
        ax.plot(x, y, marker="o", label=name)
        if band is not None and name == "trained":
            ax.fill_between(x, band[0], band[1], alpha=0.25)
    ax.set_xlabel("block")
    ax.set_ylabel(label)
    ax.legend(fontsize=8)
    return _save(fig, path)


def share_figure(record: dict, path: Path) -> Path:
    """rho_l = |mean f|^2 / mean |f|^2 per block with its 95 % band, and the controls."""
    return _per_block(record, "common_share", path, "common share rho_l", record["common_share_interval"])


def attention_figure(record: dict, path: Path) -> Path:
    """The fraction of the attention's tangent output explained by Q^T K = beta I, V = s I per block (95 % band;
    the controls), and on held-out sentences by beta I and by a full d x d Q^T K (95 % bands)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    parts = {"trained": record, **record.get("controls", {})}
    for name, part in parts.items():
        y = np.asarray(part["attention_explained"], dtype=float)
        x = np.arange(1, len(y) + 1)
        ax.plot(x, y, marker="o", label=f"{name}, beta I")
        band = part.get("attention_explained_interval")
        if band is not None and name == "trained":
            ax.fill_between(x, band[0], band[1], alpha=0.25)
    full = record.get("attention_full")
    if full is not None:
        for key, label, style in (("beta_explained", "beta I", "k:"), ("explained", "full A", "k--")):
            y = np.asarray(full[key], dtype=float)
            x = np.arange(1, len(y) + 1)
            ax.plot(x, y, style, marker="x", label=f"trained, {label}, held out")
            ax.fill_between(x, *np.asarray(full[f"{key}_interval"], dtype=float), color="k", alpha=0.1)  # None: NaN
    ax.set_xlabel("block")
    ax.set_ylabel("explained fraction of the tangent output")
    ax.legend(fontsize=7)
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def real_figures(record: dict, out: Path) -> dict[str, Path]:
    """The five figures of one ``real`` record into ``out``, keyed as ``FIGURES["real"]``: the verdict band, the
    statistics, the kernel, the common share, the attention's fit."""
    names, out = FIGURES["real"], Path(out)
    draw = {"band": lambda r, p: band_figure([r], p), "statistics": statistics_figure, "kernel": kernel_figure,
            "share": share_figure, "attention": attention_figure}  # fmt: skip
    return {key: fn(record, out / names[key]) for key, fn in draw.items()}


def models_figure(records: Sequence[dict], out: Path) -> Path:
    """The verdict figure of several models' records, one panel each, into ``out``."""
    return band_figure(records, Path(out) / FIGURES["real"]["models"])
