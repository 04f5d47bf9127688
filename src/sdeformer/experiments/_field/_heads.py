"""``heads``: the hidden states of a transformer with H i.i.d. attention heads per layer against the H -> infinity
limit at the same depth, and after AdamW training (Gibson, Reisinger, arXiv 2605.11059; docs/field.md, "Many heads").

The claim: with the heads scaled by 1/H, the hidden states converge to the forward(-backward) McKean-Vlasov limit
at rate O(L^-1 + L^-1/3 H^-1/2) in depth L and heads H. At fixed L the L^-1 term is the depth discretisation,
common to H heads and to infinitely many, so the deviation between the two at the same L is the head term; its
exponent in H is -1/2. The model (attention only, hidden states in R^d, no normalisation), layer l of L with
dt = T / L:
    x_i <- x_i + dt (1/H) sum_h [ D(x)_i + B_h(x)_i ],   D(x)_i = sum_k softmax_k(beta <x_i, x_k>) x_k,
each head the mean head D (V = I, Q^T K = beta I) plus a random head B_h of the library's resampled-heads part
(``ResampledHeads``, BEYOND section 3: V_h, A_h Gaussian, i.i.d. over heads and layers, mean zero). So the heads
are i.i.d. with mean D and the H -> infinity limit at the same L is the deterministic recursion with D alone.
The random part enters as the resampled-heads field at step dt^2 / H (its increment is sqrt(step / H) sum_h B_h).
To leading order the deviation is a sum of L independent mean-zero terms of size dt H^-1/2 carried to the last
layer by the limit's flow, so its root mean square falls like H^-1/2 at fixed L (the paper's exponent) and like
L^-1/2 at fixed H (faster than the bound's L^-1/3, which it respects).

Measured: the root mean square over ``seeds`` head draws of the final layer's token-RMS deviation, for
H = 2^0 .. 2^last; its log-log slope with a bootstrap 95 % interval over the seeds (the fit of
log sqrt(mean dev^2), runs resampled per H). The check: the interval contains -1/2 and excludes 0. Its power, the
wrong model run at the same inputs: heads scaled 1/sqrt(H) (the homogenized scaling of the resampled-heads part,
where the heads' fluctuations add up to noise that does not fall with H); the check fails it when its slope
interval excludes -1/2. Also the slope against L at H = ``depth_heads`` (prediction -1/2, bound -1/3).

The training part (``_heads_training``): every head trainable, AdamW on a fixed task; the trained hidden states'
spread over independent initialisations (the L^2 deviation from the deterministic limit up to a higher-order
bias) against H = 2^0 .. 2^train_last, its slope held against -1/2 the same way (interval contains -1/2,
excludes 0: a spread that does not fall with H).

The backward part (``_heads_backward``): the backpropagated variables p_l = N dPhi / dx_l of a terminal loss against
their H -> infinity limit on the same draws (the paper's limit is forward-backward), slope against H held against
-1/2 the same way, the wrong 1/sqrt(H) model failed, and its catch over ``power_seeds`` seeds.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

from ...params import Param
from ...plots._names import FIGURES
from .._results import Result
from ._common import cached
from ._heads_backward import backward_part
from ._heads_model import THEORY_SLOPE, bands, deviations, fit, verdicts
from ._heads_training import spread

FIGURE = FIGURES["heads"]["heads"]  # the plots own the name
BOUND_DEPTH_SLOPE = -1.0 / 3.0  # the paper's exponent of L in the head term (a bound)
TRAIN_CONTEXTS = 8  # the training part's fixed inputs (contexts of N tokens)


@dataclass(frozen=True)
class HeadsSettings:
    """Dimension, tokens, the mean head's and the random heads' beta, depth and horizon; heads 2^0 .. 2^last;
    head draws per H; the depth sweep L = 2^depth_first .. 2^depth_last at H = depth_heads."""

    dim: int = 4
    tokens: int = 8
    beta: float = 1.0
    head_beta: float = 1.0
    layers: int = 128
    horizon: float = 1.0
    last: int = 8
    seeds: int = 64
    depth_first: int = 4
    depth_last: int = 9
    depth_heads: int = 4
    curvature: float = 1.0
    adjoint_last: int = 6
    adjoint_seeds: int = 32
    power_seeds: int = 4
    train_last: int = 5
    train_layers: int = 16
    train_steps: int = 40
    train_seeds: int = 16
    lr: float = 0.02
    decay: float = 0.01
    seed: int = 0

    @classmethod
    def quick(cls) -> HeadsSettings:
        return cls(layers=64, last=6, seeds=32, depth_last=7, adjoint_last=4, adjoint_seeds=16, power_seeds=2,
                   train_last=3, train_steps=20, train_seeds=8)  # fmt: skip


SETTINGS = (
    Param("dim", int, HeadsSettings.dim, low=2, high=64, doc="d"),
    Param("tokens", int, HeadsSettings.tokens, low=2, high=512, doc="N"),
    Param("beta", float, HeadsSettings.beta, low=0.0, high=50.0, doc="the mean head's Q^T K = beta I"),
    Param("head_beta", float, HeadsSettings.head_beta, low=0.0, high=50.0, doc="the random heads' beta"),
    Param("layers", int, HeadsSettings.layers, low=1, doc="L (the H sweep's depth)"),
    Param("horizon", float, HeadsSettings.horizon, low=1e-3, high=5.0, doc="T"),
    Param("last", int, HeadsSettings.last, low=2, high=12, doc="largest H = 2^last"),
    Param("seeds", int, HeadsSettings.seeds, low=4, doc="head draws per H"),
    Param("depth_first", int, HeadsSettings.depth_first, low=1, high=12, doc="smallest L = 2^depth_first"),
    Param("depth_last", int, HeadsSettings.depth_last, low=3, high=14, doc="largest L (at least depth_first + 2)"),
    Param("depth_heads", int, HeadsSettings.depth_heads, low=1, doc="H of the depth sweep"),
    Param("curvature", float, HeadsSettings.curvature, low=0.0, high=10.0, doc="backward part: the loss's kappa"),
    Param("adjoint_last", int, HeadsSettings.adjoint_last, low=2, high=10, doc="backward part: largest H = 2^this"),
    Param("adjoint_seeds", int, HeadsSettings.adjoint_seeds, low=4, doc="backward part: head draws per H"),
    Param("power_seeds", int, HeadsSettings.power_seeds, low=1, high=9, doc="backward part: K seeds of the power"),
    Param("train_last", int, HeadsSettings.train_last, low=2, high=10, doc="training part: largest H = 2^this"),
    Param("train_layers", int, HeadsSettings.train_layers, low=1, doc="training part: L"),
    Param("train_steps", int, HeadsSettings.train_steps, low=0, doc="training part: AdamW steps"),
    Param("train_seeds", int, HeadsSettings.train_seeds, low=4, doc="training part: initialisations per H"),
    Param("lr", float, HeadsSettings.lr, low=1e-6, high=1.0, doc="training part: AdamW rate"),
    Param("decay", float, HeadsSettings.decay, low=0.0, high=1.0, doc="training part: AdamW weight decay"),
)
"""The experiment's declared settings (``sdeformer heads --set NAME=VALUE``)."""


