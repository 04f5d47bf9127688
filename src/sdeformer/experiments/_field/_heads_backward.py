"""``heads``'s backward part: the backpropagated variables of H i.i.d. heads against the H -> infinity limit, and the
check's power over seeds (Gibson, Reisinger, arXiv 2605.11059; docs/field.md, "Many heads").

The paper's limit is forward-backward: the hidden states and the backpropagated variables converge together. For
the model of ``_heads`` and the terminal loss of ``_heads_model`` the adjoint p_l = N dPhi / dx_l is computed by
autograd on ``adjoint_seeds`` head draws per H at the forward part's depth L = ``layers``, H = 2^0 .. 2^adjoint_last,
and its H -> infinity limit p_l^inf along the limit's states from the same start. Measured: the RMS over draws of
the token-RMS |p_0 - p_0^inf| (the first layer: backpropagated through all L layers) and of the layer-averaged
deviation; their log-log slopes against H with bootstrap 95 % intervals. The check: the first layer's interval
contains -1/2 and excludes 0. Its wrong model: the heads scaled 1/sqrt(H) (as in the forward part), failed when
its interval excludes -1/2. Power over seeds: the whole sweep, right and wrong model, is repeated on
``power_seeds`` = K independent seeds at the size it runs (seed 0 is the one reported); ``catch_rate`` is the
fraction of the K seeds whose wrong model the check fails, ``false_alarm_rate`` the fraction where the right model
fails it (``checks._power``'s fields; here the wrong model is named, not a signed size).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ...checks._power import PROBABILITY
from ._heads_model import bands, deviations, fit, verdicts


def backward_part(s, advance=lambda _n: None) -> dict[str, Any]:
    """The ``adjoint_*`` fields of ``HeadsResult`` (module docstring); ``advance(1)`` after each H of each model
    and seed. ``s``: ``HeadsSettings``."""
    hs = [2**e for e in range(s.adjoint_last + 1)]
    sized = dataclasses.replace(s, seeds=s.adjoint_seeds)  # the draws per H of this part
    runs = []  # per seed: draws, fits and verdicts
    for k in range(s.power_seeds):
        good, wrong = [], []
        for i, h in enumerate(hs):
            good.append(deviations(sized, h, s.layers, s.seed * 10**6 + 4000 + 100 * k + i, backward=True))
            advance(1)
            wrong.append(deviations(sized, h, s.layers, s.seed * 10**6 + 5000 + 100 * k + i, math.sqrt(h), True))
            advance(1)
        right = fit(hs, [g.first for g in good], s.seed + 4 + 2 * k)
        bad = fit(hs, [w.first for w in wrong], s.seed + 5 + 2 * k)
        agrees, rejected = verdicts(right[1], right[2], bad[1], bad[2])
        runs.append((good, wrong, right, bad, agrees, rejected))
    good, wrong, (slope, lo, hi), (wslope, wlo, whi), agrees, rejected = runs[0]
    catch, alarm = sum(r[5] for r in runs) / len(runs), sum(not r[4] for r in runs) / len(runs)
    lslope, llo, lhi = fit(hs, [g.layers for g in good], s.seed + 1000)
    (dev, dev_lo, dev_hi), (ldev, ldev_lo, ldev_hi) = bands([g.first for g in good]), bands([g.layers for g in good])
    wdev, wdev_lo, wdev_hi = bands([w.first for w in wrong])
    return dict(
        adjoint_heads=hs, adjoint_draws=s.adjoint_seeds, adjoint_deviation=dev, adjoint_deviation_lo=dev_lo,
        adjoint_deviation_hi=dev_hi, adjoint_slope=slope, adjoint_slope_lo=lo, adjoint_slope_hi=hi,
        adjoint_layers_deviation=ldev, adjoint_layers_deviation_lo=ldev_lo, adjoint_layers_deviation_hi=ldev_hi,
        adjoint_layers_slope=lslope, adjoint_layers_slope_lo=llo, adjoint_layers_slope_hi=lhi,
        adjoint_wrong_deviation=wdev, adjoint_wrong_deviation_lo=wdev_lo, adjoint_wrong_deviation_hi=wdev_hi,
        adjoint_wrong_slope=wslope, adjoint_wrong_slope_lo=wlo, adjoint_wrong_slope_hi=whi,
        adjoint_agrees=agrees, adjoint_wrong_rejected=rejected, adjoint_catch_rate=catch,
        adjoint_catch_seeds=s.power_seeds, adjoint_false_alarm_rate=alarm,
        adjoint_caught=catch >= PROBABILITY,
    )  # fmt: skip
