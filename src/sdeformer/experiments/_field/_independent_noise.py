"""``independent-noise``: the critical beta*_d of unnormalized attention with per-token noise (Mun, Rosenzweig,
arXiv 2606.05140; docs/field.md, "Independent noise"); the model and its mean-field pieces are ``_usa``'s.

Three numbers per d. ``beta_crit``: the paper's characterisation I_{d/2+1}(beta) / I_{d/2}(beta) = 1/d, solved.
``beta_crit_branch``: the beta where the stationary equation's zonal branch turns from rising (continuous) to
falling (discontinuous) at K_#, solved independently on a grid (``_usa.branch``). ``beta_crit_sim``: particles.
Below beta*_d no clustered stationary state exists under K_#; above it one exists down to the spinodal
K_s(beta) < K_#. So particles started clustered at K = (1 - delta) K_#(beta) stay clustered exactly when
K_s(beta) <= (1 - delta) K_#(beta), i.e. above beta_c(delta), which the branch predicts and which tends to beta*_d as
delta -> 0. The order parameter |mean X| (last half of the run, mean and 95 % interval over seeds) is measured
on a grid of beta, all runs of one d side by side (``_independent_noise_particles``). The crossing of the level
``LEVEL`` is beta_crit_sim; its interval the grid points between which the interval's bounds cross
(``bracket``); None ("not identified") where the crossing sits on the grid's boundary (already above the level
at the smallest beta, or never reaching it). ``sim_agrees`` says whether that interval contains the branch's
beta_c(delta) (False where the crossing is not identified). A run lasts ``relaxations`` times the uniform state's
relaxation time 1 / ((d - 1) delta) (in units of K): a shorter run leaves clusters that would dissolve and biases
the crossing low (docs/field.md). The check holds when the branch agrees with the characterisation (relative 1e-3)
and, for every d run, the particles' bracket contains the predicted beta_c(delta) (``sim_agrees``); its power: the
characterisation with the wrong ratio 1/(d+1) misses the branch by far more, a prediction the particles' bracket
excludes fails ``sim_agrees`` (at report size: beta*_d itself for every d), and the wrong model "continuous at
every beta" (no clustered state under K_#) is rejected when the particles' order parameter at the largest beta
stays above ``LEVEL``. There the particles are also compared with the theory at the same inputs: ``order_branch`` is the
stable clustered state's first moment on the branch at K = (1 - delta) K_# (``_usa.branch_order``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import brentq

from ...io._report import Figure, Section, Table
from ...params import Param
from ...plots._names import FIGURES
from .._registry import Context
from .._results import Result
from . import _usa as usa
from ._common import Z95, cached

FIGURE = FIGURES["independent-noise"]["critical"]  # the plots own the name
LEVEL = 0.45  # between the uniform state's |mean| (about 1/sqrt(N delta)) and the clustered branch's (> 0.5)
BRANCH_RTOL = 1e-3  # the branch's beta* against the characterisation (its bias: O(m^2) at m = 0.01)


@dataclass(frozen=True)
class IndependentNoiseSettings:
    """Dimensions; the particles' number, run time (in relaxation times of the uniform state, 1 / ((d - 1) delta)
    in units of K), step (units of K), seeds, delta and the beta grid (multiples of beta*_d)."""

    dims: str = "2,3,4,5"
    tokens: int = 200
    relaxations: float = 8.0
    dt: float = 0.004
    seeds: int = 4
    delta: float = 0.1
    grid: str = "1,1.4,1.5,1.6,1.7,1.8,1.9,2,2.1,2.2,2.5"
    seed: int = 0

    @classmethod
    def quick(cls) -> IndependentNoiseSettings:
        return cls(dims="2,3", tokens=100, seeds=3, grid="1,1.5,1.7,1.9,2.1,2.3")

    def floats(self, name: str) -> list[float]:
        return [float(v) for v in getattr(self, name).split(",")]


SETTINGS = (
    Param("dims", str, IndependentNoiseSettings.dims, doc="dimensions d (comma-separated, 2..8)"),
    Param("tokens", int, IndependentNoiseSettings.tokens, low=20, doc="particles N"),
    Param(
        "relaxations",
        float,
        IndependentNoiseSettings.relaxations,
        low=0.1,
        doc="run time / the uniform state's relaxation time 1 / ((d - 1) delta) K",
    ),
    Param("dt", float, IndependentNoiseSettings.dt, low=1e-5, high=0.05, doc="step / K"),
    Param("seeds", int, IndependentNoiseSettings.seeds, low=2, doc="runs per beta"),
    Param("delta", float, IndependentNoiseSettings.delta, low=0.01, high=0.5, doc="K = (1 - delta) K_#"),
    Param("grid", str, IndependentNoiseSettings.grid, doc="beta / beta*_d (comma-separated, increasing)"),
)
"""The experiment's declared settings (``sdeformer independent-noise --set NAME=VALUE``)."""