@dataclass(frozen=True)
class HeadsResult(Result):
    """Per H (and per L): the RMS deviation with its 95 % interval; the slopes with bootstrap 95 % intervals, the
    wrong model's, the theory's, the verdicts."""

    depth: int
    heads: list[int]
    deviation: list[float]
    deviation_lo: list[float]
    deviation_hi: list[float]
    slope: float
    slope_lo: float
    slope_hi: float
    theory_slope: float
    wrong_deviation: list[float]
    wrong_deviation_lo: list[float]
    wrong_deviation_hi: list[float]
    wrong_slope: float
    wrong_slope_lo: float
    wrong_slope_hi: float
    layers: list[int]
    depth_heads: int
    depth_deviation: list[float]
    depth_deviation_lo: list[float]
    depth_deviation_hi: list[float]
    depth_slope: float
    depth_slope_lo: float
    depth_slope_hi: float
    bound_depth_slope: float
    train_depth: int
    train_steps: int
    train_heads: list[int]
    train_spread: list[float]
    train_spread_lo: list[float]
    train_spread_hi: list[float]
    train_loss: list[float]
    train_slope: float
    train_slope_lo: float
    train_slope_hi: float
    agrees: bool
    wrong_rejected: bool
    train_agrees: bool
    adjoint_heads: list[int]
    adjoint_draws: int
    adjoint_deviation: list[float]
    adjoint_deviation_lo: list[float]
    adjoint_deviation_hi: list[float]
    adjoint_slope: float
    adjoint_slope_lo: float
    adjoint_slope_hi: float
    adjoint_layers_deviation: list[float]
    adjoint_layers_deviation_lo: list[float]
    adjoint_layers_deviation_hi: list[float]
    adjoint_layers_slope: float
    adjoint_layers_slope_lo: float
    adjoint_layers_slope_hi: float
    adjoint_wrong_deviation: list[float]
    adjoint_wrong_deviation_lo: list[float]
    adjoint_wrong_deviation_hi: list[float]
    adjoint_wrong_slope: float
    adjoint_wrong_slope_lo: float
    adjoint_wrong_slope_hi: float
    adjoint_agrees: bool
    adjoint_wrong_rejected: bool
    adjoint_catch_rate: float
    adjoint_catch_seeds: int
    adjoint_false_alarm_rate: float
    adjoint_caught: bool
    figure: str = FIGURE

    @property
    def holds(self) -> bool:
        return self.agrees and self.wrong_rejected and self.train_agrees and self.adjoint_agrees and self.adjoint_caught


