"""Power as a probability: how often a check catches a wrong model, over independent seeds, both signs.

A power record perturbs the quantity a check is about by the signed relative sizes ``SIGNED`` (+-10 %, +-20 %)
and asks, per size, the probability that the check fails on the wrong model (its **own** run, its own
tolerance). ``Catch`` holds those probabilities and how they were obtained (``basis``):

- *counted*: each wrong model re-run on ``K`` independent seeds (``counted``); the rate is the fraction of the
  K seeds caught, ``catch_seeds = K``. The right model on the same K seeds gives the false alarm rate.
- *computed*: where K re-runs cost too much, from the measured sensitivity and standard errors of the two
  wrong models at +-20 % (``computed``): per sign e the wrong model's mean moves linearly,
  m(s) = m_0 + g_e s, g_e = (m_(e 0.2) - m_0) / 0.2, and the probability that a measurement
  N(m(s), se_e^2) leaves the acceptance interval of its own tolerance tol_e is the catch rate; size_80 is the
  smallest s where it reaches 0.8 (one side: s = (tol_e + 0.84 se_e -+ (m_0 - p)) / |g_e|). One re-run on a
  fresh seed confirms it (``confirm``): the wrong models at +- the size it names (rounded up to the sizes tried)
  must be caught and the right model must pass; a record whose confirmation fails claims no size_80
  (``confirmed`` false, the re-run's results in ``confirm_runs``).
- *deterministic*: a check with no randomness (or the prediction moved by s against one measurement): the
  rate is 0 or 1 (``catch_seeds`` None).

``size_80`` is the smallest magnitude caught with probability >= ``PROBABILITY`` on every side the check can
catch (an upper bound catches only one) at it and at every larger size tried; None when no size tried is.
``smallest_error_caught`` is size_80 rounded up to the sizes tried.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

SIZES = (0.1, 0.2)  # magnitudes of the perturbations
SIGNED = (0.1, 0.2, -0.1, -0.2)  # the power record's signed relative sizes
PROBABILITY = 0.8  # "catches s": caught with at least this probability
Z_80 = NormalDist().inv_cdf(PROBABILITY)  # 0.8416
SEEDS = 8  # K at report size
COMPUTED_RULE = (
    "computed: per sign e, m(s) = m_0 + g_e s from the wrong model at e x 20 %; P(caught) = P(N(m(s), se_e^2) "
    "outside its own tolerance); size_80 where it reaches 0.8; one seeded re-run at that size confirms"
)


def key(size: float) -> str:
    """The JSON key of a signed size: '0.1', '-0.2'."""
    return f"{size:g}"


@dataclass(frozen=True)
class Plan:
    """How a check measures its power: ``seeds`` (K) independent seeds per wrong model and for the right
    model's false alarms (``counted``), or ``computed`` from the +-20 % wrong models and one confirming re-run."""

    seeds: int = SEEDS
    computed: bool = False


REPORT = Plan()  # report size: K = 8 seeds
QUICK = Plan(seeds=2)  # the default tests' size
COMPUTED = Plan(computed=True)  # where K re-runs cost too much