@dataclass(frozen=True)
class IndependentNoiseResult(Result):
    """Per d (keys "2".."5"): the three beta*s, the branch's beta_c(delta), the particles' order parameter on the
    grid with its interval, K_# (ours and the paper's normalisation) at beta*_d, the verdicts."""

    beta_crit: dict[str, float]
    beta_crit_branch: dict[str, float]
    beta_crit_sim: dict[str, float | None]
    beta_crit_sim_lo: dict[str, float | None]
    beta_crit_sim_hi: dict[str, float | None]
    beta_crit_predicted: dict[str, float]
    beta: dict[str, list[float]]
    order: dict[str, list[float]]
    order_lo: dict[str, list[float]]
    order_hi: dict[str, list[float]]
    threshold: dict[str, float]
    threshold_paper: dict[str, float]
    agrees: dict[str, bool]
    sim_agrees: dict[str, bool]
    wrong_beta_crit: dict[str, float]
    wrong_rejected: dict[str, bool]
    order_branch: dict[str, float | None]
    delta: float
    tokens: int
    figure: str = FIGURE

    @property
    def holds(self) -> bool:
        return all(self.agrees.values()) and all(self.wrong_rejected.values()) and all(self.sim_agrees.values())


def crossing(beta: list[float], values: list[float], level: float) -> float | None:
    """The first beta where ``values`` (linear between grid points) reaches ``level`` from below; None if never
    (or already at the first point: not identified on this grid)."""
    if values[0] >= level:
        return None
    for k in range(1, len(beta)):
        if values[k] >= level:
            f = (level - values[k - 1]) / (values[k] - values[k - 1])
            return beta[k - 1] + f * (beta[k] - beta[k - 1])
    return None


def bracket(beta: list[float], lower: list[float], upper: list[float], level: float) -> tuple[float | None, ...]:
    """The crossing's 95 % bracket on the grid: the last beta before the interval's upper bound first reaches
    ``level`` and the first beta where its lower bound does (the transition is a jump, so the crossing may sit
    anywhere between grid points); None where that is the grid's boundary (not identified)."""
    up = next((k for k, v in enumerate(upper) if v >= level), None)
    low = next((k for k, v in enumerate(lower) if v >= level), None)
    return (None if not up else beta[up - 1]), (None if low is None or low == 0 else beta[low])


def predicted_crossing(dim: int, delta: float, top: float) -> float:
    """beta_c(delta): the branch's spinodal ratio K_s / K_# equals 1 - delta (``_usa.spinodal_ratio``)."""
    root = brentq(lambda b: usa.spinodal_ratio(dim, b)[0] - (1 - delta), usa.beta_star(dim) * 1.01, top, xtol=1e-4)
    return float(root)  # pyright: ignore[reportArgumentType]