def run(s: HeadsSettings, advance=lambda _n: None) -> HeadsResult:
    """The experiment (module docstring); ``advance(1)`` after each H of each model and each L."""
    hs = [2**e for e in range(s.last + 1)]
    good, wrong = [], []
    for i, h in enumerate(hs):
        good.append(deviations(s, h, s.layers, s.seed * 10**6 + i).forward)
        advance(1)
        wrong.append(deviations(s, h, s.layers, s.seed * 10**6 + 1000 + i, math.sqrt(h)).forward)
        advance(1)
    ls = [2**e for e in range(s.depth_first, s.depth_last + 1)]
    depth = []
    for i, n in enumerate(ls):
        depth.append(deviations(s, s.depth_heads, n, s.seed * 10**6 + 2000 + i).forward)
        advance(1)
    train_hs, spreads, losses = [2**e for e in range(s.train_last + 1)], [], []
    for i, h in enumerate(train_hs):
        q, loss = spread(s.dim, s.tokens, s.beta, s.train_layers, s.horizon, h, s.train_seeds, s.train_steps, s.lr,
                         s.decay, TRAIN_CONTEXTS, s.seed * 10**6 + 3000 + i)  # fmt: skip
        spreads.append(q)
        losses.append(loss)
        advance(1)
    backward = backward_part(s, advance)
    tslope, tlo, thi = fit(train_hs, spreads, s.seed + 3)
    slope, lo, hi = fit(hs, good, s.seed)
    wslope, wlo, whi = fit(hs, wrong, s.seed + 1)
    dslope, dlo, dhi = fit(ls, depth, s.seed + 2)
    agrees, rejected = verdicts(lo, hi, wlo, whi)
    (dev, dev_lo, dev_hi), (wdev, wdev_lo, wdev_hi) = bands(good), bands(wrong)
    ddev, ddev_lo, ddev_hi = bands(depth)
    tdev, tdev_lo, tdev_hi = bands(spreads)
    return HeadsResult(
        depth=s.layers, heads=hs, slope=slope, slope_lo=lo, slope_hi=hi, theory_slope=THEORY_SLOPE,
        wrong_slope=wslope, wrong_slope_lo=wlo, wrong_slope_hi=whi, layers=ls, depth_heads=s.depth_heads,
        depth_slope=dslope, depth_slope_lo=dlo, depth_slope_hi=dhi, bound_depth_slope=BOUND_DEPTH_SLOPE,
        deviation=dev, deviation_lo=dev_lo, deviation_hi=dev_hi, wrong_deviation=wdev, wrong_deviation_lo=wdev_lo,
        wrong_deviation_hi=wdev_hi, depth_deviation=ddev, depth_deviation_lo=ddev_lo, depth_deviation_hi=ddev_hi,
        train_depth=s.train_layers, train_steps=s.train_steps, train_heads=train_hs, train_spread=tdev,
        train_spread_lo=tdev_lo, train_spread_hi=tdev_hi, train_loss=losses,
        train_slope=tslope, train_slope_lo=tlo, train_slope_hi=thi,
        train_agrees=tlo <= THEORY_SLOPE <= thi and not tlo <= 0.0 <= thi,
        agrees=agrees, wrong_rejected=rejected, **backward,
    )  # fmt: skip


def settings_for(quick: bool, changes: dict[str, object] | None = None) -> HeadsSettings:
    """The report's (or the quick) size with ``changes``; ConfigError naming ``depth_last`` when the depth sweep
    has fewer than three points."""
    from ...core._errors import ConfigError

    settings = dataclasses.replace(HeadsSettings.quick() if quick else HeadsSettings(), **(changes or {}))  # type: ignore[arg-type]
    if settings.depth_last < settings.depth_first + 2:
        raise ConfigError("depth_last", settings.depth_last, f"at least depth_first + 2 = {settings.depth_first + 2}")
    return settings


def units(_seed: int, quick: bool, changes: dict[str, object]) -> int:
    s = settings_for(quick, changes)
    backward = 2 * s.power_seeds * (s.adjoint_last + 1)
    return 2 * (s.last + 1) + s.depth_last - s.depth_first + 1 + s.train_last + 1 + backward


def run_and_write(out: Path, quick: bool, seed: int, advance=lambda _n: None, changes=None) -> HeadsResult:
    settings = dataclasses.replace(settings_for(quick, changes), seed=seed)
    return cached(Path(out) / "heads.json", settings, HeadsResult, lambda: run(settings, advance))
