"""``low-temperature``: the token law near its zero-temperature push-forward (Alcalde, Bungert, Riedl, Roith, arXiv
2605.10931; docs/field.md, "Low temperature").

The claim (abstract): the token law mu_t stays within sqrt(log(beta + 1) / beta) e^{Ct} + e^{-ct} (Wasserstein) of
the push-forward of mu_0 under a projection map set by the key, query and value matrices, metastable for times of
order log beta. Here Q^T K = beta I and V = I on the circle S^1 (d = 2), the noise-free discrete model (THEORY
section 1): the zero-temperature attention of x over supp mu picks argmax <x, y> = x itself, so the projection is
the identity and the predicted push-forward is mu_0. Measured: tokens at the N quantiles of the density
rho(theta) = (1 + a cos theta) / (2 pi) (a deterministic quadrature of mu_0: no sampling noise), run for L layers
of horizon T; W2(mu_T, mu_0) on the circle (geodesic cost; the best of the cyclic couplings near the identity)
against beta, and its log-log slope with a 95 % interval.

Our prediction at the same inputs (Laplace's method): at large beta the softmax average around x is a Gaussian of
variance 1 / beta, so a layer moves theta by dt rho'/(beta rho) / (1 + dt) + O(beta^-2): W2 = L dt / (1 + dt) *
kappa / beta with kappa = |rho'/rho|_{L2(rho)} = sqrt(1 - sqrt(1 - a^2)). The slope is -1, below the bound's -1/2
(the abstract's rate is an upper bound; a smooth density attains 1 / beta). The check: the slope within 0.02 of -1
(the O(1/beta) correction, W2 / prediction - 1 ~ 1/beta, tilts the fit by about that much, so the deterministic
fit's narrow interval need not contain -1), the bound's rate -1/2 outside the interval, W2 within 2 % of the
prediction at the largest beta. The escape time (the first t
with W2(mu_t, mu_0) > ``eps``) grows like beta (first order: eps beta (1 + dt) / kappa), far beyond the bound's
log beta window: its log-log slope is held in [0.9, 1.1] and the log-beta model's slope (1 / mean log beta over
the same betas) outside its interval.
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

FIGURE = FIGURES["low-temperature"]["distance"]  # the plots own the name
SLOPE_TOL = 0.02  # |slope + 1|: Laplace's O(1/beta) correction tilts the fit by ~1/beta_min (module docstring)


@dataclass(frozen=True)
class LowTemperatureSettings:
    """The density's amplitude a, N, L, T, beta = 2^first .. 2^last, escape level and its betas."""

    amplitude: float = 0.5
    tokens: int = 2048
    layers: int = 16
    horizon: float = 2.0
    first: int = 4
    last: int = 10
    eps: float = 0.1
    escape_first: int = 4
    escape_last: int = 7
    seed: int = 0

    @classmethod
    def quick(cls) -> LowTemperatureSettings:
        return cls(tokens=1024, last=8, escape_last=6)


SETTINGS = (
    Param("amplitude", float, LowTemperatureSettings.amplitude, low=0.01, high=0.95, doc="rho = (1 + a cos) / 2 pi"),
    Param("tokens", int, LowTemperatureSettings.tokens, low=64, doc="N (the density's quantiles)"),
    Param("layers", int, LowTemperatureSettings.layers, low=1, doc="L"),
    Param("horizon", float, LowTemperatureSettings.horizon, low=1e-3, doc="T (the fixed t)"),
    Param("first", int, LowTemperatureSettings.first, low=2, high=14, doc="smallest beta = 2^first"),
    Param("last", int, LowTemperatureSettings.last, low=4, high=14, doc="largest beta = 2^last (>= first + 2)"),
    Param("eps", float, LowTemperatureSettings.eps, low=1e-3, high=1.0, doc="escape level of W2"),
    Param("escape_first", int, LowTemperatureSettings.escape_first, low=1, high=10, doc="escape betas from 2^this"),
    Param("escape_last", int, LowTemperatureSettings.escape_last, low=3, high=10, doc="escape betas to 2^this"),
)
"""The experiment's declared settings (``sdeformer low-temperature --set NAME=VALUE``)."""


