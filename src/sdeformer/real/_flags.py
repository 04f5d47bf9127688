"""Flags that say no more than the data do (docs/real.md, "Honest flags"; THEORY section 2, BEYOND section 1).

- A kernel fit on the corner sU = sW = 0 of its domain, or whose refits all land on one value, does not identify
  lambda_bar: its sign verdict is None ("not identified"), not False.
- A partial-noise share fitted at 0 or 1 is a clip of the least squares to [0, 1]: ``partial_share_clipped``
  says so and ``share_below_one`` is None there.
- "Tokens synchronize" needs more than a positive mean-cosine slope (an untrained model has one too): an effect
  size against the untrained control (the slope difference, with an interval from the two intervals: conservative,
  the runs are not paired), and a fall of the effective rank or of the cluster count from the embeddings to the last
  layer with an interval below 0.
- The mean cosine is also reported with the outlier coordinates removed (``OUTLIER`` times the median
  coordinate's mean square over all tokens of the layer, counted per layer in ``trimmed_coordinates``): a few
  large coordinates shared by every token can carry the mean cosine alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..observables import mean_cosine
from ._stats import summarise

CORNER = 1e-3  # sU and sW at or below this: the fit sits on the corner of its domain
OUTLIER = 10.0


def on_boundary(fit: dict) -> bool:
    """Whether a kernel fit sits on the corner sU = sW = 0."""
    return fit["su"] <= CORNER and fit["sw"] <= CORNER


def sign_below(interval: Sequence[Sequence[float]], level: float, unidentified: Sequence[bool]) -> list[bool | None]:
    """Per block True when the interval lies below ``level``, False when at or above it, None when it holds it or
    the block's fit is not identified (``unidentified``) or the interval has zero width (every refit alike)."""
    out: list[bool | None] = []
    for lo, hi, bad in zip(*interval, unidentified, strict=True):
        out.append(None if bad or hi <= lo else True if hi < level else False if lo >= level else None)
    return out


def clipped(values: Sequence[float], low: float = 0.0, high: float = 1.0, eps: float = 1e-9) -> list[bool]:
    """Per block whether a fitted value sits on a clip bound."""
    return [v <= low + eps or v >= high - eps for v in values]


def trimmed_mean_cos(hidden: Sequence[torch.Tensor], seed: int = 0) -> dict:
    """The mean cosine per layer ``(L + 1)`` with the outlier coordinates of that layer removed (module
    docstring), its interval, and how many coordinates were removed per layer; ``hidden[k]`` ``(L+1, n, d)``."""
    square = torch.stack([h.double().pow(2).sum(-2) for h in hidden]).sum(0)  # (L+1, d)
    keep = square <= OUTLIER * square.median(-1, keepdim=True).values  # (L+1, d)
    values = np.stack(
        [
            torch.stack([mean_cosine(h[layer][:, keep[layer]].double()) for layer in range(h.shape[0])]).numpy()
            for h in hidden
        ]
    )  # (S, L+1)
    got = summarise(values, seed)
    return {
        "mean_cos_trimmed": got["mean"],
        "mean_cos_trimmed_interval": [got["low"], got["high"]],
        "trimmed_coordinates": (~keep).sum(-1).tolist(),
    }


def _change(row: dict, first: int = 0, last: int = -1) -> tuple[float, list[float]]:
    """(last - first, its conservative interval) of a statistic's per-layer ``{"mean", "low", "high"}``."""
    value = row["mean"][last] - row["mean"][first]
    return value, [row["low"][last] - row["high"][first], row["high"][last] - row["low"][first]]


def synchronization(trained: dict, untrained: dict | None) -> dict:
    """The effect behind "tokens synchronize": the slope, its excess over the untrained control's, and the change
    of the effective rank and of the cluster count from the embeddings to the last layer, each with an interval;
    ``tokens_synchronize`` True only when all of them decide it (slope and excess above 0, rank or clusters
    falling), False when the slope's interval lies at or below 0, None otherwise (also without the control)."""
    verdict = trained["verdict"]
    slope, (s_lo, s_hi) = verdict["mean_cos_slope"], verdict["mean_cos_slope_interval"]
    out: dict = {}
    for name in ("effective_rank", "clusters"):
        out[f"{name}_change"], out[f"{name}_change_interval"] = _change(trained["statistics"][name])
    falls = any(out[f"{n}_change_interval"][1] < 0 for n in ("effective_rank", "clusters"))
    excess = None
    if untrained is not None:
        u = untrained["verdict"]
        lo, hi = u["mean_cos_slope_interval"]
        excess = slope - u["mean_cos_slope"]
        out["slope_excess_over_untrained"] = excess
        out["slope_excess_over_untrained_interval"] = [s_lo - hi, s_hi - lo]
    decided = excess is not None and out["slope_excess_over_untrained_interval"][0] > 0 and s_lo > 0 and falls
    out["tokens_synchronize"] = True if decided else False if s_hi <= 0 else None
    return out
