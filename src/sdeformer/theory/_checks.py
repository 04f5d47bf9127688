"""The record of a theory check of BEYOND sections 1-4, with its power.

A ``Check`` carries the prediction and its source, the measurement with its standard error, the tolerance
and how it was set, and its power records: the same check (same prediction) run on wrong models, the quantity
the check is about perturbed by the relative sizes ``SIZES`` (10 % and 20 %), each wrong model re-run as the
model under test with its **own** tolerance (its own standard errors and step bias: a wrong implementation
brings its own). ``smallest_error_caught`` is the smallest size whose wrong model fails the check. The verdict is
"fails" when the measurement is outside the tolerance, "not resolved" when no wrong model was caught (or, for a
sign, when the tolerance reaches past zero), and "holds" otherwise: "holds" always means that a wrong model
would have been caught. A sign check records ``sign_only`` with its reason.

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
from ..noise._sources import Antithetic
from ._coupled import Paired, coupled
from ._montecarlo import Estimate, Model, Normals, Statistic

SIGMAS = 3.0  # standard errors in a tolerance
COUPLED_RULE = (
    f"{SIGMAS:g} s.e. (measurement and step bias combined) + |m_h - m_(h/2)| (coupled: one Brownian path on h, h/2)"
)
SIZES = (0.1, 0.2)  # relative sizes of the perturbations of a power record
BOUNDS = ("equal", "at_most", "sign")  # |m - p| <= tol; m <= p + tol; |m - p| <= tol with the sign of p


@dataclass(frozen=True)
class Power:
    """The check run on a named wrong model: its measurement, and whether the check caught it (failed);
    ``size``: the relative size of the perturbation, ``tolerance``: the wrong model's own (None: a stated
    wrong value, judged with the check's tolerance)."""

    perturbation: str
    measured: float
    standard_error: float
    caught: bool
    size: float | None = None
    tolerance: float | None = None


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
    powers: tuple[Power, ...] = ()

    def accepts(self, value: float) -> bool:
        """Whether a measurement ``value`` passes this check (BOUNDS)."""
        if self.bound == "at_most":
            return value <= self.predicted + self.tolerance
        close = abs(value - self.predicted) <= self.tolerance
        return close and (self.bound != "sign" or math.copysign(1.0, value) == math.copysign(1.0, self.predicted))

    @property
    def smallest_error_caught(self) -> float | None:
        """The smallest relative size among the power records whose wrong model failed the check; a check
        without re-run wrong models (a stated wrong value): the smallest size s of ``SIZES`` at which the
        prediction moved by s (either sign) is rejected by the measurement with this tolerance."""
        if self.powers:
            sizes = [p.size for p in self.powers if p.caught and p.size is not None]
        else:
            sides = (-1,) if self.bound == "at_most" else (1, -1)  # an upper bound: only a lower one is rejected
            sizes = [s for s in SIZES if all(self._rejects(self.predicted * (1 + e * s)) for e in sides)]
        return min(sizes) if sizes else None

    def _rejects(self, prediction: float) -> bool:
        """Whether the measurement rejects ``prediction`` in place of the check's."""
        if self.bound == "at_most":
            return self.measured > prediction + self.tolerance
        return abs(self.measured - prediction) > self.tolerance

    @property
    def resolved(self) -> bool:
        """A wrong model was caught and, for a sign check, its tolerance stays short of zero; otherwise an error of
        at most 20 % is caught (``smallest_error_caught``)."""
        caught = self.power is not None and self.power.caught
        if self.bound == "sign":
            return caught and self.tolerance < abs(self.predicted)
        return caught and self.smallest_error_caught is not None

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

    def with_powers(self, label: Callable[[float], str], wrongs: dict[float, Check]) -> Check:
        """This check with the power records of ``wrongs`` (relative size -> the wrong model's own Check, with
        the same prediction): caught when the wrong model fails its own tolerance, both finite (a wrong model
        with no measurement, e.g. no crossing in its time window, is not caught); ``power`` is the smallest
        caught (else the largest size)."""
        powers = tuple(
            Power(label(s), w.measured, w.standard_error, _finite(w) and not w.accepts(w.measured), s, w.tolerance)
            for s, w in sorted(wrongs.items())
        )
        caught = [p for p in powers if p.caught]
        return replace(self, powers=powers, power=caught[0] if caught else powers[-1])

    def record(self) -> dict:
        """The JSON record of ``checks.json``: the fields, ``extra`` flattened in, ``power`` as a dict,
        ``smallest_error_caught`` (or ``sign_only`` with its ``reason``), ``verdict`` and ``holds``."""
        out = asdict(self)
        out.pop("extra")
        return {**out, **self.extra, **power_fields(self), "verdict": self.verdict, "holds": self.holds}


def _finite(check: Check) -> bool:
    return math.isfinite(check.measured) and math.isfinite(check.tolerance)


def power_fields(check: Check) -> dict:
    """``smallest_error_caught`` and how it was judged (``power_basis``), and ``sign_only`` with a ``reason``
    for a sign check or one that catches no perturbation of ``SIZES``."""
    basis = "wrong model re-run, its own tolerance" if check.powers else "prediction moved, this tolerance"
    out: dict = {"smallest_error_caught": check.smallest_error_caught, "power_basis": basis}
    if check.bound == "sign":
        return out | {"sign_only": True, "reason": "a sign check: only the sign of the prediction is tested"}
    if check.smallest_error_caught is None:
        return out | {
            "sign_only": True,
            "reason": f"no error up to {max(SIZES):.0%} caught at this size{_largest(check)}",
        }
    return out


def _largest(check: Check) -> str:
    """The numbers behind 'no error caught': the largest re-run wrong model's (' (<perturbation>: measured m
    against p, its own tolerance t)', or that it gave no measurement), or for a check without re-run wrong
    models the measurement and tolerance that reach the prediction moved by the largest size."""
    p = max(check.powers, key=lambda q: q.size or 0.0, default=None)
    if p is None or p.tolerance is None:
        return (
            f" (the measurement {check.measured:.4g} +- the tolerance {check.tolerance:.2g} reaches the prediction "
            f"{check.predicted:.4g} moved by {max(SIZES):.0%})"
        )
    if not (math.isfinite(p.measured) and math.isfinite(p.tolerance)):
        return f" ({p.perturbation}: no measurement)"
    return (
        f" ({p.perturbation}: measured {p.measured:.4g} against {check.predicted:.4g}, its own tolerance "
        f"{p.tolerance:.2g})"
    )


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
class CheckRun:
    """How a check runs its model: start ``x0`` ``(R, N, d)``, step ``h`` (coupled with h/2), ``horizon``,
    the statistic it measures and its seed (the power record draws from ``seed + 1``). ``antithetic``: the
    R paths are R antithetic pairs (batch ``(2, R)``, ``noise._sources.Antithetic``), each pair one sample."""

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

    def coupled(self, model: Model, wrong: bool = False) -> Paired:
        """The model at h/2 and h on one Brownian path (``wrong``: a wrong model on its own noise, seed + 1)."""
        source = self._source(self.seed + int(wrong))
        return coupled(model, self._start(), self.h, self.horizon, source, self.statistic)
