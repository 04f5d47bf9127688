"""``context-chaos``: a distinguished token moved by a finite context against the infinite-context limit (Chen,
Lin, Liu, Rigollet, arXiv 2605.16747; docs/field.md, "Propagation of chaos in context length").

The claim (forward part): the distinguished token of a contextual flow map driven by n context tokens i.i.d.
from mu_0 stays within O(n^{-1/2}) of the one driven by the population mu_t, uniformly over the layers, for
transformers (the parametric rate; n^{-1/d} for general maps). Measured: the context is n uniform tokens on S^{d-1}
run through the noise-free discrete model (THEORY section 1, ``StochasticTransformer`` with the softmax attention
beta I and no noise), and the distinguished token x_0 = e_1 moves by the same layer attending to the context
(x <- LN(x + dt sum_j softmax_j(beta <x, y_j>) y_j)). With mu_0 uniform the population limit is known exactly:
mu_t stays uniform (its attention field at x is c(beta) x, normal to the sphere), so the infinite-context token
never moves. The deviation is max over layers of |x_l - e_1|, averaged over ``contexts`` draws per n; its slope
against n on log-log axes, with a 95 % interval (t quantile on the residuals), must contain -1/2; its power: the
general-map rate -1/d outside the interval.

The backward part: beta (one per context draw) trained by online gradient descent, ``train_steps`` steps of rate
``lr`` on the loss |x_L - e_2|^2, each step on a fresh context, the gradient through the whole run (the context's
layers and the token's; docs/field.md, "Training through the model"). With the uniform population the
infinite-context token never moves, so its gradient is zero and the infinite-context beta stays at its start:
the deviation is max over steps of |beta_k - beta_0|, averaged over draws, and its slope against n (up to
2^``train_last``) is held against -1/2 the same way. The check holds when the forward interval contains -1/2 and
excludes -1/d and the backward interval contains -1/2; the backward interval's exclusion of -1/d is reported
(its power: it excludes -1/d at the report size, not at the quick size, where the interval is wider).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...io._report import Figure, Section, Table
from ...params import Param
from ...plots._names import FIGURES
from .._registry import Context
from .._results import Result
from ._common import cached, log_slope

FIGURE = FIGURES["context-chaos"]["chaos"]  # the plots own the name


@dataclass(frozen=True)
class ContextChaosSettings:
    """Dimension, beta, depth and horizon, context lengths 2^first .. 2^last, contexts per n."""

    dim: int = 4
    beta: float = 2.0
    layers: int = 16
    horizon: float = 2.0
    first: int = 6
    last: int = 12
    contexts: int = 48
    train_steps: int = 10
    lr: float = 0.5
    train_last: int = 10
    seed: int = 0

    @classmethod
    def quick(cls) -> ContextChaosSettings:
        return cls(last=10, contexts=24, train_last=9, layers=8)


SETTINGS = (
    Param("dim", int, ContextChaosSettings.dim, low=3, high=64, doc="d (>= 3: the wrong rate -1/d differs)"),
    Param("beta", float, ContextChaosSettings.beta, low=1e-3, high=50.0, doc="Q^T K = beta I"),
    Param("layers", int, ContextChaosSettings.layers, low=1, doc="L"),
    Param("horizon", float, ContextChaosSettings.horizon, low=1e-3, doc="T"),
    Param("first", int, ContextChaosSettings.first, low=2, high=16, doc="smallest n = 2^first"),
    Param("last", int, ContextChaosSettings.last, low=4, high=16, doc="largest n = 2^last (at least first + 2)"),
    Param("contexts", int, ContextChaosSettings.contexts, low=4, doc="context draws per n"),
    Param("train_steps", int, ContextChaosSettings.train_steps, low=1, doc="online gradient steps (backward part)"),
    Param("lr", float, ContextChaosSettings.lr, low=1e-6, high=10.0, doc="gradient step size"),
    Param("train_last", int, ContextChaosSettings.train_last, low=4, high=14, doc="largest n of the backward part"),
)
"""The experiment's declared settings (``sdeformer context-chaos --set NAME=VALUE``)."""


