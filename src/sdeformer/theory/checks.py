"""The record of a theory check of BEYOND sections 1-4, with its power (issue 17: every check shows its power).

A ``Check`` carries the prediction and its source, the measurement with its standard error, the tolerance
and how it was set, and a ``Power`` record: the same check (same prediction, same tolerance) run on a named
wrong model, which must fail. The verdict is "fails" when the measurement is outside the tolerance, "not
resolved" when the wrong model would have passed too (or, for a sign, when the tolerance reaches past zero),
and "holds" otherwise: "holds" always means that a wrong model would have been caught.

The tolerance of a Monte Carlo check is ``SIGMAS`` combined standard errors (of the measurement at h/2 and of
the step bias) plus the step bias |m_h - m_{h/2}|, measured on coupled runs (the same Brownian path on h and
h/2, ``coupled``), plus any stated allowance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

import torch

from ..contracts import RandomSource
from ..noise.sources import Antithetic
from .coupled import Paired, coupled, single
from .montecarlo import Estimate, Model, Normals, Statistic

SIGMAS = 3.0  # standard errors in a tolerance
COUPLED_RULE = (
    f"{SIGMAS:g} s.e. (measurement and step bias combined) + |m_h - m_(h/2)| (coupled: one Brownian path on h, h/2)"
)
BOUNDS = ("equal", "at_most", "sign")  # |m - p| <= tol; m <= p + tol; |m - p| <= tol with the sign of p


@dataclass(frozen=True)
class Power:
    """The check run on a named wrong model: its measurement, and whether the check caught it (failed)."""

    perturbation: str
    measured: float
    standard_error: float
    caught: bool


@dataclass(frozen=True)
class Check:
    """One theory check: model, setting, quantity; prediction (and its source) against measurement (+ s.e.),
    the tolerance (and its rule), the step bias (+ s.e.) inside it, the kind of bound and the power record."""

    model: str
    setting: dict
    quantity: str
    predicted: float
    source: str
    measured: float
    standard_error: float
    tolerance: float
    tolerance_rule: str
    step_bias: float = 0.0
    step_bias_se: float = 0.0
    bound: str = "equal"
    power: Power | None = None
    extra: dict = field(default_factory=dict)

    def accepts(self, value: float) -> bool:
        """Whether a measurement ``value`` passes this check (BOUNDS)."""
        if self.bound == "at_most":
            return value <= self.predicted + self.tolerance
        close = abs(value - self.predicted) <= self.tolerance
        return close and (self.bound != "sign" or math.copysign(1.0, value) == math.copysign(1.0, self.predicted))

    @property
    def resolved(self) -> bool:
        """The wrong model was caught, and a sign check's tolerance stays short of zero."""
        caught = self.power is not None and self.power.caught
        return caught and (self.bound != "sign" or self.tolerance < abs(self.predicted))

    @property
    def verdict(self) -> str:
        """'fails', 'not resolved' or 'holds' (module docstring)."""
        if not self.accepts(self.measured):
            return "fails"
        return "holds" if self.resolved else "not resolved"

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"

    def with_power(self, perturbation: str, wrong: Estimate) -> Check:
        """This check with the power record of ``wrong``, the measurement of the wrong model."""
        return replace(self, power=Power(perturbation, wrong.mean, wrong.se, not self.accepts(wrong.mean)))

    def record(self) -> dict:
        """The JSON record of ``checks.json``: the fields, ``extra`` flattened in, ``power`` as a dict,
        ``verdict`` and ``holds``."""
        out = asdict(self)
        out.pop("extra")
        return {**out, **self.extra, "verdict": self.verdict, "holds": self.holds}


def measured(
    model: str,
    setting: dict,
    quantity: str,
    predicted: float,
    source: str,
    fine: Estimate,
    bias: Estimate,
    *,
    bound: str = "equal",
    allowance: float = 0.0,
    allowance_rule: str = "",
    extra: dict | None = None,
) -> Check:
    """A Check of the measurement ``fine`` (at h/2) with the coupled step bias ``bias`` (COUPLED_RULE, plus a
    stated ``allowance``)."""
    tol = SIGMAS * math.hypot(fine.se, bias.se) + abs(bias.mean) + allowance
    rule = COUPLED_RULE + (f" + {allowance_rule}" if allowance_rule else "")
    return Check(
        model,
        setting,
        quantity,
        predicted,
        source,
        fine.mean,
        fine.se,
        tol,
        rule,
        bias.mean,
        bias.se,
        bound,
        extra=extra or {},
    )


@dataclass(frozen=True)
class Run:
    """How a check runs its model: start ``x0`` ``(R, N, d)``, step ``h`` (coupled with h/2), ``horizon``,
    the statistic it measures and its seed (the power record draws from ``seed + 1``). ``antithetic``: the
    R paths are R antithetic pairs (batch ``(2, R)``, ``noise.sources.Antithetic``), each pair one sample."""

    x0: torch.Tensor
    h: float
    horizon: float
    statistic: Callable[[], Statistic]
    seed: int = 0
    antithetic: bool = False

    def _source(self, seed: int) -> RandomSource:
        normals = Normals(seed, (self.x0.shape[0],))
        return Antithetic(normals) if self.antithetic else normals

    def _start(self) -> torch.Tensor:
        return self.x0.expand(2, *self.x0.shape) if self.antithetic else self.x0

    def coupled(self, model: Model) -> Paired:
        """The model at h/2 and h on one Brownian path."""
        return coupled(model, self._start(), self.h, self.horizon, self._source(self.seed), self.statistic)

    def wrong(self, model: Model) -> tuple[list[Estimate], Statistic]:
        """A wrong model at h/2 alone, on its own noise: the measurement of a power record."""
        return single(model, self._start(), self.h / 2, self.horizon, self._source(self.seed + 1), self.statistic)
