"""Figures of the theorem checks (THEORY sections 2-5): rates, energy decay, Lyapunov, phase diagram.

Each function takes the typed result of its check (``sdeformer.experiments``) and writes one PNG atomically;
``theorem_figures`` draws all of report part two. The experiments never import this module (their callers draw).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.ticker import NullFormatter, NullLocator

from ._names import FIGURES, SYNC_PANELS
from ._save import plt, save_figure

if TYPE_CHECKING:
    from ..experiments._lyapunov import LyapunovRow
    from ..experiments._phase import PhaseResult
    from ..experiments._rates.measure import RatesResult
    from ..experiments._sync.check import SyncResult
    from ..experiments._theorems import TheoremResults

RATE_LABELS = {
    "depth": ("layers L", "E sup_t mean |X^L - X|^2"),
    "width": ("width m", "E sup_t mean |X^m - X^inf|^2"),
    "tokens": ("tokens N", "E sup_t W_2^2(mu^N_t, mu_t)"),
}


def rate_figure(result: RatesResult, path: Path) -> Path:
    """Log-log error against x with the fitted slope and a line of the theory's slope through the first point."""
    x, err = np.asarray(result.x, float), np.asarray(result.error, float)
    samples = np.asarray(result.samples, float)  # (len(x), R)
    se = samples.std(1, ddof=1) / np.sqrt(samples.shape[1])
    fig, ax = plt.subplots(figsize=(4.6, 3.6))
    lo, hi = result.slope_ci
    ax.errorbar(
        x,
        err,
        yerr=1.96 * se,
        fmt="o-",
        color="C0",
        capsize=3,
        label=f"measured, slope {result.slope:.2f} [{lo:.2f}, {hi:.2f}]",
    )
    ax.plot(
        x,
        err[0] * (x / x[0]) ** result.expected_slope,
        "--",
        color="C3",
        label=f"theory slope {result.expected_slope:.2f}",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels of a short log axis overlap
    xl, yl = RATE_LABELS[result.kind]
    ax.set_xlabel(xl)
    ax.set_ylabel(yl)
    ax.set_title(f"{result.kind} rate", fontsize=10)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def energy_figure(results: Sequence[SyncResult], path: Path) -> Path:
    """E E_beta(t) (SDE and discrete, with bands) against the theorem's bound (where it applies) and the
    resolution floor, one panel per setting titled with its verdict."""
    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.5), squeeze=False)
    for ax, r in zip(axes[0], results):
        t = np.asarray(r.t)  # (S,)
        for key, color, label in (("sde", "C0", "SDE"), ("discrete", "C2", "discrete")):
            mean, ci = np.asarray(r.energy_mean[key]), np.asarray(r.energy_ci[key])  # (S,)
            ax.plot(t, mean, color=color, label=f"{label}, rate {r.measured_rate[key]:.2f}")
            ax.fill_between(t, np.maximum(mean - ci, 0.1 * r.floor), mean + ci, color=color, alpha=0.25)
        if r.theorem_applies:
            label = f"bound, rate {r.predicted_rate:.2f}"
            ax.plot(t, np.maximum(r.bound, 0.1 * r.floor), "--", color="C3", label=label)
        ax.axhline(r.floor, color="gray", lw=0.8, ls=":", label=f"resolution floor {r.floor:.1g}")
        ax.set_ylim(bottom=0.1 * r.floor)
        ax.set_yscale("log")
        ax.set_xlabel("t")
        ax.set_ylabel("E E_beta")
        ax.set_title(f"{r.label} ({r.verdict})", fontsize=8)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def lyapunov_figure(rows: Sequence[LyapunovRow], path: Path) -> Path:
    """Measured Lyapunov exponent (with 95% interval) against lambda_1, one point per setting, named in a legend
    beside the plot (labels written at the points overlap where lambda_1 values are close)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    pred = np.array([r.lambda1 for r in rows])
    meas = np.array([r.measured for r in rows])
    markers = "osD^v<>p"
    for i, r in enumerate(rows):
        ax.errorbar(
            r.lambda1, r.measured, yerr=r.ci, fmt=markers[i % len(markers)], color=f"C{i}", capsize=3, label=r.label
        )
    lim = [min(pred.min(), meas.min()) - 0.05, max(pred.max(), meas.max()) + 0.05]
    ax.plot(lim, lim, "--", color="gray", label="measured = lambda_1")
    # symmetric log axes (the same on both: the diagonal stays straight): exponents span -10 .. 0.3
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_xlabel("lambda_1 (THEORY section 2; symlog axis)")
    ax.set_ylabel("measured top Lyapunov exponent (symlog)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.subplots_adjust(left=0.13, right=0.62, bottom=0.13, top=0.95)
    return save_figure(fig, path, tight=False)


def phase_figure(result: PhaseResult, path: Path) -> Path:
    """Heat maps of P(sync) over (d on a log axis, bias std), one panel per (activation, attention scale), with
    the lambda_bar = 0 contour of the kernel theory overlaid and the lambda_bar < 0 side hatched, unless the
    theorem does not apply to the run's parts (``result.not_applicable``: then no prediction is drawn and the
    colour bar says so)."""
    acts, scales = result.activations, result.scales
    dims, biases = np.asarray(result.dims), np.asarray(result.bias_stds)
    prob = np.asarray(result.probability)  # (A, D, B, S)
    fig, axes = plt.subplots(len(scales), len(acts), figsize=(3.2 * len(acts), 2.8 * len(scales)), squeeze=False)
    mids = np.sqrt(dims[1:] * dims[:-1])  # cell edges halfway between the dims on the log axis
    d_edges = np.concatenate([[dims[0] ** 2 / mids[0]], mids, [dims[-1] ** 2 / mids[-1]]])
    b_edges = np.arange(len(biases) + 1) - 0.5  # bias std: one row per value (0 is among them: no log axis)
    for j, act in enumerate(acts):
        lb = np.asarray(result.lambda_bar_fine[act])  # (Df, Bf)
        for i, s in enumerate(scales):
            ax = axes[i][j]
            ax.pcolormesh(d_edges, b_edges, prob[j, :, :, i].T, vmin=0, vmax=1, cmap="viridis")
            ax.set_xscale("log")  # d is log-spaced
            fb = np.interp(result.bias_fine, biases, np.arange(len(biases)))
            if lb.min() < 0 < lb.max() and not result.not_applicable:
                ax.contour(result.dims_fine, fb, lb.T, levels=[0.0], colors="red", linewidths=1.5)
                ax.contourf(result.dims_fine, fb, lb.T, levels=[lb.min() - 1, 0.0], colors="none", hatches=["//"])
            ax.set_xticks(dims, [str(d) for d in dims], fontsize=7)
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xlim(d_edges[0], d_edges[-1])
            ax.set_yticks(range(len(biases)), [f"{b:g}" for b in biases], fontsize=7)
            ax.set_title(f"{act}, scale {s:+g}", fontsize=8)
            if i == len(scales) - 1:
                ax.set_xlabel("d", fontsize=8)
            if j == 0:
                ax.set_ylabel("bias std", fontsize=8)
    fig.subplots_adjust(hspace=0.35)
    scale = ScalarMappable(Normalize(0, 1), "viridis")  # the panels' colour scale (also with no panel)
    label = "P(sync); hatched: lambda_bar < 0 (red: lambda_bar = 0)"
    if result.not_applicable:
        label = "P(sync); theorem not applicable (" + ", ".join(result.not_applicable) + "): no prediction drawn"
    fig.colorbar(scale, ax=axes, shrink=0.6, label=label)
    return save_figure(fig, path)


def theorem_figures(results: TheoremResults, folder: Path) -> list[Path]:
    """Every figure of report part two into ``folder``: the rates, the two sync panels, Lyapunov, phase."""
    names = FIGURES["theorems"]
    paths = [rate_figure(r, folder / r.figure) for r in results.rates]
    paths += [energy_figure(results.sync[part], folder / name) for name, part in SYNC_PANELS.items()]
    paths.append(lyapunov_figure(results.lyapunov.rows, folder / names["lyapunov"]))
    paths.append(phase_figure(results.phase, folder / names["phase"]))
    return paths