@dataclass(frozen=True)
class ContextChaosResult(Result):
    """Per n: the mean deviation and its s.e.; the slope with its 95 % interval, the theory's and the wrong
    model's, the verdicts."""

    n: list[int]
    deviation: list[float]
    deviation_se: list[float]
    slope: float
    slope_lo: float
    slope_hi: float
    theory_slope: float
    wrong_slope: float
    agrees: bool
    wrong_rejected: bool
    backward_n: list[int]
    backward_deviation: list[float]
    backward_se: list[float]
    backward_slope: float
    backward_slope_lo: float
    backward_slope_hi: float
    backward_agrees: bool
    backward_wrong_rejected: bool
    figure: str = FIGURE

    @property
    def holds(self) -> bool:
        return self.agrees and self.wrong_rejected and self.backward_agrees


def deviations(settings: ContextChaosSettings, n: int, seed: int) -> np.ndarray:
    """``(contexts,)`` max over layers of |x_l - e_1| for n-token uniform contexts (module docstring)."""
    import torch

    import sdeformer as sdf
    from sdeformer.attention._softmax import SoftmaxAttention, softmax_attention
    from sdeformer.dynamics._discrete import StochasticTransformer

    s = settings
    y0 = sdf.uniform_sphere(n, s.dim, batch=(s.contexts,), seed=seed, dtype=torch.float64)  # (B, n, d)
    context = StochasticTransformer(s.layers, s.horizon, None, SoftmaxAttention(s.beta)).run(y0, seed=seed).x
    x = torch.zeros(s.contexts, 1, s.dim, dtype=torch.float64)
    x[..., 0] = 1.0  # (B, 1, d): the distinguished token e_1
    dt, worst = s.horizon / s.layers, torch.zeros(s.contexts, dtype=torch.float64)
    for y in context[:-1]:  # the context at layer l - 1 moves the token to layer l
        x = x + dt * softmax_attention(s.beta * x, y, y)
        x = x / x.norm(dim=-1, keepdim=True)
        worst = torch.maximum(worst, (x[:, 0] - torch.eye(s.dim, dtype=torch.float64)[0]).norm(dim=-1))
    return worst.numpy()


def training_deviations(settings: ContextChaosSettings, n: int, seed: int) -> np.ndarray:
    """``(contexts,)`` max over online gradient steps of |beta_k - beta_0| (module docstring, backward part)."""
    import torch

    import sdeformer as sdf
    from sdeformer.attention._softmax import SoftmaxAttention, softmax_attention
    from sdeformer.dynamics._discrete import StochasticTransformer

    s, b = settings, settings.contexts
    beta = torch.full((b,), s.beta, dtype=torch.float64, requires_grad=True)  # (B,) one per draw
    target = torch.eye(s.dim, dtype=torch.float64)[1]
    worst = torch.zeros(b, dtype=torch.float64)
    for k in range(s.train_steps):
        y0 = sdf.uniform_sphere(n, s.dim, batch=(b,), seed=seed * 1000 + k, dtype=torch.float64)  # (B, n, d)
        context = StochasticTransformer(s.layers, s.horizon, None, SoftmaxAttention(beta)).run(y0, seed=0).x
        x = torch.zeros(b, 1, s.dim, dtype=torch.float64)
        x[..., 0] = 1.0
        for y in context[:-1]:
            x = x + s.horizon / s.layers * softmax_attention(beta[:, None, None] * x, y, y)
            x = x / x.norm(dim=-1, keepdim=True)
        ((x[:, 0] - target) ** 2).sum().backward()
        with torch.no_grad():
            beta -= s.lr * beta.grad  # pyright: ignore[reportOperatorIssue]
            beta.grad = None
            worst = torch.maximum(worst, (beta - s.beta).abs())
    return worst.numpy()


def _scaling(measure, settings: ContextChaosSettings, last: int, advance) -> tuple[list[int], list[float], list[float]]:
    """n = 2^first .. 2^last, the mean of ``measure(settings, n, seed)`` over draws and its s.e."""
    ns = [2**e for e in range(settings.first, last + 1)]
    mean, se = [], []
    for i, n in enumerate(ns):
        dev = measure(settings, n, settings.seed * 1000 + i)
        mean.append(float(dev.mean()))
        se.append(float(dev.std(ddof=1) / math.sqrt(len(dev))))
        advance(1)
    return ns, mean, se


