"""``escape``: training-induced escape from token clustering (Isobe, Inoue, Imaizumi, arXiv 2605.07772; docs/field.md,
"Training-induced escape from clustering").

The claim (abstract): in a noisy mean-field transformer whose only trained part is a feed-forward map linear in its
parameters, trained under an L2 penalty, the tokens first cluster under attention and then leave the clustered
regime near the final layers. Measured: N tokens on S^{d-1} drawn around e_1 (x = LN(e_1 + ``spread`` z)) run
through the stochastic transformer (THEORY section 1) with the softmax attention beta I, per-token noise (the
MLP field's one-point law scaled to ``temperature``, shared with fraction ``share``; BEYOND section 1) and a
per-layer linear map x -> W_l x (``sdeformer.train.LinearFeedForward``, W = 0 at the start). The map is trained
(``sdeformer.train.train``: ``steps`` Adam steps of ``lr`` decaying by ``decay``, ``paths`` fresh noise paths a step)
on the loss "mean pairwise cosine of the final tokens" (the task wants the final tokens apart) plus
``penalty`` * dt * sum_l |W_l|^2. The mean pairwise cosine c_l of the tokens at each layer, averaged over
``eval_paths`` held-out noise paths, gives the peak layer l* = argmax_l c_l and the turn-down c_{l*} - c_L; both
are averaged over ``seeds`` training seeds (each its own tokens and noise) with a 95 % t interval, and so is the
layer where the tokens leave the cluster (the first layer after l* whose cosine is below c_{l*} - ``drop``), over
the seeds that leave.

The check: the turn-down's interval lies above ``drop`` and the peak layer's below L (the cosine peaks inside and
turns down). Its power: the wrong model, the map frozen at its start (W = 0: attention and noise alone, which
only cluster), measured the same way on the same tokens and paths, fails it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...io._report import Figure, Section, Table
from ...params import Param
from ...plots._names import FIGURES
from .._registry import Context
from .._results import Result
from ._common import cached

FIGURE = FIGURES["escape"]["escape"]  # the plots own the name


@dataclass(frozen=True)
class EscapeSettings:
    """The model (d, N, L, T, beta, noise), the task's penalty, the training and the measurement."""

    dim: int = 3
    tokens: int = 32
    layers: int = 12
    horizon: float = 12.0
    beta: float = 1.0
    temperature: float = 0.05
    share: float = 0.0
    spread: float = 0.5
    penalty: float = 0.01
    steps: int = 50
    lr: float = 0.3
    decay: float = 0.95
    paths: int = 4
    eval_paths: int = 16
    seeds: int = 6
    drop: float = 0.05
    seed: int = 0

    @classmethod
    def quick(cls) -> EscapeSettings:
        return cls(tokens=16, steps=30, eval_paths=8, seeds=3)


SETTINGS = (
    Param("dim", int, EscapeSettings.dim, low=2, high=64, doc="d"),
    Param("tokens", int, EscapeSettings.tokens, low=2, doc="N"),
    Param("layers", int, EscapeSettings.layers, low=3, doc="L"),
    Param("horizon", float, EscapeSettings.horizon, low=1e-3, doc="T"),
    Param("beta", float, EscapeSettings.beta, low=0.0, high=50.0, doc="Q^T K = beta I"),
    Param("temperature", float, EscapeSettings.temperature, low=1e-6, high=10.0, doc="noise covariance factor"),
    Param("share", float, EscapeSettings.share, low=0.0, high=1.0, doc="shared fraction of the noise (0: per token)"),
    Param("spread", float, EscapeSettings.spread, low=0.0, doc="tokens LN(e_1 + spread z)"),
    Param("penalty", float, EscapeSettings.penalty, low=0.0, doc="L2 weight lambda (times dt sum_l |W_l|^2)"),
    Param("steps", int, EscapeSettings.steps, low=1, doc="Adam steps"),
    Param("lr", float, EscapeSettings.lr, low=1e-6, high=10.0, doc="Adam rate"),
    Param("decay", float, EscapeSettings.decay, low=1e-3, high=1.0, doc="rate factor per step"),
    Param("paths", int, EscapeSettings.paths, low=1, doc="noise paths per training step"),
    Param("eval_paths", int, EscapeSettings.eval_paths, low=1, doc="held-out noise paths per measurement"),
    Param("seeds", int, EscapeSettings.seeds, low=2, doc="training seeds (the interval's sample)"),
    Param("drop", float, EscapeSettings.drop, low=0.0, high=1.0, doc="least turn-down the check accepts"),
)
"""The experiment's declared settings (``sdeformer escape --set NAME=VALUE``)."""


