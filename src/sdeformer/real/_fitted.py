"""The stochastic transformer with a real model's per-layer fitted parameters, run from its embeddings and held
against its per-layer statistics (THEORY section 1; BEYOND section 1).

Block l of the fitted model, on the directions ``x`` of one sentence's real embeddings (same n and d):

    Y  = LN(x + s_l Attn_{beta_l}(x)),   x' = LN(Y + xi_l(Y)),   xi_l = sqrt(dt_l) (sqrt(rho_l) G + sqrt(1 - rho_l) G_i)

with beta_l, s_l from the attention fit, (sU, sW, rho) from the partial-noise kernel fit and ``dt_l`` matching
the real MLP output's size relative to its input, ``dt_l d kappa_l(1) = mean_i |f_i|^2 / |y_i|^2``. The distance
per statistic is the largest gap over layers between the fitted model's mean and the real one, in units of the
real statistic's interval half-width (gap / half-width), and the layer where it is largest. The fitted model
runs from the first ``SENTENCES`` sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..attention._softmax import softmax_attention
from ..core._kernel import kernel_theory
from ..core._rng import Streams
from ..core._sphere import project
from ..noise._mlp import MLPNoise
from ..noise._partial import PartialNoise
from ._stats import layer_statistics

WIDTH = 1536
SENTENCES = 64  # the fitted model runs from the first 64 sentences' embeddings (its bands: over those)


def steps(mlp_in: Sequence[torch.Tensor], mlp_out: Sequence[torch.Tensor], record: dict) -> list[float]:
    """dt_l per block from the relative size of the MLP's output (module docstring)."""
    ratio = torch.stack(
        [(f.double().pow(2).sum(-1) / y.double().pow(2).sum(-1)).mean(-1) for y, f in zip(mlp_in, mlp_out, strict=True)]
    ).mean(0)  # (L,)
    d = int(record["dim"])
    out = []
    for layer, row in enumerate(record["kernel"]["layers"]):
        fit = row["fit_partial"]
        out.append(float(ratio[layer]) / (d * kernel_theory("gelu", d, su=fit["su"], sw=fit["sw"]).kappa1))
    return out


@torch.no_grad()
def simulate_fitted(embeddings: Sequence[torch.Tensor], record: dict, dts: Sequence[float], seed: int = 0):
    """The fitted model's stream per sentence ``(L+1, n, d)`` from the real embeddings ``(n, d)`` each."""
    fits = [row["fit_partial"] for row in record["kernel"]["layers"]]
    streams = Streams(seed, (1,))
    runs = []
    for e in embeddings:
        x = project(e.double())[None]  # (1, n, d)
        states = [x[0]]
        for layer, fit in enumerate(fits):
            beta, s = record["attention_beta"][layer], record["attention_scale"][layer]
            y = project(x + s * softmax_attention(beta * x, x, x))
            noise = PartialNoise(MLPNoise("gelu", WIDTH, fit["su"], fit["sw"], sampling="conditional"), fit["share"])
            x = project(y + noise.increment(y, dts[layer], streams))
            states.append(x[0])
        runs.append(torch.stack(states))
    return runs


def compare(real: dict, fitted: dict) -> dict:
    """Per statistic: the fitted model's means, the largest gap over layers in units of the real interval's
    half-width, and its layer."""
    out = {}
    for name, r in real.items():
        mean, half = np.asarray(r["mean"]), (np.asarray(r["high"]) - np.asarray(r["low"])) / 2
        gap = np.abs(np.asarray(fitted[name]["mean"]) - mean) / np.maximum(half, 1e-12)
        out[name] = {
            "fitted": fitted[name]["mean"],
            "fitted_low": fitted[name]["low"],
            "fitted_high": fitted[name]["high"],
            "distance": float(gap[1:].max()),
            "worst_layer": int(gap[1:].argmax()) + 1,
        }
    return out


def fitted_model(cap, record: dict, seed: int = 0) -> dict:
    """The fitted stochastic transformer's per-layer statistics beside the real ones (``compare``), and dt_l."""
    dts = steps(cap.mlp_in, cap.mlp_out, record)
    runs = simulate_fitted([h[0] for h in cap.hidden[:SENTENCES]], record, dts, seed)
    direction = {k: v for k, v in layer_statistics(runs, seed).items() if k != "norm"}  # the model lives on the sphere
    real = {k: v for k, v in record["statistics"].items() if k != "norm"}
    return {"dt": dts, "statistics": compare(real, direction)}