def run(settings: ContextChaosSettings, advance=lambda _n: None) -> ContextChaosResult:
    """The experiment (module docstring); ``advance(1)`` after each n of each part."""
    theory, wrong = -0.5, -1.0 / settings.dim
    ns, mean, se = _scaling(deviations, settings, settings.last, advance)
    slope, lo, hi = log_slope([float(n) for n in ns], mean)
    bn, bmean, bse = _scaling(training_deviations, settings, settings.train_last, advance)
    bslope, blo, bhi = log_slope([float(n) for n in bn], bmean)
    return ContextChaosResult(
        ns, mean, se, slope, lo, hi, theory, wrong, lo <= theory <= hi, not lo <= wrong <= hi,
        bn, bmean, bse, bslope, blo, bhi, blo <= theory <= bhi, not blo <= wrong <= bhi,
    )  # fmt: skip


def settings_for(quick: bool, changes: dict[str, object] | None = None) -> ContextChaosSettings:
    from ...core._errors import ConfigError

    base = ContextChaosSettings.quick() if quick else ContextChaosSettings()
    settings = dataclasses.replace(base, **(changes or {}))  # type: ignore[arg-type]
    for name in ("last", "train_last"):
        if getattr(settings, name) < settings.first + 2:
            raise ConfigError(name, getattr(settings, name), f"at least first + 2 = {settings.first + 2} (a slope)")
    return settings


def units(_seed: int, quick: bool, changes: dict[str, object]) -> int:
    s = settings_for(quick, changes)
    return s.last - s.first + 1 + s.train_last - s.first + 1


def run_and_write(out: Path, quick: bool, seed: int, advance=lambda _n: None, changes=None) -> ContextChaosResult:
    settings = dataclasses.replace(settings_for(quick, changes), seed=seed)
    return cached(Path(out) / "context_chaos.json", settings, ContextChaosResult, lambda: run(settings, advance))


def section(result: ContextChaosResult, folder: str = "context-chaos") -> Section:
    verdict = "agrees" if result.agrees else "does not agree"
    return Section(
        "Propagation of chaos in context length: deviation ~ n^(-1/2) (Chen, Lin, Liu, Rigollet 2026)",
        [
            "A distinguished token moved by n uniform context tokens through the noise-free model, against the "
            "infinite context (uniform for all layers: the token stays at e_1). Fitted slope "
            f"{result.slope:.3f} [{result.slope_lo:.3f}, {result.slope_hi:.3f}] against -1/2: {verdict}; the "
            f"general-map rate {result.wrong_slope:.3f} (-1/d) is "
            + ("outside the interval." if result.wrong_rejected else "not excluded.")
            + " Backward (beta trained by online gradient descent through the run, each step a fresh context): "
            f"the deviation of beta from its infinite-context value has slope {result.backward_slope:.3f} "
            f"[{result.backward_slope_lo:.3f}, {result.backward_slope_hi:.3f}]; -1/2 is "
            + ("inside" if result.backward_agrees else "outside")
            + ", -1/d "
            + ("outside." if result.backward_wrong_rejected else "not excluded at this size.")
            + " The check (forward slope against -1/2, -1/d rejected, backward slope against -1/2) "
            + ("holds." if result.holds else "fails."),
        ],
        [
            _deviations(
                "deviation",
                result.n,
                result.deviation,
                result.deviation_se,
                "max over layers of |x_l - e_1|, mean over contexts",
            ),
            _deviations(
                "beta deviation",
                result.backward_n,
                result.backward_deviation,
                result.backward_se,
                "backward: max over online gradient steps of |beta_k - beta_0|, mean over draws",
            ),
        ],  # fmt: skip
        [
            Figure(
                Path(folder) / result.figure,
                "deviation against n, log-log, 95 % intervals, with the fitted slopes, -1/2 and -1/d: the token "
                "(forward, left) and beta trained by online gradient descent (backward, right)",
            )
        ],
    )


def report(ctx: Context) -> list[Section]:
    from ...plots._field import context_chaos_figure

    folder = ctx.out / "context-chaos"
    result = run_and_write(folder, ctx.quick, ctx.seed, ctx.advance, ctx.settings)
    context_chaos_figure(result, folder / result.figure)
    return [section(result)]


def _deviations(name: str, n, mean, se, caption: str) -> Table:
    """A report table of a deviation against n with its standard error."""
    return Table(["n", name, "s.e."], [[k, m, s] for k, m, s in zip(n, mean, se)], caption, from_runs=True,
                 uncertainty={name: "s.e."}, exact={"n": "a setting", "s.e.": "an error"})  # fmt: skip
