"""Power as a probability (checks._power): catch rates over K independent seeds, both signs, size_80 and the
smallest error caught, the computed rates where K re-runs cost too much, and the fields of checks.json. Planted
checks with known answers: each test can fail."""

import math
import random

import pytest

from sdeformer.checks._power import (
    QUICK,
    SIGNED,
    Judged,
    Plan,
    computed,
    counted,
    describe,
    size_80,
)
from sdeformer.checks._record import Check


def _check(measured: float, tolerance: float = 0.1, se: float = 0.01, bound: str = "equal") -> Check:
    return Check("m", {}, "q", 1.0, "s", measured, se, tolerance, "rule", bound=bound)


def _noisy(shift: float, se: float, seed: int, tolerance: float = 0.1) -> Check:
    """A planted wrong model: the measurement 1 + shift + se * z (z: a seeded normal), its own tolerance."""
    z = random.Random(seed).gauss(0.0, 1.0)
    return _check(1.0 + shift + se * z, tolerance, se)


def test_a_wrong_model_never_caught_has_no_size_80():
    """The planted check's wrong model equals the right one: never caught, size_80 and smallest error null,
    verdict 'not resolved', and the record says why with the rates."""
    right = _check(1.0)
    never = right.with_catch(lambda s: f"x {1 + s:g}", lambda s, k: _check(1.0), Plan(seeds=8))
    r = never.record()
    assert r["catch_rate"] == {"0.1": 0.0, "0.2": 0.0, "-0.1": 0.0, "-0.2": 0.0} and r["catch_seeds"] == 8
    assert r["size_80"] is None and r["smallest_error_caught"] is None and never.verdict == "not resolved"
    assert not r["holds"] and r["sign_only"] is False and "probability >= 0.8" in r["reason"]


def test_catch_rate_over_k_seeds_matches_a_direct_recount():
    """A wrong model off by 1.5 x size with s.e. 0.05 (tolerance 0.1): its rate per signed size is the fraction
    of the K = 12 seeds whose measurement leaves its tolerance, recounted here by hand."""
    right = _check(1.0)
    judge = lambda s, k: _noisy(1.5 * s * (1 if s > 0 else 0.5), 0.05, 100 * k + int(100 * s))
    check = right.with_catch(lambda s: f"x {1 + s:g}", judge, Plan(seeds=12))
    r = check.record()
    for s in SIGNED:
        recount = sum(abs(judge(s, k).measured - 1.0) > 0.1 for k in range(1, 13)) / 12
        assert r["catch_rate"][f"{s:g}"] == pytest.approx(recount)
    assert r["false_alarm_rate"] == 0.0  # the right model (size 0) on the same seeds
    expected = size_80({s: r["catch_rate"][f"{s:g}"] for s in SIGNED})
    assert r["size_80"] == expected and r["smallest_error_caught"] == expected
    assert r["catch_rate"]["0.2"] == 1.0 and r["catch_rate"]["-0.1"] < 0.8  # -10 %: shift 0.075, mostly missed
    assert r["size_80"] == 0.2 and check.verdict == "holds"  # -20 % (shift 0.15) caught: size_80 20 %


def test_size_80_needs_both_signs_and_every_larger_size():
    assert size_80({0.1: 0.9, 0.2: 1.0, -0.1: 0.85, -0.2: 0.9}) == 0.1
    assert size_80({0.1: 1.0, 0.2: 1.0, -0.1: 0.5, -0.2: 0.9}) == 0.2  # -10 % missed half the time
    assert size_80({0.1: 1.0, 0.2: 1.0, -0.1: 0.0, -0.2: 0.0}) is None  # one sign never caught
    assert size_80({0.1: 1.0, 0.2: 1.0, -0.1: 0.0, -0.2: 0.0}, sides=(1,)) == 0.1  # an upper bound's side only
    assert size_80({0.1: 0.9, 0.2: 0.5, -0.1: 0.9, -0.2: 0.9}) is None  # not caught at a larger size


def test_counted_rates_are_fractions_of_the_seeds():
    catch = counted(lambda s, k: k <= 3 and s > 0, range(1, 5))
    assert catch.rates[0.1] == 0.75 and catch.rates[-0.2] == 0.0 and catch.seeds == 4 and catch.false_alarm == 0.0
    assert catch.size_80 is None  # 0.75 < 0.8