@dataclass(frozen=True)
class Catch:
    """The power record of one check: signed size -> probability caught, ``seeds`` (K; None when computed or
    deterministic), ``basis``, ``sides`` (the signs the check can catch), the right model's ``false_alarm``
    rate over the same seeds, and for a computed record its continuous ``size_80`` and the confirming re-run
    (``confirm``: its ``seed``, the right model caught or not under ``"0"``, each wrong model's under its signed
    size)."""

    rates: Mapping[float, float]
    seeds: int | None
    basis: str
    sides: tuple[int, ...] = (1, -1)
    false_alarm: float | None = None
    computed_size_80: float | None = None
    confirm: dict | None = None

    @property
    def confirmed(self) -> bool | None:
        """The confirming re-run: every wrong model caught and the right model not (None: not run)."""
        if self.confirm is None:
            return None
        wrong = [v for k, v in self.confirm.items() if isinstance(v, bool) and k != "0"]
        return not self.confirm["0"] and all(wrong)

    @property
    def size_80(self) -> float | None:
        """The smallest magnitude caught with probability >= 0.8 (module docstring); a computed record: its
        solved size when within the sizes tried and not refuted by its confirming re-run."""
        if self.confirmed is False:
            return None
        if self.computed_size_80 is not None:
            return self.computed_size_80 if self.computed_size_80 <= max(SIZES) + 1e-12 else None
        if self.basis.startswith("computed"):
            return None
        return size_80(self.rates, self.sides)

    @property
    def smallest_error_caught(self) -> float | None:
        """``size_80`` rounded up to the sizes tried."""
        s = self.size_80
        return None if s is None else min(m for m in SIZES if m >= s - 1e-12)

    def fields(self) -> dict:
        """The fields of a ``checks.json`` record (names other tools rely on)."""
        return {
            "catch_rate": {key(s): r for s, r in sorted(self.rates.items(), key=lambda kv: (kv[0] < 0, abs(kv[0])))},
            "catch_seeds": self.seeds,
            "size_80": self.size_80,
            "smallest_error_caught": self.smallest_error_caught,
            "false_alarm_rate": self.false_alarm,
            "catch_basis": self.basis,
            "catch_sides": list(self.sides),
            **(self._confirmation() if self.basis.startswith("computed") else {}),
        }

    def _confirmation(self) -> dict:
        """A computed record's basis and its confirming re-run (module docstring)."""
        seed = None if self.confirm is None else self.confirm["seed"]
        runs = None if self.confirm is None else {k: v for k, v in self.confirm.items() if k != "seed"}
        return {"size_80_basis": "computed", "confirm_seed": seed, "confirmed": self.confirmed, "confirm_runs": runs}


def size_80(rates: Mapping[float, float], sides: Sequence[int] = (1, -1)) -> float | None:
    """The smallest magnitude s of ``rates`` (signed size -> rate) such that every side's rate is >= 0.8 at s
    and at every larger magnitude tried; None if there is none."""
    magnitudes = sorted({abs(s) for s in rates})
    ok = [all(rates.get(e * m, 0.0) >= PROBABILITY for e in sides) for m in magnitudes]
    found = None
    for m, good in zip(reversed(magnitudes), reversed(ok)):
        if not good:
            break
        found = m
    return found


def counted(
    caught: Callable[[float, int], bool],
    seeds: Iterable[int],
    *,
    sizes: Sequence[float] = SIGNED,
    sides: tuple[int, ...] = (1, -1),
    false_alarms: bool = True,
) -> Catch:
    """The catch rates of ``caught(size, seed)`` (whether the check fails on the wrong model of that signed
    size run on that seed; size 0: the right model) over ``seeds``; the right model's false alarm rate on the
    same seeds."""
    seeds = list(seeds)
    rates = {s: sum(bool(caught(s, k)) for k in seeds) / len(seeds) for s in sizes}
    alarm = sum(bool(caught(0.0, k)) for k in seeds) / len(seeds) if false_alarms else None
    return Catch(rates, len(seeds), f"counted over {len(seeds)} independent seeds", sides, alarm)


def deterministic(caught: Callable[[float], bool], basis: str, sides: tuple[int, ...] = (1, -1)) -> Catch:
    """A check without randomness: ``caught(size)`` for each signed size, rate 0 or 1."""
    return Catch({s: float(bool(caught(s))) for s in SIGNED}, None, f"deterministic: {basis}", sides)


def probability_outside(mean: float, se: float, lo: float, hi: float) -> float:
    """P(N(mean, se^2) outside [lo, hi]); with se = 0 the indicator (nan mean: 0, never caught)."""
    if not math.isfinite(mean):
        return 0.0
    if se <= 0 or not math.isfinite(se):
        return float(not lo <= mean <= hi)
    normal = NormalDist(mean, se)
    return 1.0 - (normal.cdf(hi) if math.isfinite(hi) else 1.0) + (normal.cdf(lo) if math.isfinite(lo) else 0.0)


