"""The record of a theory check of BEYOND sections 1-4, with its power as a probability.

A ``Check`` carries the prediction and its source, the measurement with its standard error, the tolerance
and how it was set, and its power record (``checks._power``): the same check (same prediction) run on wrong
models, the quantity the check is about perturbed by the signed relative sizes ``_power.SIGNED`` (+-10 %,
+-20 %), each wrong model re-run as the model under test with its **own** tolerance (its own standard errors
and step bias: a wrong implementation brings its own), on K independent seeds (``with_catch``): the catch rate
per size, ``size_80`` (the smallest size caught with probability >= 0.8) and the right model's false alarm
rate. A check without re-run wrong models (a deterministic one) is judged on the prediction moved by each size.
The verdict is "fails" when the measurement is outside the tolerance, "not resolved" when no size tried is caught
with probability >= 0.8 (or, for a sign, when the tolerance reaches past zero), and "holds" otherwise: "holds"
means the right model passed and an error of at most 20 %, either sign, is caught with probability >= 0.8.
Every bound here tests a magnitude (``sign_only`` is false; a "sign" bound adds the sign to it).

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
from ..theory._coupled import Paired, coupled
from ..theory._montecarlo import Estimate, Model, Normals, Statistic
from ._power import QUICK, SIGNED, SIZES, Catch, Judged, Plan, computed, confirm, counted, deterministic

SIGMAS = 3.0  # standard errors in a tolerance
COUPLED_RULE = (
    f"{SIGMAS:g} s.e. (measurement and step bias combined) + |m_h - m_(h/2)| (coupled: one Brownian path on h, h/2)"
)
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
    catch: Catch | None = None

    def accepts(self, value: float) -> bool:
        """Whether a measurement ``value`` passes this check (BOUNDS)."""
        if self.bound == "at_most":
            return value <= self.predicted + self.tolerance
        close = abs(value - self.predicted) <= self.tolerance
        return close and (self.bound != "sign" or math.copysign(1.0, value) == math.copysign(1.0, self.predicted))

    def interval(self) -> tuple[float, float]:
        """The measurements this check accepts, [lo, hi] (BOUNDS)."""
        if self.bound == "at_most":
            return -math.inf, self.predicted + self.tolerance
        lo, hi = self.predicted - self.tolerance, self.predicted + self.tolerance
        if self.bound == "sign":
            lo, hi = (max(lo, 0.0), hi) if self.predicted > 0 else (lo, min(hi, 0.0))
        return lo, hi

    def judged(self) -> Judged:
        """This run judged by its own tolerance (``_power.Judged``); no tolerance: never caught."""
        lo, hi = self.interval() if math.isfinite(self.tolerance) else (-math.inf, math.inf)
        return Judged(self.measured, self.standard_error, lo, hi)

    @property
    def sides(self) -> tuple[int, ...]:
        """The signs of a perturbation that can fail the check: an upper bound only a lower prediction."""
        if self.bound != "at_most":
            return (1, -1)
        return (1,) if self.predicted < 0 else (-1,)

    @property
    def power_record(self) -> Catch:
        """``catch``; a check without re-run wrong models: the prediction moved by each signed size, caught when
        the measurement (N(m, s.e.^2)) falls outside this tolerance about it."""
        if self.catch is not None:
            return self.catch
        moved = {s: replace(self, predicted=self.predicted * (1 + s)).judged() for s in SIGNED}
        rates = {s: j.at(self.measured) for s, j in moved.items()}
        if self.standard_error > 0:
            return Catch(rates, None, "prediction moved, this tolerance: P from the measurement's s.e.", self.sides)
        return deterministic(lambda s: rates[s] > 0.5, "prediction moved, this tolerance", self.sides)

    @property
    def smallest_error_caught(self) -> float | None:
        """``size_80`` of the power record rounded up to the sizes tried (``_power.Catch``)."""
        return self.power_record.smallest_error_caught

    @property
    def resolved(self) -> bool:
        """A power record (re-run wrong models, or a stated wrong input that is caught) says an error of at most
        20 % is caught with probability >= 0.8 and, for a sign check, its tolerance stays short of zero."""
        recorded = self.catch is not None or (self.power is not None and self.power.caught)
        caught = recorded and self.power_record.size_80 is not None
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

    def with_catch(
        self,
        label: Callable[[float], str],
        judge: Callable[[float, int], Check],
        plan: Plan = QUICK,
        sides: tuple[int, ...] | None = None,
    ) -> Check:
        """This check with its power record: ``judge(size, k)`` is the check (same prediction) run on the model
        whose quantity is off by the signed relative ``size`` (0: the right model) on its k-th independent
        seed (k >= 1), judged with its own tolerance; caught when it fails (both finite: a wrong model with no
        measurement is not caught). ``plan``: counted over ``plan.seeds`` seeds, or computed from the +-20 %
        models with one confirming re-run (``_power``). ``powers``: the wrong models of seed 1 (their
        measurements and own tolerances); ``sides``: the signs that can fail it (default ``self.sides``)."""
        runs: dict[tuple[float, int], Check] = {}

        def run(size: float, k: int) -> Check:
            if (size, k) not in runs:
                runs[size, k] = judge(size, k)
            return runs[size, k]

        def caught(size: float, k: int) -> bool:
            return run(size, k).judged().caught()

        sides = sides or self.sides
        if plan.computed:
            top = max(SIZES)
            catch = computed(self.judged(), {e * top: run(e * top, 1).judged() for e in (1, -1)}, sides)
            catch = confirm(catch, lambda s: caught(s, 2), 2)
        else:
            catch = counted(caught, range(1, plan.seeds + 1), sides=sides)
        shown = sorted({s for s, k in runs if s != 0.0 and k == 1}, key=lambda s: (s < 0, abs(s)))
        powers = tuple(
            Power(label(s), (w := run(s, 1)).measured, w.standard_error, caught(s, 1), s, w.tolerance) for s in shown
        )
        first = [p for p in powers if p.caught]
        return replace(self, powers=powers, power=first[0] if first else powers[-1], catch=catch)

    def record(self) -> dict:
        """The JSON record of ``checks.json``: the fields, ``extra`` flattened in, ``power`` as a dict,
        ``smallest_error_caught`` (or ``sign_only`` with its ``reason``), ``verdict`` and ``holds``."""
        out = asdict(self)
        out.pop("extra")
        out.pop("catch")
        return {**out, **self.extra, **power_fields(self), "verdict": self.verdict, "holds": self.holds}


def power_fields(check: Check) -> dict:
    """The power record's fields (``_power.Catch.fields``: catch_rate, catch_seeds, size_80,
    smallest_error_caught, false_alarm_rate), ``power_basis``, ``sign_only`` (false: every bound tests a
    magnitude) and, where no size tried is caught with probability >= 0.8, the ``reason`` with its numbers."""
    catch = check.power_record
    out: dict = catch.fields() | {"power_basis": catch.basis, "sign_only": False}
    if catch.confirmed is False:
        runs = {k: v for k, v in out["confirm_runs"].items() if k != "0"}
        right = "failed" if out["confirm_runs"]["0"] else "passed"
        out["reason"] = (
            f"the computed size_80 {catch.computed_size_80:.2g} was not confirmed by the re-run on seed "
            f"{out['confirm_seed']} (caught: {runs}; the right model {right})"
        )
    elif catch.size_80 is None:
        rates = ", ".join(f"{k}: {v:.2g}" for k, v in out["catch_rate"].items())
        out["reason"] = f"no error up to {max(SIZES):.0%} caught with probability >= 0.8 ({rates}){_largest(check)}"
    elif check.bound == "sign" and check.tolerance >= abs(check.predicted):
        out["reason"] = "the tolerance reaches past zero: the sign is not resolved"
    return out


def _largest(check: Check) -> str:
    """The numbers behind 'no error caught': the largest re-run wrong model's (' (<perturbation>: measured m
    against p, its own tolerance t)', or that it gave no measurement), or for a check without re-run wrong
    models the measurement and tolerance that reach the prediction moved by the largest size."""
    p = max(check.powers, key=lambda q: abs(q.size or 0.0), default=None)
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
    the statistic it measures and its seed (the power record's k-th seed is ``seed + k``). ``antithetic``: the
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

    def coupled(self, model: Model, k: int = 0) -> Paired:
        """The model at h/2 and h on one Brownian path, on seed + ``k`` (k >= 1: a power record's k-th seed)."""
        source = self._source(self.seed + k)
        return coupled(model, self._start(), self.h, self.horizon, source, self.statistic)