@dataclass(frozen=True)
class LowTemperatureResult(Result):
    """W2 at fixed T per beta with the prediction and the slope; the escape times with theirs; the verdicts."""

    beta: list[float]
    w2: list[float]
    w2_predicted: list[float]
    slope: float
    slope_lo: float
    slope_hi: float
    theory_slope: float
    bound_slope: float
    escape_beta: list[float]
    escape_time: list[float]
    escape_predicted: list[float]
    escape_slope: float
    escape_slope_lo: float
    escape_slope_hi: float
    log_model_slope: float
    agrees: bool
    bound_rejected: bool
    escape_agrees: bool
    log_model_rejected: bool
    figure: str = FIGURE

    @property
    def holds(self) -> bool:
        return self.agrees and self.bound_rejected and self.escape_agrees and self.log_model_rejected


def kappa(a: float) -> float:
    """|rho'/rho| in L2(rho) for rho = (1 + a cos theta) / (2 pi): sqrt(1 - sqrt(1 - a^2)) (closed form)."""
    return math.sqrt(1.0 - math.sqrt(1.0 - a * a))


def quantile_angles(n: int, a: float) -> np.ndarray:
    """``(n,)`` angles theta_i in (-pi, pi) with F(theta_i) = (i + 1/2) / n, F the density's CDF (Newton)."""
    target = 2 * math.pi * (np.arange(n) + 0.5) / n - math.pi  # theta + a sin(theta) = target
    theta = target.copy()
    for _ in range(50):
        theta -= (theta + a * np.sin(theta) - target) / (1 + a * np.cos(theta))
    return theta


def w2_circle(theta: np.ndarray, theta0: np.ndarray, shifts: int = 3) -> np.ndarray:
    """W2 between the equal-weight laws at ``theta`` ``(..., n)`` and ``theta0`` ``(n,)`` on the circle: the best
    of the cyclic couplings i -> i + s, |s| <= ``shifts`` (the flow keeps the tokens' order). ``(...,)``."""
    best = None
    for s in range(-shifts, shifts + 1):
        d = (np.roll(theta, s, axis=-1) - theta0 + math.pi) % (2 * math.pi) - math.pi
        cost = np.sqrt((d**2).mean(-1))
        best = cost if best is None else np.minimum(best, cost)
    assert best is not None  # shifts >= 0: at least one coupling
    return best


def trajectory(s: LowTemperatureSettings, beta: float, layers: int, every: int) -> np.ndarray:
    """``(layers / every + 1, N)`` token angles of the noise-free model with Q^T K = beta I, dt = T / L."""
    import torch

    from ...attention._softmax import SoftmaxAttention
    from ...dynamics._discrete import StochasticTransformer

    theta0 = torch.as_tensor(quantile_angles(s.tokens, s.amplitude))
    x0 = torch.stack([theta0.cos(), theta0.sin()], -1)  # (N, 2)
    dt = s.horizon / s.layers
    x = StochasticTransformer(layers, layers * dt, None, SoftmaxAttention(float(beta))).run(x0, saveat=every).x
    return torch.atan2(x[..., 1], x[..., 0]).numpy()


def escape_time(s: LowTemperatureSettings, beta: float) -> float:
    """The first t with W2(mu_t, mu_0) > eps (linear interpolation between layers), run to 1.5 x the prediction."""
    dt = s.horizon / s.layers
    layers = int(math.ceil((1.5 * s.eps * beta * (1 + dt) / kappa(s.amplitude) + 2) / dt))
    w2 = w2_circle(trajectory(s, beta, layers, 1), quantile_angles(s.tokens, s.amplitude))
    i = int(np.argmax(w2 > s.eps))
    if i == 0:
        return float("nan")
    return dt * (i - 1 + (s.eps - w2[i - 1]) / (w2[i] - w2[i - 1]))


