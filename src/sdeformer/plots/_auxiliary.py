"""The figure of ``auxiliary`` (docs/field.md, "Auxiliary variables"): the token law against the predicted
push-forward of the positions' law, with the auxiliary part on and switched off."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ._save import save_figure

FLOOR = 1e-16  # W2 below float64's resolution drawn at this level


def _band(curves: list[list[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Geometric mean over seeds of ``(K, saves)`` curves and the 95 % t-interval of the mean of log10 W2."""
    from scipy.stats import t as student

    logs = np.log10(np.maximum(np.asarray(curves, float), FLOOR))  # (K, saves)
    half = float(student.ppf(0.975, logs.shape[0] - 1)) * logs.std(0, ddof=1) / math.sqrt(logs.shape[0])
    mean = logs.mean(0)
    return 10**mean, 10 ** (mean - half), 10 ** (mean + half)


def auxiliary_figure(result: Any, path: Path) -> Path:
    """Left: W2(mu_t, mu*) against t per d (geometric mean over seeds, 95 % band), auxiliary part on (solid) and
    off (dashed), with the theory's rate e^{-r t}. Right: the smallest d's tokens at T (seed 0), their angle in the
    first rotation plane against their position's angle, with the predicted push-forward c - phi."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    t = np.asarray(result.t)
    for i, d in enumerate(result.dims):
        color = f"C{i}"
        for curves, style, label in ((result.w2, "-", "on"), (result.w2_off, "--", "off")):
            mean, lo, hi = _band(curves[str(d)])
            left.semilogy(t, mean, style, color=color, label=f"d = {d}, auxiliary {label}")
            left.fill_between(t, lo, hi, color=color, alpha=0.25)
    mean, _, _ = _band(result.w2[str(result.dims[0])])
    anchor = int(np.argmax(mean < 1e-4)) if (mean < 1e-4).any() else 0
    left.semilogy(t[anchor:], mean[anchor] * np.exp(-result.theory_rate * (t[anchor:] - t[anchor])), ":",
                  color="black", label=f"e^(-r t), r = ln(1 + dt)/dt = {result.theory_rate:.4f}")  # fmt: skip
    left.set_ylim(FLOOR / 2, 10)
    left.set_xlabel("depth t (layers x dt)")
    left.set_ylabel("W2(token law, predicted push-forward)")
    left.legend(fontsize=6, ncol=2)
    two_pi = 2 * math.pi
    position = np.mod(result.example_position, two_pi)
    predicted = np.mod(result.example_predicted, two_pi)
    predicted[1:][np.abs(np.diff(predicted)) > math.pi] = np.nan  # no line across the wrap at 2 pi
    right.plot(position, predicted, "-", color="grey", lw=3, alpha=0.6, label="predicted: R(phi)^T c (push-forward)")
    right.plot(position, np.mod(result.example_angle, two_pi), "o", ms=3, label="tokens at T, auxiliary on")
    right.plot(position, np.mod(result.example_angle_off, two_pi), "x", ms=3, label="tokens at T, auxiliary off")
    right.set_xlabel("position angle phi_i (first rotation plane)")
    right.set_ylabel("token angle in the first plane at T")
    right.set_title(f"d = {result.dims[0]}, seed 0", fontsize=9)
    right.legend(fontsize=7)
    fig.suptitle("positions as auxiliary variables: the token law is the push-forward, not a point mass")
    return save_figure(fig, path)
