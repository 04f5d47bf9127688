"""The figure of the field's ``heads`` experiment (docs/field.md, "Many heads")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ._save import save_figure


def _bars(ax: Any, x: np.ndarray, mean: Any, lo: Any, hi: Any, label: str) -> None:
    """Points with their 95 % interval [lo, hi] as error bars."""
    mean = np.asarray(mean, float)
    ax.errorbar(x, mean, yerr=[mean - np.asarray(lo), np.asarray(hi) - mean], fmt="o", ms=3, capsize=2, label=label)


def heads_figure(result: Any, path: Path) -> Path:
    """Left: the RMS deviation against H with 95 % intervals, the 1/H model and the wrong 1/sqrt(H) model, and
    H^(-1/2). Middle: the deviation against L at fixed H with L^(-1/2) and the bound's L^(-1/3). Right: the
    trained hidden states' spread over initialisations against H. Bottom right: the backpropagated variables'
    deviation (first layer and averaged over layers) against H, with the wrong model and H^(-1/2)."""
    fig, ((left, right), (trained, adjoint)) = plt.subplots(2, 2, figsize=(12, 8), layout="constrained")
    h, dev = np.asarray(result.heads, float), np.asarray(result.deviation)
    for mean, lo, hi, label in (
        (dev, result.deviation_lo, result.deviation_hi,
         f"heads / H: slope {result.slope:.3f} [{result.slope_lo:.3f}, {result.slope_hi:.3f}]"),
        (np.asarray(result.wrong_deviation), result.wrong_deviation_lo, result.wrong_deviation_hi,
         f"wrong, heads / sqrt(H): slope {result.wrong_slope:.3f} [{result.wrong_slope_lo:.3f}, "
         f"{result.wrong_slope_hi:.3f}]"),
    ):  # fmt: skip
        _bars(left, h, mean, lo, hi, label)
    left.loglog(h, dev[0] * h**result.theory_slope, ":", color="grey", label="H^(-1/2) (the paper's exponent)")
    left.set_xscale("log", base=2)
    left.set(xlabel="heads per layer H", ylabel="RMS |x(L) - x_inf(L)| over head draws",
             title=f"deviation from the H -> infinity limit, L = {result.depth}")  # fmt: skip
    left.legend(fontsize=7)
    n, ddev = np.asarray(result.layers, float), np.asarray(result.depth_deviation)
    _bars(
        right,
        n,
        ddev,
        result.depth_deviation_lo,
        result.depth_deviation_hi,
        f"measured: slope {result.depth_slope:.3f} [{result.depth_slope_lo:.3f}, {result.depth_slope_hi:.3f}]",
    )
    right.loglog(n, ddev[0] * (n / n[0]) ** -0.5, ":", color="grey", label="L^(-1/2) (leading order)")
    right.loglog(n, ddev[0] * (n / n[0]) ** result.bound_depth_slope, "--", color="grey",
                 label="L^(-1/3) (the paper's bound)")  # fmt: skip
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set(xlabel="depth L", ylabel="RMS |x(L) - x_inf(L)| over head draws",
              title=f"against depth at H = {result.depth_heads}")  # fmt: skip
    right.legend(fontsize=7)
    th, spread = np.asarray(result.train_heads, float), np.asarray(result.train_spread)
    _bars(
        trained,
        th,
        spread,
        result.train_spread_lo,
        result.train_spread_hi,
        f"after {result.train_steps} AdamW steps: slope {result.train_slope:.3f} "
        f"[{result.train_slope_lo:.3f}, {result.train_slope_hi:.3f}]",
    )
    trained.loglog(th, spread[0] * th**result.theory_slope, ":", color="grey", label="H^(-1/2)")
    trained.set_xscale("log", base=2)
    trained.set(xlabel="heads per layer H", ylabel="RMS spread of x(L) over initialisations",
                title=f"trained hidden states, L = {result.train_depth}")  # fmt: skip
    trained.legend(fontsize=7)
    ah, first = np.asarray(result.adjoint_heads, float), np.asarray(result.adjoint_deviation)
    for mean, lo, hi, label in (
        (first, result.adjoint_deviation_lo, result.adjoint_deviation_hi,
         f"first layer p_0: slope {result.adjoint_slope:.3f} [{result.adjoint_slope_lo:.3f}, "
         f"{result.adjoint_slope_hi:.3f}]"),
        (result.adjoint_layers_deviation, result.adjoint_layers_deviation_lo, result.adjoint_layers_deviation_hi,
         f"over layers: slope {result.adjoint_layers_slope:.3f} [{result.adjoint_layers_slope_lo:.3f}, "
         f"{result.adjoint_layers_slope_hi:.3f}]"),
        (result.adjoint_wrong_deviation, result.adjoint_wrong_deviation_lo, result.adjoint_wrong_deviation_hi,
         f"wrong, heads / sqrt(H), p_0: slope {result.adjoint_wrong_slope:.3f} "
         f"[{result.adjoint_wrong_slope_lo:.3f}, {result.adjoint_wrong_slope_hi:.3f}]"),
    ):  # fmt: skip
        _bars(adjoint, ah, mean, lo, hi, label)
    adjoint.loglog(ah, first[0] * ah**result.theory_slope, ":", color="grey", label="H^(-1/2)")
    adjoint.set_xscale("log", base=2)
    adjoint.set(xlabel="heads per layer H", ylabel="RMS |p - p_inf| over head draws",
                title=f"backpropagated variables p = N dPhi/dx, L = {result.depth}")  # fmt: skip
    adjoint.legend(fontsize=7)
    return save_figure(fig, path)