def test_computed_rates_follow_the_normal_formula():
    """Right model at 1.02 (prediction 1, tolerance 0.1), the +-20 % models at 1.22 and 0.82 with s.e. 0.03: the
    mean at +s is 1.02 + s, caught with P = Phi((1.02 + s - 1.1) / 0.03) (one side); size_80 solves it."""
    right = Judged(1.02, 0.03, 0.9, 1.1)
    wrongs = {0.2: Judged(1.22, 0.03, 0.9, 1.1), -0.2: Judged(0.82, 0.03, 0.9, 1.1)}
    catch = computed(right, wrongs)
    phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
    assert catch.rates[0.1] == pytest.approx(phi((1.12 - 1.1) / 0.03) + phi((0.9 - 1.12) / 0.03), abs=1e-9)
    plus = (0.1 + 0.8416 * 0.03 - 0.02) / 1.0  # the formula, the bias helping on this side
    minus = (0.1 + 0.8416 * 0.03 + 0.02) / 1.0
    assert catch.computed_size_80 == pytest.approx(max(plus, minus), abs=1.5e-3) and catch.seeds is None
    assert catch.smallest_error_caught == 0.2 and describe(catch.fields()).startswith("size_80 15%")


def test_computed_plan_confirms_with_one_seeded_rerun():
    right = _check(1.0)
    check = right.with_catch(lambda s: "x", lambda s, k: _noisy(s, 0.01, k), Plan(computed=True))
    r = check.record()
    assert r["catch_basis"].startswith("computed") and r["catch_seeds"] is None
    assert r["size_80"] == pytest.approx(0.1 + 0.8416 * 0.01, abs=0.02) and r["smallest_error_caught"] == 0.2
    assert r["confirmed"] is True and r["confirm_seed"] == 2 and r["size_80_basis"] == "computed"
    assert r["confirm_runs"] == {"0": False, "0.2": True, "-0.2": True}


def test_a_computed_size_80_the_rerun_refutes_is_withdrawn():
    """Wrong variants of the confirming re-run (seed 2): the wrong model there not caught (it sits on the right
    one), or the right model itself failing there. Either way the record says ``confirmed`` false and claims no
    size_80, and its verdict is 'not resolved'."""
    right = _check(1.0)
    lost = right.with_catch(lambda s: "x", lambda s, k: _noisy(s if k == 1 else 0.0, 0.01, k), Plan(computed=True))
    alarm = right.with_catch(
        lambda s: "x", lambda s, k: _noisy(s if s else 0.5 * (k - 1), 0.01, k), Plan(computed=True)
    )
    for check in (lost, alarm):
        r = check.record()
        assert r["confirmed"] is False and r["size_80"] is None and r["smallest_error_caught"] is None
        assert (
            check.verdict == "not resolved"
            and "not confirmed on seed 2" in describe(r)
            and "not confirmed" in r["reason"]
        )
    assert "confirmed on seed 2: right model passed" in describe(
        right.with_catch(lambda s: "x", lambda s, k: _noisy(s, 0.01, k), Plan(computed=True)).record()
    )
    assert alarm.record()["confirm_runs"]["0"] is True


def test_an_upper_bound_is_caught_on_one_side_and_tests_a_magnitude():
    """An at_most check: a wrong model that raises the quantity (the side it can catch) is caught; the other
    side is recorded at rate 0 and does not stop size_80."""
    right = _check(0.9, bound="at_most")
    check = right.with_catch(lambda s: "x", lambda s, k: _check(1.0 + s, bound="at_most"), QUICK, sides=(1,))
    r = check.record()
    assert r["catch_rate"]["0.2"] == 1.0 and r["catch_rate"]["-0.2"] == 0.0 and r["size_80"] == 0.2
    assert r["catch_sides"] == [1] and r["sign_only"] is False


def test_a_sign_check_that_tests_the_magnitude_is_not_sign_only():
    """The contradiction of the old records (sign_only beside a caught 10 %): a sign bound with a tolerance
    tests the magnitude too, and says so."""
    right = _check(1.0, bound="sign")
    check = right.with_catch(lambda s: "x", lambda s, k: _check(1.0 + 2 * s, bound="sign"), QUICK)
    r = check.record()
    assert r["sign_only"] is False and r["size_80"] == 0.1 and r["verdict"] == "holds"


def test_a_deterministic_check_moves_its_prediction_both_ways():
    """No wrong runs, no s.e.: the prediction moved by -+10, -+20 % is rejected or not (rate 0 or 1)."""
    r = Check("m", {}, "q", 1.0, "s", 1.0, 0.0, 0.15, "rule").record()
    assert r["catch_rate"] == {"0.1": 0.0, "0.2": 1.0, "-0.1": 0.0, "-0.2": 1.0} and r["catch_seeds"] is None
    assert r["size_80"] == 0.2 and r["catch_basis"].startswith("deterministic")