@dataclass(frozen=True)
class Judged:
    """One run judged by a check: its measurement (+ s.e.) and its acceptance interval [lo, hi] (its own
    tolerance about the check's prediction)."""

    measured: float
    se: float
    lo: float
    hi: float

    def caught(self) -> bool:
        return math.isfinite(self.measured) and not self.lo <= self.measured <= self.hi

    def at(self, mean: float) -> float:
        """P(caught) of a measurement of mean ``mean`` with this s.e. and interval."""
        return probability_outside(mean, self.se, self.lo, self.hi)


def computed(right: Judged, wrongs: Mapping[float, Judged], sides: tuple[int, ...] = (1, -1)) -> Catch:
    """Catch rates at ``SIGNED`` and size_80 from the right model's mean and the wrong models at +-20 %
    (``wrongs``: signed size -> its run), by the linear sensitivity of module docstring."""
    top = max(SIZES)
    rates, solved = {}, []
    for e in (1, -1):
        w = wrongs[e * top]
        if not math.isfinite(w.measured):
            rates |= {e * m: 0.0 for m in SIZES}
            solved.append(math.inf)
            continue
        slope = (w.measured - right.measured) / top

        def p(s: float, w=w, slope=slope) -> float:
            return w.at(right.measured + slope * s)

        rates |= {e * m: p(m) for m in SIZES}
        grid = [i / 1000 for i in range(1, 1001)]  # up to 100 %
        solved.append(next((s for s in grid if p(s) >= PROBABILITY), math.inf))
    worst = max(s for e, s in zip((1, -1), solved) if e in sides)
    return Catch(rates, None, COMPUTED_RULE, sides, None, worst)


def confirm(catch: Catch, caught: Callable[[float], bool], seed: int) -> Catch:
    """``catch`` with its confirming re-run on ``seed`` (``caught(signed size)``; size 0: the right model): the
    wrong models at +- its smallest error caught, on each side it catches, and the right model. Nothing to
    confirm (no size_80 computed): ``catch`` as it is."""
    size = catch.smallest_error_caught
    if size is None:
        return catch
    said = {"seed": seed, "0": bool(caught(0.0))} | {key(e * size): bool(caught(e * size)) for e in catch.sides}
    return replace(catch, confirm=said)


def describe(record: Mapping) -> str:
    """A record's power in words: 'size_80 10 %; caught +10 % 0.88, -10 % 1, +20 % 1, -20 % 1 of K = 8 seeds,
    false alarms 0' (else the basis: '(computed; confirmed on seed 2)', '(deterministic)', '(prediction moved,
    this tolerance)'; a computed size_80 its confirming re-run refuted: 'not confirmed on seed 2: ...')."""
    rates = record.get("catch_rate") or {}
    said = ", ".join(f"{float(k):+.0%} {v:.2g}" for k, v in rates.items())
    k = record.get("catch_seeds")
    basis = str(record.get("catch_basis", ""))
    where = f" of K = {k} seeds" if k else f" ({basis.split(':')[0]}{_confirmation(record)})"
    alarm = record.get("false_alarm_rate")
    alarms = f", false alarms {alarm:.2g}" if alarm is not None else ""
    s80 = record.get("size_80")
    head = f"size_80 {s80:.0%}" if s80 is not None else "no size_80 (no error up to 20 % caught with P >= 0.8)"
    if record.get("confirmed") is False:
        head = "no size_80 (the computed one not confirmed)"
    return f"{head}; caught {said}{where}{alarms}" if rates else head


def _confirmation(record: Mapping) -> str:
    """'; confirmed on seed 2: right model passed, +20 % caught, -20 % caught' / '; not confirmed on seed 2:
    ...' / '' (nothing computed to confirm)."""
    if record.get("confirmed") is None:
        return ""
    runs = record.get("confirm_runs") or {}
    seen = [("right model failed" if v else "right model passed") if k == "0" else f"{float(k):+.0%} "
            f"{'caught' if v else 'missed'}" for k, v in runs.items() if isinstance(v, bool)]  # fmt: skip
    word = "confirmed" if record["confirmed"] else "not confirmed"
    return f"; {word} on seed {record['confirm_seed']}: {', '.join(seen)}"
