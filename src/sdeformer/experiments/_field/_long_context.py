"""``long-context``: the critical inverse temperature of one query over n uniform keys (Bruno, Chen, Lin, Polyanskiy,
Rigollet, arXiv 2605.08505; docs/field.md, "Long contexts").

The claim: with the query e_1 and n i.i.d. uniform keys on S^{d-1}, softmax attention becomes selective at
beta*_n ~ n^{2/(d-1)}; at that scale a finite number of keys keeps the mass, and below it (subcritical) the output
is a local average with Gaussian fluctuations. Measured (``_selectivity``): beta*(n), defined by E[max_j w_j] = 1/2,
for d in ``dims`` and n = 2^first .. 2^last, by Monte Carlo over ``samples`` contexts, with delta-method errors;
the slope of log beta* on log n (with the first finite-n correction, n^{-2/(d-1)}) and its 95 % interval against
2/(d-1); the mean participation number 1 / sum w_j^2 at beta* (keys holding mass) per n; and at the largest n
the normality test (D'Agostino-Pearson) of the output's coordinate orthogonal to the query over ``samples``
contexts, subcritical (beta = n^{1/(d-1)}) and at beta*. The check holds when every d's interval contains
2/(d-1); its power: the wrong model beta* ~ n^{1/(d-1)} (the exponent halved) must fall outside every interval.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...io._report import Figure, Section, Table
from ...params import Param
from ...plots._names import FIGURES
from .._registry import Context
from .._results import Result
from ._common import cached
from ._selectivity import critical_beta, fitted_slope, gaps

FIGURE = FIGURES["long-context"]["slope"]  # the plots own the name


@dataclass(frozen=True)
class LongContextSettings:
    """The dimensions, the context lengths 2^first .. 2^last, the Monte Carlo contexts per point, the seed."""

    dims: str = "2,3,4,5"
    first: int = 7
    last: int = 15
    samples: int = 2000
    seed: int = 0

    @classmethod
    def quick(cls) -> LongContextSettings:
        return cls(first=7, last=11, samples=400)

    def dimensions(self) -> list[int]:
        return [int(v) for v in self.dims.split(",")]


SETTINGS = (
    Param("dims", str, LongContextSettings.dims, doc="dimensions d (comma-separated, each >= 2)"),
    Param("first", int, LongContextSettings.first, low=2, high=20, doc="smallest n = 2^first"),
    Param("last", int, LongContextSettings.last, low=4, high=20, doc="largest n = 2^last (at least first + 3)"),
    Param("samples", int, LongContextSettings.samples, low=50, doc="Monte Carlo contexts per (d, n)"),
)
"""The experiment's declared settings (``sdeformer long-context --set NAME=VALUE``)."""


@dataclass(frozen=True)
class LongContextResult(Result):
    """Per d (keys "2".."5"): beta*(n) and its s.e., the fitted slope with its 95 % interval, the theory's and the
    wrong model's slopes, the verdicts; the keys holding mass at beta*; the normality p-values."""

    n: list[int]
    beta_star: dict[str, list[float]]
    beta_star_se: dict[str, list[float]]
    slope: dict[str, float]
    slope_lo: dict[str, float]
    slope_hi: dict[str, float]
    theory_slope: dict[str, float]
    wrong_slope: dict[str, float]
    agrees: dict[str, bool]
    wrong_rejected: dict[str, bool]
    keys_at_critical: dict[str, list[float]]
    keys_se: dict[str, list[float]]
    gaussian_p: dict[str, dict[str, float]]
    samples: int
    figure: str = FIGURE

    @property
    def holds(self) -> bool:
        return all(self.agrees.values()) and all(self.wrong_rejected.values())


