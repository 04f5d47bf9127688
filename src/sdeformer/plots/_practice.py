"""Figures of the practice results page (THEORY section 7): each method's validation curve and per-layer
synchronization, the MiniLM probe per layer, and random-batch inference against p. Each function takes what
the practice page read (the suite summary, a probe record, an inference record) and writes one PNG atomically;
``PRACTICE_FIGURES`` hands the three to the page's builder (``sdeformer.practice.build``).
"""

from __future__ import annotations

from pathlib import Path

from ..practice._report import Drawing
from ._save import plt, save_figure

LABEL = {"charlm": "validation loss (nats/char, lower is better)", "mnist": "validation accuracy (higher is better)"}


def methods_figure(task: str, summary: dict[str, dict], path: Path) -> Path:
    """Validation curves (mean ± std over seeds) and per-layer mean cosine and E_beta of every method."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    for name, s in summary.items():
        steps, mean, std = s["curve_steps"], s["curve_mean"], s["curve_std"]
        (line,) = axes[0].plot(steps, mean, label=name)
        axes[0].fill_between(
            steps,
            [m - e for m, e in zip(mean, std)],
            [m + e for m, e in zip(mean, std)],
            color=line.get_color(),
            alpha=0.15,
        )
        layers = range(1, len(s["layer_cos_mean"]) + 1)
        axes[1].errorbar(layers, s["layer_cos_mean"], yerr=s["layer_cos_std"], label=name, capsize=2)
        axes[2].errorbar(layers, s["layer_energy_mean"], yerr=s["layer_energy_std"], label=name, capsize=2)
    axes[0].set(xlabel="step", ylabel=LABEL[task], title=f"{task}: validation curve (mean ± std over seeds)")
    if task == "charlm":
        axes[0].set_ylim(top=min(3.5, max(max(s["curve_mean"]) for s in summary.values())))
    axes[1].set(xlabel="block", ylabel="mean pairwise token cosine", title="per-layer mean cosine (eval)")
    axes[2].set(xlabel="block", ylabel="E_beta (beta = 1)", title="per-layer interaction energy (eval)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)


def probe_figure(record: dict, label: str, path: Path) -> Path:
    """Mean pairwise cosine and E_beta per layer of one probe record: clean and at each noise scale."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    x = range(len(record["layers"]))
    axes[0].plot(x, record["mean_cos"], "k-o", label="clean")
    axes[1].plot(x, record["energy"], "k-o", label="clean")
    for row in record["noise_scales"]:
        axes[0].plot(x, row["mean_cos"], "-o", label=f"scale {row['scale']:g}")
        axes[1].plot(x, row["energy"], "-o", label=f"scale {row['scale']:g}")
    for ax, yl in zip(axes, ("mean pairwise cosine", "E_beta")):
        ax.set(xticks=list(x), xticklabels=record["layers"], ylabel=yl, title=label)
        ax.tick_params(axis="x", rotation=30)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)


def inference_figure(record: dict, label: str, path: Path) -> Path:
    """Perplexity against the random batch size p, with full attention and local blocks alone as lines."""
    fig, ax = plt.subplots(figsize=(6, 4))
    rb = [row for row in record["perplexity"] if row["p"]]
    for row in record["perplexity"]:
        if row["p"] == 0:
            ax.axhline(row["ppl"], color="g", ls=":", label=f"local blocks alone (b = {row['block']})")
    ax.errorbar(
        [row["p"] for row in rb],
        [row["ppl"] for row in rb],
        yerr=[row["ppl_std"] for row in rb],
        fmt="-o",
        label="block random batch",
    )
    ax.axhline(record["perplexity"][0]["ppl"], color="k", ls="--", label="full attention")
    ax.set(xscale="log", xlabel="random batch size p", ylabel="perplexity", title=f"random-batch inference, {label}")
    ax.set_xticks([row["p"] for row in rb], [str(row["p"]) for row in rb])
    ax.minorticks_off()
    ax.legend()
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)


PRACTICE_FIGURES = Drawing(methods=methods_figure, probe=probe_figure, inference=inference_figure)
