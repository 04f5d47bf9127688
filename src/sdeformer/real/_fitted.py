"""The stochastic transformer with a real model's per-layer fitted parameters, run from its embeddings and held
against its per-layer statistics (THEORY section 1; BEYOND section 1).

Block l of the fitted model, on the directions ``x`` of one sentence's real embeddings (same n and d):

    Y  = LN(x + s_l Attn_{beta_l}(x)),   x' = LN(Y + xi_l(Y)),   xi_l = sqrt(dt_l) (sqrt(rho_l) G + sqrt(1 - rho_l) G_i)

with beta_l, s_l from the attention fit, (sU, sW, rho) from the partial-noise kernel fit and ``dt_l`` matching
the real MLP output's size relative to its input, ``dt_l d kappa_l(1) = mean_i |f_i|^2 / |y_i|^2``. It runs from
the first ``SENTENCES`` sentences' embeddings, one run each; the distance per statistic and layer is the mean over
those sentences of (fitted - real) with its 95 % interval resampling sentences (paired: the same sentences, so
their spread cancels), given the fitted parameters (their own uncertainty is not propagated).
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
from ._stats import STATISTICS, bootstrap, layer_values

WIDTH = 1536
SENTENCES = 64  # the fitted model runs from the first 64 sentences' embeddings (its bands: over those)


def steps(mlp_in: Sequence[torch.Tensor], mlp_out: Sequence[torch.Tensor], record: dict, seed: int = 0):
    """(dt_l per block, its 95 % interval ``[low, high]`` resampling sentences with the kernel fit fixed) from the
    real angular step: the MLP output's part tangent to its input, ``dt_l (d - 1) kappa_l(1) =
    mean_i |P_i f_i|^2 / |y_i|^2`` (the radial part, which the sphere's projection removes, left out)."""
    ratios = []
    for y, f in zip(mlp_in, mlp_out, strict=True):
        y, f = y.double(), f.double()
        square = y.pow(2).sum(-1)  # (L, n)
        tangent = f.pow(2).sum(-1) - (f * y).sum(-1).pow(2) / square  # |P f|^2
        ratios.append((tangent / square).mean(-1).numpy())
    ratio = np.stack(ratios)  # (S, L)
    d = int(record["dim"])
    fits = [row["fit_partial"] for row in record["kernel"]["layers"]]
    scale = np.array([(d - 1) * kernel_theory("gelu", d, su=f["su"], sw=f["sw"]).kappa1 for f in fits])
    lo, hi = bootstrap(ratio, seed=seed) / scale
    return (ratio.mean(0) / scale).tolist(), [lo.tolist(), hi.tolist()]


def attend(x: torch.Tensor, beta: float, causal: bool) -> torch.Tensor:
    """``sum_j softmax_j(beta <x_i, x_j>) x_j`` over all j, or over j <= i for a causal model: ``(..., n, d)``."""
    if not causal:
        return softmax_attention(beta * x, x, x)
    logits = beta * x @ x.transpose(-1, -2)  # (..., n, n)
    future = torch.ones(logits.shape[-2:], dtype=torch.bool, device=x.device).triu(1)
    return torch.softmax(logits.masked_fill(future, float("-inf")), -1) @ x


@torch.no_grad()
def simulate_fitted(
    embeddings: Sequence[torch.Tensor],
    record: dict,
    dts: Sequence[float],
    seed: int = 0,
    causal: bool = False,
    parts: tuple[bool, bool] = (True, True),
):
    """The fitted model's stream per sentence ``(L+1, n, d)`` from the real embeddings ``(n, d)`` each; a causal
    model's fitted attention is causal too (token i attends to j <= i). ``parts``: (attention on, noise on)."""
    fits = [row["fit_partial"] for row in record["kernel"]["layers"]]
    streams = Streams(seed, (1,))
    runs = []
    for e in embeddings:
        x = project(e.double())[None]  # (1, n, d)
        states = [x[0]]
        for layer, fit in enumerate(fits):
            beta, s = record["attention_beta"][layer], record["attention_scale"][layer]
            y = project(x + s * attend(x, beta, causal)) if parts[0] else x
            noise = PartialNoise(MLPNoise("gelu", WIDTH, fit["su"], fit["sw"], sampling="conditional"), fit["share"])
            x = project(y + noise.increment(y, dts[layer], streams)) if parts[1] else y
            states.append(x[0])
        runs.append(torch.stack(states))
    return runs


def compare(real: dict[str, np.ndarray], fitted: dict[str, np.ndarray], seed: int = 0) -> dict:
    """Per statistic, from per-sentence values ``(S, L + 1)`` of the same sentences: the fitted model's mean per
    layer and its 95 % band, the real mean, the difference fitted - real per layer with its 95 % interval
    (resampling sentences), the first block whose interval excludes 0 (``parts_at``, None when none does) and the
    block of the largest difference."""
    out = {}
    for name, values in fitted.items():
        diff = values - real[name]
        band, gap = bootstrap(values, seed=seed), bootstrap(diff, seed=seed)
        mean = diff.mean(0)
        apart = [k for k in range(1, diff.shape[1]) if gap[0, k] > 0 or gap[1, k] < 0]
        out[name] = {
            "fitted": values.mean(0).tolist(),
            "fitted_low": band[0].tolist(),
            "fitted_high": band[1].tolist(),
            "real": real[name].mean(0).tolist(),
            "difference": mean.tolist(),
            "difference_interval": gap.tolist(),
            "parts_at": apart[0] if apart else None,
            "largest_at": int(np.abs(mean[1:]).argmax()) + 1,
        }
    return out


def fitted_model(cap, record: dict, seed: int = 0, causal: bool = False) -> dict:
    """The fitted stochastic transformer's per-layer statistics beside the real ones on the same sentences
    (``compare``), dt_l with its interval, the ablations (attention only, noise only) and the fitted parameters'
    uncertainty propagated (``_ablations``)."""
    from ._ablations import ablations, propagated

    dts, dt_interval = steps(cap.mlp_in, cap.mlp_out, record, seed)
    real = cap.hidden[:SENTENCES]
    runs = simulate_fitted([h[0] for h in real], record, dts, seed, causal)
    names = [k for k in STATISTICS if k != "norm"]  # the model lives on the sphere
    real_values = layer_values(real, names)
    statistics = compare(real_values, layer_values(runs, names), seed)
    out = {"dt": dts, "dt_interval": dt_interval, "sentences": len(real), "causal": causal, "statistics": statistics}
    out["ablations"] = ablations(real, real_values, record, dts, seed, causal)
    out["ablations"]["both"] = {"parts_at": {k: v["parts_at"] for k, v in statistics.items()}}
    out["propagated"] = propagated(real, real_values, record, (dts, dt_interval), seed, causal)
    return out
