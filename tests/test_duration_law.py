"""The metastability part's duration law (BEYOND section 10): plateau durations averaged over the runs that
visit the saddle (a run that skips it is counted apart, not as 0), and the fitted exponent of the mean duration
against the noise strength with a bootstrap interval that contains the law the runs were drawn from."""

import numpy as np
import pytest

from sdeformer.experiments._architectures.checks import duration_exponent, plateau_durations
from sdeformer.metastability import Plateau

SADDLE = (4, 4)


def _run(duration: float | None) -> list[Plateau]:
    """One run's plateaus: a visit of ``duration`` at the saddle (None: it skips it) and a final open one."""
    out = [] if duration is None else [Plateau(10.0, 10.0 + duration, 0.0, 1.0, 20.0, False, 2, SADDLE)]
    return [*out, Plateau(1e4, 2e4, 2.0, 3.0, 0.0, True, 1, (8,))]


def _runs(law: float, runs: int = 64, seed: int = 0) -> dict:
    """Durations ~ 100 c^law times a lognormal factor, a quarter of the runs skipping the saddle."""
    rng = np.random.default_rng(seed)
    out = {}
    for c in (0.001, 0.003, 0.01, 0.03):
        d = 100 * c**law * rng.lognormal(0.0, 0.3, runs)
        out[c] = (None, None, [_run(None if k % 4 == 0 else float(x)) for k, x in enumerate(d)])
    return out


def test_skipped_saddles_are_not_zero_durations():
    runs = {0.01: (None, None, [_run(100.0), _run(None), _run(300.0)])}
    (d,) = plateau_durations(runs, SADDLE).values()
    assert d["mean"] == pytest.approx(200.0) and d["visits"] == 2 and d["runs"] == 3


@pytest.mark.parametrize("law", [-0.7, -0.3])
def test_the_fitted_exponent_brackets_the_law(law):
    e = duration_exponent(_runs(law), SADDLE)
    assert e["ci"][0] < law < e["ci"][1] and e["ci"][1] - e["ci"][0] < 0.2, e
    other = -1.0 if law == -0.7 else -0.7  # the interval excludes a law 0.3 - 0.4 away
    assert not e["ci"][0] < other < e["ci"][1]