@dataclass(frozen=True)
class EscapeResult(Result):
    """Per layer: the mean cosine (mean over seeds, with the seeds' 95 % interval), trained and frozen, and the
    trained map's mean norm; the peak layer and turn-down per model with intervals; the verdicts."""

    layer: list[int]
    cosine: list[float]
    cosine_lo: list[float]
    cosine_hi: list[float]
    cosine_frozen: list[float]
    cosine_frozen_lo: list[float]
    cosine_frozen_hi: list[float]
    weight_norm: list[float]
    loss_start: float
    loss_end: float
    peak: float
    peak_lo: float
    peak_hi: float
    turn_down: float
    turn_down_lo: float
    turn_down_hi: float
    frozen_peak: float
    frozen_peak_lo: float
    frozen_peak_hi: float
    frozen_turn_down: float
    frozen_turn_down_lo: float
    frozen_turn_down_hi: float
    escapes: bool
    frozen_escapes: bool
    leave: float | None
    leave_lo: float | None
    leave_hi: float | None
    leave_seeds: int
    frozen_leave_seeds: int
    figure: str = FIGURE

    @property
    def holds(self) -> bool:
        return self.escapes and not self.frozen_escapes


def mean_cosine(x):
    """Mean of <x_i, x_j> over pairs i != j. ``(..., N, d) -> (...)``."""
    n = x.shape[-2]
    gram = x @ x.mT  # (..., N, N)
    return (gram.sum((-1, -2)) - gram.diagonal(dim1=-2, dim2=-1).sum(-1)) / (n * (n - 1))


