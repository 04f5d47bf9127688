"""The figures of the field's experiments (docs/field.md): one function per experiment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from . import save_figure


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
