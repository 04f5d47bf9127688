"""Figures of the theorem checks (THEORY sections 2-5): rates, energy decay, Lyapunov, phase diagram.

Each function takes the typed result of its check (``sdeformer.experiments``) and writes one PNG atomically.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import plt, save_figure

if TYPE_CHECKING:
    from ..experiments.lyapunov import LyapunovRow
    from ..experiments.phase import PhaseResult
    from ..experiments.rates import RatesResult
    from ..experiments.sync import SyncResult

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
    xl, yl = RATE_LABELS[result.kind]
    ax.set_xlabel(xl)
    ax.set_ylabel(yl)
    ax.set_title(f"{result.kind} rate", fontsize=10)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def energy_figure(results: Sequence[SyncResult], path: Path) -> Path:
    """E E_beta(t) (SDE and discrete, with bands) against the theorem's bound, one panel per setting."""
    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.5), squeeze=False)
    for ax, r in zip(axes[0], results):
        t = np.asarray(r.t)  # (S,)
        for key, color, label in (("sde", "C0", "SDE"), ("discrete", "C2", "discrete")):
            mean, ci = np.asarray(r.energy_mean[key]), np.asarray(r.energy_ci[key])  # (S,)
            ax.plot(t, mean, color=color, label=f"{label}, rate {r.measured_rate[key]:.2f}")
            ax.fill_between(t, np.maximum(mean - ci, 1e-12), mean + ci, color=color, alpha=0.25)
        ax.plot(t, r.bound, "--", color="C3", label=f"bound, rate {r.predicted_rate:.2f}")
        ax.set_yscale("log")
        ax.set_xlabel("t")
        ax.set_ylabel("E E_beta")
        ax.set_title(r.label + (" (holds)" if r.bound_holds else " (violated)"), fontsize=8)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def lyapunov_figure(rows: Sequence[LyapunovRow], path: Path) -> Path:
    """Measured Lyapunov exponent (with 95% interval) against lambda_1, one point per setting."""
    fig, ax = plt.subplots(figsize=(4.6, 4.0))
    pred = np.array([r.lambda1 for r in rows])
    meas = np.array([r.measured for r in rows])
    ci = np.array([r.ci for r in rows])
    ax.errorbar(pred, meas, yerr=ci, fmt="o", capsize=3)
    for r in rows:
        ax.annotate(r.label, (r.lambda1, r.measured), fontsize=6, xytext=(3, 3), textcoords="offset points")
    lim = [min(pred.min(), meas.min()) - 0.05, max(pred.max(), meas.max()) + 0.05]
    ax.plot(lim, lim, "--", color="gray", label="measured = lambda_1")
    ax.set_xlabel("lambda_1 (THEORY section 2)")
    ax.set_ylabel("measured top Lyapunov exponent")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def phase_figure(result: PhaseResult, path: Path) -> Path:
    """Heat maps of P(sync) over (d, bias std), one panel per (activation, attention scale), with the
    lambda_bar = 0 contour of the kernel theory overlaid."""
    acts, scales = result.activations, result.scales
    dims, biases = np.asarray(result.dims), np.asarray(result.bias_stds)
    prob = np.asarray(result.probability)  # (A, D, B, S)
    fig, axes = plt.subplots(len(scales), len(acts), figsize=(3.2 * len(acts), 2.8 * len(scales)), squeeze=False)
    for j, act in enumerate(acts):
        lb = np.asarray(result.lambda_bar_fine[act])  # (Df, Bf)
        for i, s in enumerate(scales):
            ax = axes[i][j]
            im = ax.imshow(
                prob[j, :, :, i].T,
                origin="lower",
                aspect="auto",
                vmin=0,
                vmax=1,
                cmap="viridis",
                extent=(-0.5, len(dims) - 0.5, -0.5, len(biases) - 0.5),
            )
            fd = np.interp(result.dims_fine, dims, np.arange(len(dims)))
            fb = np.interp(result.bias_fine, biases, np.arange(len(biases)))
            if lb.min() < 0 < lb.max():
                ax.contour(fd, fb, lb.T, levels=[0.0], colors="red", linewidths=1.5)
            ax.set_xticks(range(len(dims)), [str(d) for d in dims], fontsize=7)
            ax.set_yticks(range(len(biases)), [f"{b:g}" for b in biases], fontsize=7)
            ax.set_title(f"{act}, scale {s:+g}", fontsize=8)
            if i == len(scales) - 1:
                ax.set_xlabel("d", fontsize=8)
            if j == 0:
                ax.set_ylabel("bias std", fontsize=8)
    fig.colorbar(im, ax=axes, shrink=0.6, label="P(sync)")
    return save_figure(fig, path)
