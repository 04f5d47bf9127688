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
    _against_heads(
        left,
        h,
        [
            (dev, result.deviation_lo, result.deviation_hi,
             f"heads / H: slope {result.slope:.3f} [{result.slope_lo:.3f}, {result.slope_hi:.3f}]"),
            (result.wrong_deviation, result.wrong_deviation_lo, result.wrong_deviation_hi,
             f"wrong, heads / sqrt(H): slope {result.wrong_slope:.3f} [{result.wrong_slope_lo:.3f}, "
             f"{result.wrong_slope_hi:.3f}]"),
        ],
        result.theory_slope,
        "RMS |x(L) - x_inf(L)| over head draws",
        f"deviation from the H -> infinity limit, L = {result.depth}",
    )  # fmt: skip
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
    _against_heads(
        trained,
        np.asarray(result.train_heads, float),
        [
            (result.train_spread, result.train_spread_lo, result.train_spread_hi,
             f"after {result.train_steps} AdamW steps: slope {result.train_slope:.3f} "
             f"[{result.train_slope_lo:.3f}, {result.train_slope_hi:.3f}]"),
        ],
        result.theory_slope,
        "RMS spread of x(L) over initialisations",
        f"trained hidden states, L = {result.train_depth}",
    )  # fmt: skip
    _against_heads(
        adjoint,
        np.asarray(result.adjoint_heads, float),
        [
            (result.adjoint_deviation, result.adjoint_deviation_lo, result.adjoint_deviation_hi,
             f"first layer p_0: slope {result.adjoint_slope:.3f} [{result.adjoint_slope_lo:.3f}, "
             f"{result.adjoint_slope_hi:.3f}]"),
            (result.adjoint_layers_deviation, result.adjoint_layers_deviation_lo,
             result.adjoint_layers_deviation_hi,
             f"over layers: slope {result.adjoint_layers_slope:.3f} [{result.adjoint_layers_slope_lo:.3f}, "
             f"{result.adjoint_layers_slope_hi:.3f}]"),
            (result.adjoint_wrong_deviation, result.adjoint_wrong_deviation_lo, result.adjoint_wrong_deviation_hi,
             f"wrong, heads / sqrt(H), p_0: slope {result.adjoint_wrong_slope:.3f} "
             f"[{result.adjoint_wrong_slope_lo:.3f}, {result.adjoint_wrong_slope_hi:.3f}]"),
        ],
        result.theory_slope,
        "RMS |p - p_inf| over head draws",
        f"backpropagated variables p = N dPhi/dx, L = {result.depth}",
    )  # fmt: skip
    return save_figure(fig, path)


def _against_heads(ax: Any, h: np.ndarray, series: list, slope: float, ylabel: str, title: str) -> None:
    """One panel against the heads per layer H (log2 axis): each of ``series`` (mean, lo, hi, label) with its 95 %
    interval, and H^slope through the first series' first point (the paper's exponent)."""
    for mean, lo, hi, label in series:
        _bars(ax, h, mean, lo, hi, label)
    first = float(np.asarray(series[0][0], float)[0])
    ax.loglog(h, first * h**slope, ":", color="grey", label=f"H^({slope:g}) (the paper's exponent)")
    ax.set_xscale("log", base=2)
    ax.set(xlabel="heads per layer H", ylabel=ylabel, title=title)
    ax.legend(fontsize=7)