def run(settings: LowTemperatureSettings, advance=lambda _n: None) -> LowTemperatureResult:
    """The experiment (module docstring); ``advance(1)`` after each beta of each part."""
    s, dt = settings, settings.horizon / settings.layers
    k, theta0 = kappa(s.amplitude), quantile_angles(s.tokens, s.amplitude)
    betas = [float(2**e) for e in range(s.first, s.last + 1)]
    w2 = []
    for beta in betas:
        w2.append(float(w2_circle(trajectory(s, beta, s.layers, s.layers)[-1], theta0)))
        advance(1)
    predicted = [s.layers * dt / (1 + dt) * k / b for b in betas]
    slope, lo, hi = log_slope(betas, w2)
    ebetas = [float(2**e) for e in range(s.escape_first, s.escape_last + 1)]
    times = []
    for beta in ebetas:
        times.append(escape_time(s, beta))
        advance(1)
    eslope, elo, ehi = log_slope(ebetas, times)
    log_model = 1.0 / float(np.mean(np.log(ebetas)))  # d log(log beta) / d log beta, averaged
    return LowTemperatureResult(
        betas, w2, predicted, slope, lo, hi, -1.0, -0.5, ebetas, times,
        [s.eps * b * (1 + dt) / k for b in ebetas], eslope, elo, ehi, log_model,
        abs(slope + 1.0) < SLOPE_TOL and abs(w2[-1] / predicted[-1] - 1) < 0.02, not lo <= -0.5 <= hi,
        0.9 <= eslope <= 1.1, not elo <= log_model <= ehi,
    )  # fmt: skip


def settings_for(quick: bool, changes: dict[str, object] | None = None) -> LowTemperatureSettings:
    from ...core._errors import ConfigError

    base = LowTemperatureSettings.quick() if quick else LowTemperatureSettings()
    s = dataclasses.replace(base, **(changes or {}))  # type: ignore[arg-type]
    if s.last < s.first + 2:
        raise ConfigError("last", s.last, f"at least first + 2 = {s.first + 2} (a slope)")
    if s.escape_last < s.escape_first + 2:
        raise ConfigError("escape_last", s.escape_last, f"at least escape_first + 2 = {s.escape_first + 2}")
    return s


def units(_seed: int, quick: bool, changes: dict[str, object]) -> int:
    s = settings_for(quick, changes)
    return s.last - s.first + 1 + s.escape_last - s.escape_first + 1


def run_and_write(out: Path, quick: bool, seed: int, advance=lambda _n: None, changes=None) -> LowTemperatureResult:
    settings = dataclasses.replace(settings_for(quick, changes), seed=seed)
    return cached(Path(out) / "low_temperature.json", settings, LowTemperatureResult, lambda: run(settings, advance))


def section(result: LowTemperatureResult, folder: str = "low-temperature") -> Section:
    verdict = "holds" if result.holds else "fails"
    return Section(
        "Low temperature: the token law near its zero-temperature push-forward (Alcalde et al. 2026)",
        [
            "Q^T K = beta I, V = I on the circle: the zero-temperature projection is the identity. W2(mu_T, mu_0) "
            f"has slope {result.slope:.3f} [{result.slope_lo:.3f}, {result.slope_hi:.3f}] against beta (Laplace: "
            f"-1 within {SLOPE_TOL}; the abstract's bound -1/2 is an upper rate and is "
            + ("outside" if result.bound_rejected else "inside")
            + f"); at the largest beta W2 / prediction = {result.w2[-1] / result.w2_predicted[-1]:.4f}. The escape "
            f"time (W2 > eps) grows with slope {result.escape_slope:.3f} [{result.escape_slope_lo:.3f}, "
            f"{result.escape_slope_hi:.3f}] against beta, not like log beta (slope {result.log_model_slope:.3f}): "
            f"the check {verdict}.",
        ],
        [
            Table(
                ["beta", "W2(mu_T, mu_0)", "Laplace prediction", "ratio"],
                [[b, w, p, w / p] for b, w, p in zip(result.beta, result.w2, result.w2_predicted)],
                "a deterministic quadrature of mu_0 (its quantiles): no sampling error; the ratio -> 1 like 1/beta",
                from_runs=True,
                exact={
                    "beta": "a setting",
                    "W2(mu_T, mu_0)": "a deterministic run",
                    "Laplace prediction": "a closed form",
                    "ratio": "a deterministic run",
                },
            )  # fmt: skip
        ],
        [Figure(Path(folder) / result.figure, "W2 at fixed T and the escape time against beta, with predictions")],
    )


def report(ctx: Context) -> list[Section]:
    from ...plots._field import low_temperature_figure

    folder = ctx.out / "low-temperature"
    result = run_and_write(folder, ctx.quick, ctx.seed, ctx.advance, ctx.settings)
    low_temperature_figure(result, folder / result.figure)
    return [section(result)]
