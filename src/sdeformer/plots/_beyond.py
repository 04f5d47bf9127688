"""Figures of report part 3 (BEYOND.md), each with its theory curve where BEYOND.md gives one:
checks.png (partial-noise gap vs rho with the quadrature; value-noise and quadratic-form P(antipodal) against
the scale function's exit probability through -1 + delta before 1 - delta, the records' delta, with the
delta -> 0 limit dashed and beta_c(d) dotted; resampled heads against the corrected logistic law the check
uses, the records' ``predicted`` at ``tau_reached``, with the plain logistic dotted),
partial_width.png (cluster width vs 1 - rho with attention on; dashed: attention off, BEYOND 1),
side_by_side.png (E_beta, P(one cluster), antipodal pairs against t) and phase.png (P(one cluster) over (beta, d)).
Each PNG is written atomically (``plots.save_figure``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize

from ..theory import _quadrature as q
from ._names import FIGURES
from ._save import plt, save_figure

ENERGY_FLOOR = 1e-17  # E_beta of coinciding tokens is 0 up to rounding (possibly negative): clipped for log axes


def _points(ax, recs, x_key, label, **kw):
    """Measured values of ``recs`` at ``setting[x_key]`` (or the record's own ``x_key``), bars 3 s.e."""
    xs = [r["setting"].get(x_key, r.get(x_key)) for r in recs]
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
    _value_panel(axes[1], [c for c in checks if c["model"] == "value_noise" and c["quantity"] == "p_antipodal"])
    _quadratic_panel(axes[2], [c for c in checks if c["model"] == "quadratic_form" and c["quantity"] == "p_antipodal"])
    _heads_panel(axes[3], [c for c in checks if c["model"] == "resampled_heads"])
    fig.tight_layout()
    save_figure(fig, path, dpi=110, tight=False)


def _exit_ends(recs: list[dict]) -> tuple[float, float]:
    """The absorption ends (-1 + delta, 1 - delta) of the P(antipodal) records (one delta for all)."""
    delta = recs[0]["setting"]["delta"]
    return -1.0 + delta, 1.0 - delta


def _value_panel(ax, anti: list[dict]) -> None:
    """BEYOND 2: P(antipodal | u0 = 0) against beta, the delta-exit curve (solid), its delta -> 0 limit
    (dashed) and beta_c(d) (dotted)."""
    betas = np.linspace(0.05, 5, 60)
    for dim in sorted({c["setting"]["dim"] for c in anti}):
        lo, hi = _exit_ends(anti)
        curve = [q.exit_probability(*q.value_noise_coefficients(b, dim), 0.0, lo, hi) for b in betas]
        (line,) = ax.plot(betas, curve, label=f"exit through -1 + {1 + lo:g}, d={dim}")
        ax.plot(betas, [q.value_noise_antipodal(b, dim) for b in betas], color=line.get_color(), ls="--", lw=0.8)
        ax.axvline(q.value_noise_beta_c(dim), color=line.get_color(), ls=":")
        _points(ax, [c for c in anti if c["setting"]["dim"] == dim], "beta", f"chain d={dim}", color=line.get_color())
    ax.set(xlabel="beta", ylabel="P(antipodal | u0 = 0)", title="value noise (dashed: delta -> 0; dotted: beta_c)")
    ax.legend(fontsize=7)


def _quadratic_panel(ax, anti: list[dict]) -> None:
    """BEYOND 4: P(antipodal) against theta_0 / pi, the delta-exit curve (solid) and theta_0 / pi (dashed)."""
    ax.plot([0, 1], [0, 1], "k--", lw=0.8, label="theta0 / pi (delta -> 0)")
    if anti:
        lo, hi = _exit_ends(anti)
        thetas = np.linspace(np.arccos(hi), np.arccos(lo), 80)[1:-1]  # u0 = cos theta inside (lo, hi)
        curve = [q.exit_probability(*q.quadratic_form_coefficients(), np.cos(t), lo, hi) for t in thetas]
        ax.plot(thetas / np.pi, curve, "k-", label=f"exit through -1 + {1 + lo:g}")
    for dim in sorted({c["setting"]["dim"] for c in anti}):
        _points(ax, [c for c in anti if c["setting"]["dim"] == dim], "theta0_over_pi", f"chain n={dim}")
    ax.set(xlabel="theta0 / pi", ylabel="P(antipodal)", title="random quadratic form")
    ax.legend(fontsize=7)


def _heads_panel(ax, heads: list[dict]) -> None:
    """BEYOND 3: E m against the tau each run reached, the corrected logistic law of the check (solid, the
    records' ``predicted``) and the plain logistic from the same m(0) (dotted)."""
    for dim in sorted({c["setting"]["dim"] for c in heads}):
        recs = sorted((c for c in heads if c["setting"]["dim"] == dim), key=lambda c: c["tau_reached"])
        taus = [c["tau_reached"] for c in recs]
        (line,) = ax.plot(taus, [c["predicted"] for c in recs], "-", label=f"corrected law d={dim}")
        ax.plot(taus, [c["logistic"] for c in recs], ":", color=line.get_color())
        _points(ax, recs, "tau_reached", f"measured d={dim}", color=line.get_color())
    ax.set(xlabel="tau = alpha eta l", ylabel="mean overlap m", title="resampled heads, beta = 0 (dotted: logistic)")
    ax.legend(fontsize=7)


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
    save_figure(fig, path, dpi=110, tight=False)


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
    save_figure(fig, path, dpi=110, tight=False)


def _phase_figure(phase: dict, path: Path) -> None:
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    for ax, name in zip(axes, ("mlp", "value", "quadratic", "heads")):
        ax.imshow(np.array(phase[name]["p_one_cluster"]), origin="lower", vmin=0, vmax=1, aspect="auto")
        ax.set(
            xticks=range(len(phase["betas"])),
            xticklabels=phase["betas"],
            yticks=range(len(phase["dims"])),
            yticklabels=phase["dims"],
            xlabel="beta",
            ylabel="d",
            title=f"{name}: P(one cluster)",
        )
    fig.colorbar(ScalarMappable(Normalize(0, 1)), ax=axes.tolist())  # the panels' scale (default colour map)
    save_figure(fig, path, dpi=110, tight=False)


def write_figures(result, folder: Path) -> None:
    """The four PNGs of part 3 into ``folder``."""
    names = FIGURES["beyond"]
    _checks_figure(list(result.checks), folder / names["checks"])
    _width_figure(result.partial_width, folder / names["partial_width"])
    _side_figure(result.side_by_side, folder / names["side_by_side"])
    _phase_figure(result.phase, folder / names["phase"])