def orthogonal_output(dim: int, n: int, beta: float, samples: int, rng: np.random.Generator) -> np.ndarray:
    """``(samples,)`` second coordinate of the attention output sum_j w_j k_j of the query e_1 over n uniform keys."""
    out = np.empty(samples)
    rows = max(1, (1 << 21) // (n * dim))
    for start in range(0, samples, rows):
        k = rng.standard_normal((min(rows, samples - start), n, dim))
        k /= np.linalg.norm(k, axis=-1, keepdims=True)  # (r, n, d) uniform on the sphere
        s = beta * k[..., 0]
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        out[start : start + len(w)] = (w * k[..., 1]).sum(axis=1)
    return out


def run(settings: LongContextSettings, advance=lambda _n: None) -> LongContextResult:
    """The experiment (module docstring); ``advance(1)`` after each dimension."""
    from scipy.stats import normaltest

    ns = [2**e for e in range(settings.first, settings.last + 1)]
    fields: dict[str, dict[str, object]] = {k: {} for k in LongContextResult.__dataclass_fields__}
    for d in settings.dimensions():
        key, rng = str(d), np.random.default_rng([settings.seed, d])
        crit = [critical_beta(*gaps(d, n, settings.samples, rng)) for n in ns]
        beta, se = [c.beta for c in crit], [c.se for c in crit]
        slope, lo, hi = fitted_slope(ns, beta, se, 2.0 / (d - 1))
        theory, wrong = 2.0 / (d - 1), 1.0 / (d - 1)
        sub = orthogonal_output(d, ns[-1], ns[-1] ** (1.0 / (d - 1)), settings.samples, rng)
        at = orthogonal_output(d, ns[-1], beta[-1], settings.samples, rng)
        values = {
            "beta_star": beta, "beta_star_se": se, "slope": slope, "slope_lo": lo, "slope_hi": hi,
            "theory_slope": theory, "wrong_slope": wrong, "agrees": lo <= theory <= hi,
            "wrong_rejected": not lo <= wrong <= hi, "keys_at_critical": [c.keys for c in crit],
            "keys_se": [c.keys_se for c in crit],
            "gaussian_p": {"subcritical": float(normaltest(sub).pvalue), "critical": float(normaltest(at).pvalue)},
        }  # fmt: skip
        for name, value in values.items():
            fields[name][key] = value
        advance(1)
    return LongContextResult(n=ns, samples=settings.samples, **{k: v for k, v in fields.items() if v})  # type: ignore[arg-type]


def settings_for(quick: bool, changes: dict[str, object] | None = None) -> LongContextSettings:
    """The report's (or the quick) size with ``changes``; ConfigError naming a bad ``dims`` or range."""
    from ...core._errors import ConfigError

    settings = dataclasses.replace(LongContextSettings.quick() if quick else LongContextSettings(), **(changes or {}))
    try:
        dims = settings.dimensions()
    except ValueError:
        dims = []
    if not dims or any(d < 2 or d > 64 for d in dims):
        raise ConfigError("dims", settings.dims, "comma-separated integers in [2, 64]")
    if settings.last < settings.first + 3:
        raise ConfigError("last", settings.last, f"at least first + 3 = {settings.first + 3} (the fit has 3 terms)")
    return settings


def units(_seed: int, quick: bool, changes: dict[str, object]) -> int:
    """Progress units: one per dimension."""
    return len(settings_for(quick, changes).dimensions())


def run_and_write(out: Path, quick: bool, seed: int, advance=lambda _n: None, changes=None) -> LongContextResult:
    """``run`` at the report's (or quick) size, cached in ``out/long_context.json`` for its settings."""
    settings = dataclasses.replace(settings_for(quick, changes), seed=seed)
    return cached(Path(out) / "long_context.json", settings, LongContextResult, lambda: run(settings, advance))


def section(result: LongContextResult, folder: str = "long-context") -> Section:
    dims = list(result.slope)
    rows = [
        [d, f"{result.slope[d]:.3f} [{result.slope_lo[d]:.3f}, {result.slope_hi[d]:.3f}]", result.theory_slope[d],
         "yes" if result.agrees[d] else "no", result.wrong_slope[d], "yes" if result.wrong_rejected[d] else "no",
         f"{min(result.keys_at_critical[d]):.2f} .. {max(result.keys_at_critical[d]):.2f} "
         f"(s.e. {max(result.keys_se[d]):.2f})", result.gaussian_p[d]["subcritical"],
         result.gaussian_p[d]["critical"]]
        for d in dims
    ]  # fmt: skip
    verdict = "holds" if result.holds else "fails"
    return Section(
        "Long contexts: the critical inverse temperature beta*(n) ~ n^(2/(d-1))",
        [
            "One query e_1 and n uniform keys on S^(d-1) (Bruno, Chen, Lin, Polyanskiy, Rigollet 2026): beta*(n) "
            f"solves E[max_j softmax weight] = 1/2, by Monte Carlo over {result.samples} contexts per point, for n = "
            f"{result.n[0]} .. {result.n[-1]}. The slope of log beta* on log n (with the n^(-2/(d-1)) correction) "
            f"against 2/(d-1): {verdict}; the wrong model n^(1/(d-1)) is outside every interval where 'rejected' "
            "says yes. At beta* about three keys hold the mass (participation 1/sum w^2) at every n; the output's "
            "orthogonal coordinate is Gaussian below the critical scale (p-value) and not at it.",
        ],
        [
            Table(
                [
                    "d",
                    "slope [95% interval]",
                    "2/(d-1)",
                    "agrees",
                    "wrong 1/(d-1)",
                    "rejected",
                    "keys at beta*",
                    "normality p (beta = n^(1/(d-1)))",
                    "normality p (beta*)",
                ],
                rows,
                "fitted exponent of beta*(n) per dimension",
                from_runs=True,
                exact={
                    "d": "a setting",
                    "2/(d-1)": "closed form",
                    "wrong 1/(d-1)": "closed form",
                    "normality p (beta = n^(1/(d-1)))": "a p-value",
                    "normality p (beta*)": "a p-value",
                },
            )
        ],  # fmt: skip
        [Figure(Path(folder) / result.figure, "beta*(n) against n, log-log, with 95 % intervals and the slopes")],
    )


def report(ctx: Context) -> list[Section]:
    """The registered experiment: computed into ``OUT/long-context``, drawn, one section."""
    from ...plots._field import long_context_figure

    folder = ctx.out / "long-context"
    result = run_and_write(folder, ctx.quick, ctx.seed, ctx.advance, ctx.settings)
    long_context_figure(result, folder / result.figure)
    return [section(result)]