def orders(settings: IndependentNoiseSettings, dim: int) -> tuple[list[float], np.ndarray]:
    """The beta grid of ``dim`` and the particles' order parameters ``(grid, seeds)``: all runs side by side,
    each at K = (1 - delta) K_#(beta) for ``relaxations`` relaxation times 1 / ((d - 1) delta) (in units of K)."""
    from ._independent_noise_particles import order_parameters

    s, star = settings, usa.beta_star(dim)
    betas = [f * star for f in s.floats("grid")]
    runs = [(b, (1 - s.delta) * usa.threshold(dim, b)) for b in betas for _ in range(s.seeds)]
    steps = int(round(s.relaxations / ((dim - 1) * s.delta) / s.dt))
    m = order_parameters(dim, [b for b, _ in runs], [k for _, k in runs], s.tokens, steps, [s.dt * k for _, k in runs],
                         s.seed * 10**6 + dim)  # fmt: skip
    return betas, m.reshape(len(betas), s.seeds)


def run(settings: IndependentNoiseSettings, advance=lambda _n: None) -> IndependentNoiseResult:
    """The experiment (module docstring); ``advance(1)`` after each dimension."""
    fields: dict[str, dict[str, object]] = {k: {} for k in IndependentNoiseResult.__dataclass_fields__}
    for dim in [int(v) for v in settings.dims.split(",")]:
        star = usa.beta_star(dim)
        betas, m = orders(settings, dim)
        mean, half = m.mean(1), Z95 * m.std(1, ddof=1) / math.sqrt(settings.seeds)
        sim, (lo, hi) = crossing(betas, list(mean), LEVEL), bracket(betas, list(mean - half), list(mean + half), LEVEL)
        branch, wrong = usa.branch_beta_star(dim), usa.beta_star(dim, 1.0 / (dim + 1))
        predicted = predicted_crossing(dim, settings.delta, 4 * star)
        values = {
            "beta_crit": star, "beta_crit_branch": branch, "beta_crit_sim": sim, "beta_crit_sim_lo": lo,
            "beta_crit_sim_hi": hi, "beta_crit_predicted": predicted, "beta": betas, "order": list(mean),
            "order_lo": list(mean - half), "order_hi": list(mean + half),
            "threshold": usa.threshold(dim, star), "threshold_paper": usa.threshold(dim, star) / 2,
            "agrees": abs(branch / star - 1) < BRANCH_RTOL, "wrong_beta_crit": wrong,
            "sim_agrees": None not in (lo, hi) and lo <= predicted <= hi,  # type: ignore[operator]
            "order_branch": usa.branch_order(dim, betas[-1], 1 - settings.delta),
            "wrong_rejected": bool(mean[-1] - half[-1] > LEVEL) and abs(branch / wrong - 1) > 10 * BRANCH_RTOL,
        }  # fmt: skip
        for name, value in values.items():
            fields[name][str(dim)] = value
        advance(1)
    return IndependentNoiseResult(
        delta=settings.delta,
        tokens=settings.tokens,
        **{k: v for k, v in fields.items() if v},  # pyright: ignore[reportArgumentType]
    )


def settings_for(quick: bool, changes: dict[str, object] | None = None) -> IndependentNoiseSettings:
    """The report's (or the quick) size with ``changes``; ConfigError naming a bad ``dims`` or ``grid``."""
    from ...core._errors import ConfigError

    settings = dataclasses.replace(IndependentNoiseSettings.quick() if quick else IndependentNoiseSettings(),
                                   **(changes or {}))  # fmt: skip
    try:
        dims, grid = [int(v) for v in settings.dims.split(",")], settings.floats("grid")
    except ValueError as exc:
        raise ConfigError("dims/grid", f"{settings.dims} / {settings.grid}", "comma-separated numbers") from exc
    if not dims or any(d < 2 or d > 8 for d in dims):
        raise ConfigError("dims", settings.dims, "comma-separated integers in [2, 8]")
    if len(grid) < 2 or any(b <= a for a, b in zip(grid, grid[1:])) or grid[0] <= 0:
        raise ConfigError("grid", settings.grid, "at least two increasing positive multiples of beta*_d")
    return settings


def units(_seed: int, quick: bool, changes: dict[str, object]) -> int:
    return len(settings_for(quick, changes).dims.split(","))


