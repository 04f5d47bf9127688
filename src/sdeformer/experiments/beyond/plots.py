"""Figures of report part 3 (BEYOND.md), each with its theory curve where BEYOND.md gives one:
checks.png (partial-noise gap vs rho with the quadrature, value-noise P(antipodal) vs beta with the scale
function and beta_c(d), quadratic-form P(antipodal) = theta_0 / pi, resampled-heads logistic law),
partial_width.png (cluster width vs 1 - rho with attention on; dashed: attention off, BEYOND 1),
side_by_side.png (E_beta, P(one cluster), antipodal pairs against t) and phase.png (P(one cluster) over (beta, d))."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from ...theory import quadrature as q

ENERGY_FLOOR = 1e-17  # E_beta of coinciding tokens is 0 up to rounding (possibly negative): clipped for log axes


def _points(ax, recs, x_key, label, **kw):
    xs = [r["setting"][x_key] for r in recs]
    ax.errorbar(
        xs,
        [r["measured"] for r in recs],
        yerr=[3 * r["standard_error"] for r in recs],
        fmt="o",
        label=label,
        capsize=2,
        **kw,
    )


def _checks_figure(checks: list[dict], path: Path) -> None:
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.2))
    ax = axes[0]
    for dim in sorted({c["setting"]["dim"] for c in checks if c["model"].startswith("partial")}):
        rhos = np.linspace(0.3, 0.995, 40)
        ax.plot(rhos, [q.partial_noise_gap("relu", dim, 0.1, 0.1, r) for r in rhos], label=f"quadrature d={dim}")
        for solver in ("sde", "discrete"):
            _points(
                ax,
                [c for c in checks if c["model"] == f"partial_{solver}" and c["setting"]["dim"] == dim],
                "share",
                f"{solver} d={dim}",
                ms=4,
            )
    ax.set(yscale="log", xlabel="share rho", ylabel="stationary E[1 - u]", title="partial noise, 2 tokens")
    ax.legend(fontsize=7)
    ax = axes[1]
    anti = [c for c in checks if c["model"] == "value_noise" and c["quantity"] == "p_antipodal"]
    for dim in sorted({c["setting"]["dim"] for c in anti}):
        betas = np.linspace(0.05, 5, 60)
        (line,) = ax.plot(betas, [q.value_noise_antipodal(b, dim) for b in betas], label=f"scale function d={dim}")
        ax.axvline(q.value_noise_beta_c(dim), color=line.get_color(), ls=":")
        _points(ax, [c for c in anti if c["setting"]["dim"] == dim], "beta", f"chain d={dim}", color=line.get_color())
    ax.set(xlabel="beta", ylabel="P(antipodal | u0 = 0)", title="value noise (dotted: beta_c(d))")
    ax.legend(fontsize=7)
    ax = axes[2]
    ax.plot([0, 1], [0, 1], "k-", label="theta0 / pi")
    for dim in sorted(
        {c["setting"]["dim"] for c in checks if c["quantity"] == "p_antipodal" and c["model"] == "quadratic_form"}
    ):
        _points(
            ax,
            [
                c
                for c in checks
                if c["model"] == "quadratic_form" and c["quantity"] == "p_antipodal" and c["setting"]["dim"] == dim
            ],
            "theta0_over_pi",
            f"chain n={dim}",
        )
    ax.set(xlabel="theta0 / pi", ylabel="P(antipodal)", title="random quadratic form")
    ax.legend(fontsize=7)
    ax = axes[3]
    heads = [c for c in checks if c["model"] == "resampled_heads"]
    for dim in sorted({c["setting"]["dim"] for c in heads}):
        _points(ax, [c for c in heads if c["setting"]["dim"] == dim], "tau", f"d={dim}")
    if heads:
        m0 = heads[0]["predicted"]
        tau0 = heads[0]["setting"]["tau"]
        start = m0 / (m0 + (1 - m0) * np.exp(tau0))  # back out m(0) of the logistic through the first point
        taus = np.linspace(0, max(c["setting"]["tau"] for c in heads), 100)
        ax.plot(taus, q.logistic(taus, start), "k-", label="logistic")
    ax.set(xlabel="tau = alpha eta l", ylabel="mean overlap m", title="resampled heads, beta = 0")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _width_figure(width: dict, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    rows = [r for r in width["rows"] if r["share"] < 1]
    for key in sorted({(r["activation"], r["beta"]) for r in rows}):
        sel = [r for r in rows if (r["activation"], r["beta"]) == key]
        ax.errorbar(
            [1 - r["share"] for r in sel],
            [r["width"] for r in sel],
            yerr=[3 * r["width_se"] for r in sel],
            marker="o",
            capsize=2,
            label=f"{key[0]} (lambda_bar {sel[0]['lambda_bar']:+.3f}), beta={key[1]}",
        )
    gaps = np.geomspace(min(1 - r["share"] for r in rows), max(1 - r["share"] for r in rows), 12)
    ax.plot(
        gaps,
        [q.partial_noise_gap("relu", width["dim"], 0.1, 0.1, 1 - g) for g in gaps],
        "k--",
        label="attention off, 2 tokens (BEYOND 1)",
    )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="1 - rho",
        ylabel="stationary width E[1 - cos]",
        title=f"partial noise with attention, N={width['tokens']}, d={width['dim']}",
    )
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _side_figure(side: dict, path: Path) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for name in ("mlp", "value", "quadratic", "heads"):
        d = side[name]
        axes[0].plot(d["t"], np.maximum(d["energy"], ENERGY_FLOOR), label=name)
        axes[1].plot(d["t"], d["p_one_cluster"], label=name)
        axes[2].plot(d["t"], d["antipodal_pairs"], label=name)
    axes[0].set(yscale="log", xlabel="t", ylabel="E_beta", title=f"matched noise, beta={side['beta']}")
    axes[1].set(xlabel="t", ylabel="P(one cluster)")
    axes[2].set(xlabel="t", ylabel="fraction of antipodal pairs")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _phase_figure(phase: dict, path: Path) -> None:
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    for ax, name in zip(axes, ("mlp", "value", "quadratic", "heads")):
        im = ax.imshow(np.array(phase[name]["p_one_cluster"]), origin="lower", vmin=0, vmax=1, aspect="auto")
        ax.set(
            xticks=range(len(phase["betas"])),
            xticklabels=phase["betas"],
            yticks=range(len(phase["dims"])),
            yticklabels=phase["dims"],
            xlabel="beta",
            ylabel="d",
            title=f"{name}: P(one cluster)",
        )
    fig.colorbar(im, ax=axes.tolist())
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_figures(result, folder: Path) -> None:
    """The four PNGs of part 3 into ``folder``."""
    _checks_figure(list(result.checks), folder / "checks.png")
    _width_figure(result.partial_width, folder / "partial_width.png")
    _side_figure(result.side_by_side, folder / "side_by_side.png")
    _phase_figure(result.phase, folder / "phase.png")