def _tokens(s: EscapeSettings, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(s.tokens, s.dim, generator=g, dtype=torch.float64) * s.spread
    x[:, 0] += 1.0
    return x / x.norm(dim=-1, keepdim=True)  # (N, d)


def one_seed(s: EscapeSettings, seed: int) -> dict[str, Any]:
    """Train the map for one seed; the per-layer mean cosine (held-out paths) of the trained and frozen maps."""
    import torch

    from ...noise import PartialNoise
    from ...noise._mlp import MLPNoise
    from ...noise._scaled import Scaled
    from ...train import LinearFeedForward, noisy_model, train

    x0 = _tokens(s, seed)
    noise = PartialNoise(Scaled(MLPNoise("tanh", 32, 0.5, 0.5), s.temperature), s.share)
    w = torch.zeros(s.layers, s.dim, s.dim, dtype=torch.float64, requires_grad=True)  # (L, d, d)

    def run(weight, first: int, count: int):
        model = noisy_model(s.layers, s.horizon, noise, s.beta, LinearFeedForward(weight))
        return model.run(x0.expand(count, -1, -1), seed=[first + b for b in range(count)])

    def loss(k: int):
        return mean_cosine(run(w, k * s.paths, s.paths).final).mean()

    base = 10**6 * (seed + 1)
    fit = train(loss, {"W": w}, s.steps, s.lr, penalty={"W": s.penalty * s.horizon / s.layers}, decay=s.decay,
                seed=base)  # fmt: skip
    held = 10**9 + 10**4 * seed
    with torch.no_grad():
        trained = mean_cosine(run(w, held, s.eval_paths).x).mean(-1)  # (L + 1,)
        frozen = mean_cosine(run(torch.zeros_like(w), held, s.eval_paths).x).mean(-1)
    return {"trained": trained.numpy(), "frozen": frozen.numpy(), "norm": w.detach().flatten(1).norm(dim=1).numpy(),
            "loss_start": fit.losses[0], "loss_end": float(np.mean(fit.losses[-5:]))}  # fmt: skip


def _interval(values: np.ndarray) -> tuple[Any, Any, Any]:
    """Mean over seeds (axis 0) and its 95 % t interval: floats of ``(S,)``, arrays of ``(S, K)``."""
    from scipy.stats import t as student

    mean = values.mean(0)
    half = student.ppf(0.975, len(values) - 1) * values.std(0, ddof=1) / np.sqrt(len(values))
    return mean, mean - half, mean + half


def _peaks(curves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per seed: the peak layer argmax_l c_l and the turn-down c_{l*} - c_L. ``(S, L + 1)``."""
    return curves.argmax(1).astype(float), curves.max(1) - curves[:, -1]


def _leaves(curves: np.ndarray, drop: float) -> list[int]:
    """Per seed that leaves: the first layer after the peak whose cosine is below c_{l*} - drop. ``(S, L + 1)``."""
    out = []
    for c in curves:
        below = np.nonzero(c[c.argmax() :] < c.max() - drop)[0]
        if len(below):
            out.append(int(c.argmax() + below[0]))
    return out


def run(settings: EscapeSettings, advance=lambda _n: None) -> EscapeResult:
    """The experiment (module docstring); ``advance(1)`` after each training seed."""
    per = []
    for i in range(settings.seeds):
        per.append(one_seed(settings, settings.seed * 1000 + i))
        advance(1)
    trained, frozen = np.stack([p["trained"] for p in per]), np.stack([p["frozen"] for p in per])
    top = float(settings.layers)
    stats = []
    for curves in (trained, frozen):
        peak, drop = _peaks(curves)
        stats.append((*map(float, _interval(peak)), *map(float, _interval(drop))))
    (pk, pk_lo, pk_hi, td, td_lo, td_hi), frozen_stats = stats
    escapes = [st[4] > settings.drop and st[2] < top for st in stats]  # turn-down's lo > drop, peak's hi < L
    c, c_lo, c_hi = _interval(trained)
    f, f_lo, f_hi = _interval(frozen)
    leaves = _leaves(trained, settings.drop)
    leave = list(map(float, _interval(np.asarray(leaves, float)))) if len(leaves) > 1 else [None] * 3
    names = ("peak", "peak_lo", "peak_hi", "turn_down", "turn_down_lo", "turn_down_hi")
    return EscapeResult(
        layer=list(range(settings.layers + 1)), cosine=c.tolist(), cosine_lo=c_lo.tolist(), cosine_hi=c_hi.tolist(),
        cosine_frozen=f.tolist(), cosine_frozen_lo=f_lo.tolist(), cosine_frozen_hi=f_hi.tolist(),
        weight_norm=np.mean([p["norm"] for p in per], 0).tolist(),
        loss_start=float(np.mean([p["loss_start"] for p in per])),
        loss_end=float(np.mean([p["loss_end"] for p in per])),
        **dict(zip(names, (pk, pk_lo, pk_hi, td, td_lo, td_hi))),
        **dict(zip([f"frozen_{n}" for n in names], frozen_stats)),
        escapes=escapes[0], frozen_escapes=escapes[1], leave=leave[0], leave_lo=leave[1], leave_hi=leave[2],
        leave_seeds=len(leaves), frozen_leave_seeds=len(_leaves(frozen, settings.drop)),
    )  # fmt: skip


def settings_for(quick: bool, changes: dict[str, object] | None = None) -> EscapeSettings:
    base = EscapeSettings.quick() if quick else EscapeSettings()
    return dataclasses.replace(base, **(changes or {}))  # type: ignore[arg-type]


def units(_seed: int, quick: bool, changes: dict[str, object]) -> int:
    return settings_for(quick, changes).seeds


def run_and_write(out: Path, quick: bool, seed: int, advance=lambda _n: None, changes=None) -> EscapeResult:
    settings = dataclasses.replace(settings_for(quick, changes), seed=seed)
    return cached(Path(out) / "escape.json", settings, EscapeResult, lambda: run(settings, advance))


def section(result: EscapeResult, folder: str = "escape") -> Section:
    last = len(result.layer) - 1
    verdict = "holds" if result.holds else "fails"
    r = result
    columns = (r.layer, r.cosine, r.cosine_lo, r.cosine_hi, r.cosine_frozen, r.cosine_frozen_lo, r.cosine_frozen_hi)
    columns += ([0.0, *r.weight_norm],)
    return Section(
        "Training-induced escape from clustering (Isobe, Inoue, Imaizumi 2026)",
        [
            "A per-layer linear feed-forward map trained inside the noisy model (per-token noise, L2 penalty) on "
            f"the final tokens' mean cosine: the loss falls from {result.loss_start:.3f} to {result.loss_end:.3f}. "
            f"The mean cosine peaks at layer {result.peak:.1f} [{result.peak_lo:.1f}, {result.peak_hi:.1f}] of "
            f"{last} and turns down by {result.turn_down:.3f} [{result.turn_down_lo:.3f}, "
            f"{result.turn_down_hi:.3f}] by the last layer: the check {verdict}. "
            + _leave_text(result)
            + " With the map frozen at its start "
            f"the peak is at {result.frozen_peak:.1f} [{result.frozen_peak_lo:.1f}, {result.frozen_peak_hi:.1f}] "
            f"and the turn-down {result.frozen_turn_down:.3f} [{result.frozen_turn_down_lo:.3f}, "
            f"{result.frozen_turn_down_hi:.3f}]: the frozen map "
            + ("fails the check (no escape)." if not result.frozen_escapes else "passes it too (no power here)."),
        ],
        [
            Table(
                ["layer", "trained", "trained 95 %", "frozen", "frozen 95 %", "|W_l|"],
                [
                    [k, c, f"[{lo:.3f}, {hi:.3f}]", f, f"[{flo:.3f}, {fhi:.3f}]", w]
                    for k, c, lo, hi, f, flo, fhi, w in zip(*columns)
                ],
                "mean pairwise cosine per layer (mean over seeds, 95 % interval); |W_l|: the trained map's norm",
                from_runs=True,
                uncertainty={"trained": "trained 95 %", "frozen": "frozen 95 %"},
                exact={"layer": "a setting", "|W_l|": "the trained map's profile (mean over seeds; no claim)"},
            )  # fmt: skip
        ],
        [Figure(Path(folder) / result.figure, "mean cosine per layer, trained and frozen, with the trained map")],
    )


def _leave_text(result: EscapeResult) -> str:
    if result.leave is None:
        return f"The tokens leave the cluster in {result.leave_seeds} seed(s) (too few for an interval)."
    return (f"The tokens leave the cluster (cosine below its peak minus the check's margin) at layer "
            f"{result.leave:.1f} [{result.leave_lo:.1f}, {result.leave_hi:.1f}] (over the {result.leave_seeds} seeds "
            f"that leave; with the map frozen, {result.frozen_leave_seeds} seeds leave).")  # fmt: skip


def report(ctx: Context) -> list[Section]:
    from ...plots._field import escape_figure

    folder = ctx.out / "escape"
    result = run_and_write(folder, ctx.quick, ctx.seed, ctx.advance, ctx.settings)
    escape_figure(result, folder / result.figure)
    return [section(result)]
