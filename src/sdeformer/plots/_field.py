"""The figures of the field's experiments (docs/field.md): one function per experiment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ._save import save_figure


def long_context_figure(result: Any, path: Path) -> Path:
    """beta*(n) per d, log-log, with 95 % error bars and the fitted and theoretical slopes."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    n = np.asarray(result.n, float)
    for d, beta in result.beta_star.items():
        beta = np.asarray(beta)
        err = 1.96 * np.asarray(result.beta_star_se[d])
        line = ax.errorbar(n, beta, yerr=err, fmt="o", ms=3, capsize=2,
                           label=f"d = {d}: slope {result.slope[d]:.3f} [{result.slope_lo[d]:.3f}, "
                                 f"{result.slope_hi[d]:.3f}]")  # fmt: skip
        theory = beta[-1] * (n / n[-1]) ** result.theory_slope[d]
        ax.loglog(n, theory, ":", color=line[0].get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("context length n")
    ax.set_ylabel("beta*(n): E[max softmax weight] = 1/2")
    ax.set_title("long contexts: beta*(n) against n^(2/(d-1)) (dotted)")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def independent_noise_figure(result: Any, path: Path, level: float) -> Path:
    """The particles' order parameter against beta / beta*_d per d, with 95 % intervals, the level of the
    crossing and the branch's predicted beta_c(delta)."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for d, beta in result.beta.items():
        x = np.asarray(beta) / result.beta_crit[d]
        mean = np.asarray(result.order[d])
        err = [mean - np.asarray(result.order_lo[d]), np.asarray(result.order_hi[d]) - mean]
        line = ax.errorbar(x, mean, yerr=err, fmt="o-", ms=3, capsize=2, label=f"d = {d}")
        ax.axvline(result.beta_crit_predicted[d] / result.beta_crit[d], ls=":", color=line[0].get_color())
    ax.axhline(level, color="grey", lw=0.8)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xlabel("beta / beta*_d  (black: beta*_d; dotted: branch's beta_c(delta))")
    ax.set_ylabel("|mean X| at K = (1 - delta) K_#")
    ax.set_title("independent noise: clustered states below K_# above beta*_d")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def context_chaos_figure(result: Any, path: Path) -> Path:
    """The deviation against n, log-log, with 95 % error bars, the fit and the slope -1/2."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    n = np.asarray(result.n, float)
    dev = np.asarray(result.deviation)
    ax.errorbar(n, dev, yerr=1.96 * np.asarray(result.deviation_se), fmt="o", ms=3, capsize=2,
                label=f"measured: slope {result.slope:.3f} [{result.slope_lo:.3f}, {result.slope_hi:.3f}]")  # fmt: skip
    ax.loglog(n, dev[0] * (n / n[0]) ** -0.5, ":", color="grey", label="n^(-1/2)")
    ax.loglog(n, dev[0] * (n / n[0]) ** result.wrong_slope, "--", color="grey", label=f"n^({result.wrong_slope:.2f})")
    ax.set_xlabel("context length n")
    ax.set_ylabel("max over layers |x_l - x_l(infinite context)|")
    ax.set_title("propagation of chaos in context length")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def escape_figure(result: Any, path: Path) -> Path:
    """The mean cosine per layer, trained and frozen map, with the seeds' 95 % intervals; the trained map's norm
    per layer on a second axis; the peak layer's interval shaded."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    layer = np.asarray(result.layer)
    for name, key, color in (("trained map", "cosine", "C0"), ("frozen map (W = 0)", "cosine_frozen", "C1")):
        mean = np.asarray(getattr(result, key))
        ax.plot(layer, mean, "o-", ms=3, color=color, label=name)
        ax.fill_between(layer, getattr(result, key + "_lo"), getattr(result, key + "_hi"), color=color, alpha=0.25)
    ax.axvspan(result.peak_lo, result.peak_hi, color="C0", alpha=0.1, label="trained peak layer, 95 %")
    ax.set_xlabel("layer l")
    ax.set_ylabel("mean pairwise cosine")
    ax.legend(fontsize=7, loc="lower left")
    norm = ax.twinx()
    norm.bar(layer[1:], result.weight_norm, color="grey", alpha=0.3, width=0.6)
    norm.set_ylabel("|W_l| (trained, bars)")
    ax.set_title("training-induced escape from clustering")
    return save_figure(fig, path)