def run_and_write(out: Path, quick: bool, seed: int, advance=lambda _n: None, changes=None) -> IndependentNoiseResult:
    settings = dataclasses.replace(settings_for(quick, changes), seed=seed)
    return cached(
        Path(out) / "independent_noise.json", settings, IndependentNoiseResult, lambda: run(settings, advance)
    )


def _fmt(value: float | None) -> str:
    return "not identified" if value is None else f"{value:.3f}"


def _below(result: IndependentNoiseResult, d: str) -> bool:
    """beta*_d below the particles' bracket (the crossing identified above it)."""
    lo = result.beta_crit_sim_lo[d]
    return lo is not None and lo > result.beta_crit[d]


def section(result: IndependentNoiseResult, folder: str = "independent-noise") -> Section:
    rows = [
        [d, result.beta_crit[d], result.beta_crit_branch[d], result.threshold[d], result.threshold_paper[d],
         result.beta_crit_predicted[d],
         f"{_fmt(result.beta_crit_sim[d])} [{_fmt(result.beta_crit_sim_lo[d])}, {_fmt(result.beta_crit_sim_hi[d])}]",
         "yes" if result.sim_agrees[d] else "no",
         f"{result.order[d][-1]:.3f} [{result.order_lo[d][-1]:.3f}, {result.order_hi[d][-1]:.3f}] / "
         f"{_fmt(result.order_branch[d])}", "yes" if result.agrees[d] else "no",
         "yes" if result.wrong_rejected[d] else "no"]
        for d in result.beta_crit
    ]  # fmt: skip
    return Section(
        "Independent noise: the critical beta*_d of unnormalized attention (Mun, Rosenzweig 2026)",
        [
            "beta*_d solves I_{d/2+1}(beta) / I_{d/2}(beta) = 1/d; the stationary equation's zonal branch gives it "
            "independently; particles with per-token noise started clustered at K = (1 - "
            f"{result.delta:g}) K_#(beta) ({result.tokens} tokens) stay clustered above the branch's beta_c(delta) "
            "(which tends to beta*_d as delta -> 0); K_#(beta) = beta^{d/2} / (2^{d/2-1} Gamma(d/2) I_{d/2}(beta)) is "
            "the uniform law's linear-stability threshold. The particles' crossing of |mean X| = "
            f"{LEVEL:g} is bracketed by the grid points where the 95 % interval's bounds cross it ('not identified' "
            "on the grid's boundary). The wrong models: a continuous transition at every beta (rejected where the "
            "particles stay clustered at the largest beta), and a crossing at beta*_d itself at this delta "
            "(rejected where beta*_d lies below the bracket: "
            + ", ".join(f"d = {d}: {'yes' if _below(result, d) else 'no'}" for d in result.beta_crit)
            + ").",
        ],
        [
            Table(
                [
                    "d",
                    "beta* (Bessel)",
                    "beta* (branch)",
                    "K_# at beta* (ours)",
                    "K_# (paper's)",
                    "beta_c(delta) (branch)",
                    "beta_c(delta) (particles) [95%]",
                    "particles agree",
                    "|mean X| at the largest beta: particles [95%] / branch",
                    "branch = Bessel",
                    "wrong rejected",
                ],
                rows,
                "critical inverse temperatures per dimension",
                from_runs=True,
                exact={
                    "d": "a setting",
                    "beta* (Bessel)": "a root",
                    "beta* (branch)": "a deterministic solve",
                    "K_# at beta* (ours)": "closed form",
                    "K_# (paper's)": "closed form",
                    "beta_c(delta) (branch)": "a deterministic solve",
                },
            )
        ],  # fmt: skip
        [Figure(Path(folder) / result.figure, "order parameter |mean X| against beta / beta*_d, 95 % intervals")],
    )


def report(ctx: Context) -> list[Section]:
    from ...plots._field import independent_noise_figure

    folder = ctx.out / "independent-noise"
    result = run_and_write(folder, ctx.quick, ctx.seed, ctx.advance, ctx.settings)
    independent_noise_figure(result, folder / result.figure, LEVEL)
    return [section(result)]
