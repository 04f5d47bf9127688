"""Which part of the fitted stochastic transformer parts from the real model first (THEORY section 1; docs/real.md,
"The fitted model discriminates").

``ablations`` reruns the fitted model with its attention only (the noise off: ``x' = LN(Y)``) and with its noise
only (the attention off: ``Y = x``), from the same real embeddings, each with its paired distance to the real
statistics and its ``parts_at`` (``_fitted.compare``). ``propagated`` carries the fitted parameters' own
uncertainty through the simulation by a parametric bootstrap: ``DRAWS`` draws of every per-block parameter (beta_l,
s_l, sU, sW, rho_l, dt_l) from a normal with the point estimate as mean and its 95 % interval's width / 3.92 as
standard deviation (clipped to the parameter's domain), each run from the first ``BOOT_SENTENCES`` sentences; the
band of the mean difference fitted - real over the draws (2.5 and 97.5 % quantiles) and the first layer where it
excludes 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ._fitted import compare, simulate_fitted
from ._stats import LEVEL, layer_values

ABLATIONS = {"attention_only": (True, False), "noise_only": (False, True)}
DRAWS = 20
BOOT_SENTENCES = 8


def ablations(
    real: Sequence[torch.Tensor], real_values: dict, record: dict, dts: Sequence[float], seed: int, causal: bool
) -> dict:
    """Per ablation: the paired distance per statistic (``difference``, ``difference_interval``) and
    ``parts_at``."""
    out = {}
    for name, parts in ABLATIONS.items():
        runs = simulate_fitted([h[0] for h in real], record, dts, seed, causal, parts)
        got = compare(real_values, layer_values(runs, list(real_values)), seed)
        out[name] = {
            "parts_at": {k: v["parts_at"] for k, v in got.items()},
            "difference": {k: v["difference"] for k, v in got.items()},
            "difference_interval": {k: v["difference_interval"] for k, v in got.items()},
        }
    return out


def _draw(value: Sequence[float], interval: Sequence[Sequence[float]], rng, low: float, high: float) -> list[float]:
    sd = (np.asarray(interval[1], dtype=float) - np.asarray(interval[0], dtype=float)) / 3.92
    return np.clip(rng.normal(np.asarray(value, dtype=float), np.abs(sd)), low, high).tolist()


def perturbed(record: dict, dt: tuple[Sequence[float], Sequence], rng) -> tuple[dict, list[float]]:
    """One parametric-bootstrap draw of the fitted parameters: (a record part for ``simulate_fitted``, dt_l)."""
    fits = [row["fit_partial"] for row in record["kernel"]["layers"]]
    ci = record["kernel_fit_intervals"]["partial"]
    kernel = {
        k: _draw([f[k] for f in fits], ci[k], rng, 0.0, 1.0 if k == "share" else np.inf) for k in ("su", "sw", "share")
    }
    layers = [{"fit_partial": {k: kernel[k][i] for k in kernel}} for i in range(len(fits))]
    part = {
        "attention_beta": _draw(record["attention_beta"], record["attention_beta_interval"], rng, 0.0, np.inf),
        "attention_scale": _draw(record["attention_scale"], record["attention_scale_interval"], rng, -np.inf, np.inf),
        "kernel": {"layers": layers},
    }
    return part, _draw(dt[0], dt[1], rng, 0.0, np.inf)


def propagated(
    real: Sequence[torch.Tensor], real_values: dict, record: dict, dt: tuple, seed: int, causal: bool
) -> dict:
    """Per statistic: the band ``[lows, highs]`` (L + 1 each) of the mean difference fitted - real over the
    parametric-bootstrap draws and the first layer where it excludes 0 (``parts_at``, None when none does)."""
    rng = np.random.default_rng(seed)
    rows = real[:BOOT_SENTENCES]
    base = {k: v[:BOOT_SENTENCES] for k, v in real_values.items()}
    diffs: dict[str, list[np.ndarray]] = {k: [] for k in real_values}
    for draw in range(DRAWS):
        part, dts = perturbed(record, dt, rng)
        runs = simulate_fitted([h[0] for h in rows], part, dts, seed + 1 + draw, causal)
        for k, v in layer_values(runs, list(real_values)).items():
            diffs[k].append((v - base[k]).mean(0))
    q = (1 - LEVEL) / 2
    out: dict = {"draws": DRAWS, "sentences": len(rows)}
    for k, values in diffs.items():
        lo, hi = np.quantile(np.stack(values), [q, 1 - q], axis=0)
        apart = [i for i in range(1, len(lo)) if lo[i] > 0 or hi[i] < 0]
        out[k] = {"band": [lo.tolist(), hi.tolist()], "parts_at": apart[0] if apart else None}
    return out
