"""The figures of the field's experiments (docs/field.md): one function per experiment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

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
    crossing, the particles' bracket of it (shaded) and the branch's predicted beta_c(delta)."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for d, beta in result.beta.items():
        x = np.asarray(beta) / result.beta_crit[d]
        mean = np.asarray(result.order[d])
        err = [mean - np.asarray(result.order_lo[d]), np.asarray(result.order_hi[d]) - mean]
        line = ax.errorbar(x, mean, yerr=err, fmt="o-", ms=3, capsize=2, label=f"d = {d}")
        ax.axvline(result.beta_crit_predicted[d] / result.beta_crit[d], ls=":", color=line[0].get_color())
        lo, hi = result.beta_crit_sim_lo[d], result.beta_crit_sim_hi[d]
        if lo is not None and hi is not None:  # the particles' 95 % bracket of the crossing
            ax.axvspan(lo / result.beta_crit[d], hi / result.beta_crit[d], color=line[0].get_color(), alpha=0.12)
    ax.axhline(level, color="grey", lw=0.8)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xlabel("beta / beta*_d  (black: beta*_d; dotted: branch's beta_c(delta); shaded: particles' bracket)")
    ax.set_ylabel("|mean X| at K = (1 - delta) K_#")
    ax.set_title("independent noise: clustered states below K_# above beta*_d")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def context_chaos_figure(result: Any, path: Path) -> Path:
    """The deviation against n (left: the token, forward; right: beta trained by online gradient descent,
    backward), log-log, with 95 % error bars, the fits, n^(-1/2) and the wrong rate n^(-1/d)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    for ax, prefix, ylabel, title in (
        (axes[0], "", "max over layers |x_l - x_l(infinite context)|", "forward: the distinguished token"),
        (axes[1], "backward_", "max over steps |beta_k - beta_k(infinite context)|", "backward: trained beta"),
    ):
        n = np.asarray(getattr(result, "backward_n" if prefix else "n"), float)
        dev = np.asarray(getattr(result, prefix + "deviation"))
        se = np.asarray(getattr(result, "backward_se" if prefix else "deviation_se"))
        slope, lo, hi = (getattr(result, prefix + k) for k in ("slope", "slope_lo", "slope_hi"))
        ax.errorbar(n, dev, yerr=1.96 * se, fmt="o", ms=3, capsize=2,
                    label=f"measured: slope {slope:.3f} [{lo:.3f}, {hi:.3f}]")  # fmt: skip
        ax.loglog(n, dev[0] * (n / n[0]) ** -0.5, ":", color="grey", label="n^(-1/2)")
        ax.loglog(n, dev[0] * (n / n[0]) ** result.wrong_slope, "--", color="grey",
                  label=f"n^({result.wrong_slope:.2f}) (wrong: -1/d)")  # fmt: skip
        ax.set(xlabel="context length n", ylabel=ylabel, title=title)
        ax.legend(fontsize=7)
    fig.suptitle("propagation of chaos in context length")
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


def low_temperature_figure(result: Any, path: Path) -> Path:
    """Left: W2(mu_T, mu_0) against beta with the Laplace prediction and the bound's rate; right: the escape time
    against beta with its first-order prediction. The fitted slopes' 95 % intervals in the legends (the runs are
    deterministic quadratures: no error bars)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
    beta = np.asarray(result.beta)
    left.loglog(beta, result.w2, "o", ms=4,
                label=f"W2: slope {result.slope:.3f} [{result.slope_lo:.3f}, {result.slope_hi:.3f}]")  # fmt: skip
    left.loglog(beta, result.w2_predicted, "-", color="grey", label="Laplace: L dt kappa / ((1 + dt) beta)")
    left.loglog(beta, result.w2[0] * (beta / beta[0]) ** -0.5, ":", color="grey", label="beta^(-1/2) (bound's rate)")
    left.set_xlabel("beta")
    left.set_ylabel("W2(mu_T, mu_0)")
    left.legend(fontsize=7)
    eb = np.asarray(result.escape_beta)
    right.loglog(eb, result.escape_time, "o", ms=4, label=f"escape: slope {result.escape_slope:.3f} "
                 f"[{result.escape_slope_lo:.3f}, {result.escape_slope_hi:.3f}]")  # fmt: skip
    right.loglog(eb, result.escape_predicted, "-", color="grey", label="first order: eps beta (1 + dt) / kappa")
    right.loglog(eb, result.escape_time[0] * np.log(eb) / np.log(eb[0]), ":", color="grey", label="~ log beta")
    right.set_xlabel("beta")
    right.set_ylabel("first t with W2(mu_t, mu_0) > eps")
    for axis in (right.xaxis, right.yaxis):
        axis.set_minor_formatter(NullFormatter())
    right.legend(fontsize=7)
    fig.suptitle("low temperature: the token law stays near mu_0 (the zero-temperature push-forward)")
    return save_figure(fig, path)
