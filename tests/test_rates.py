"""Convergence rates of THEORY section 5 at a small scale (coupled noise, float64, fixed seeds)."""

import pytest
import torch

import sdeformer.dynamics._coupling as coupling
from sdeformer import StochasticTransformer, uniform_sphere
from sdeformer.core._errors import ConfigError
from sdeformer.experiments._rates import measure as rates

THEORY_SLOPE = {"depth": -1.0, "width": -1.0}  # THEORY section 5: error ~ 1/L (grid times), ~ 1/m (Lipschitz act)
SLOPE_TOL = 0.25  # |measured log-log slope - theory| for depth and width (observed -1.14 and -1.09)
TOKEN_TOL = 0.15  # margin on the token bound's slope, both ways (observed: coupled -0.89, decoupled -0.24)
KEYS = {"kind", "x", "error", "slope", "slope_ci", "expected_slope"}


@pytest.mark.parametrize("kind", ["depth", "width"])
def test_depth_and_width_slopes_match_theory(kind):
    result = rates.measure(kind, quick=True)
    assert set(result.to_json()) >= KEYS
    assert result.expected_slope == THEORY_SLOPE[kind]
    assert abs(result.slope - THEORY_SLOPE[kind]) < SLOPE_TOL, result.summary()


def test_token_error_decays_at_least_at_the_bound_rate_only_when_coupled():
    """Coupled (the reference cloud under the same field path): the error falls at least as fast as
    r_d(N) = N^{-1/2} (d = 3). Decoupled (the reference driven by independent normals): the clouds follow
    different flows, so the error stays O(1) and no longer decays at that rate."""
    bound = -0.5  # d = 3: r_d(N) = N^{-1/2}
    coupled = rates.measure("tokens", quick=True, x=[8, 64])
    decoupled = rates.measure("tokens", quick=True, x=[8, 64], coupled=False)
    assert coupled.expected_slope == bound
    assert coupled.slope <= bound + TOKEN_TOL, coupled.summary()
    assert decoupled.slope > bound + TOKEN_TOL, decoupled.summary()
    assert decoupled.error[-1] > 4 * coupled.error[-1]


def test_rates_bad_input():
    with pytest.raises(ConfigError):
        rates.settings_for("breadth")
    with pytest.raises(ConfigError):
        rates.settings_for("depth", runs=1)
    with pytest.raises(ConfigError):
        rates.measure("depth", quick=True, x=[3], fine=256)
    with pytest.raises(ConfigError):
        rates.measure("tokens", quick=True, x=[8, 512])


@pytest.mark.usefixtures("one_thread")
def test_width_coupling_replicates_use_disjoint_seeds(monkeypatch):
    """Replicate seeds s and s + 1 must not share a random stream (seed + 1 reused the next replicate's path)."""
    used: dict[int, set] = {}
    real_path, real_run = coupling.BrownianPath, StochasticTransformer.run

    def path(shape, steps, seed, *args):
        used[current].add(seed)
        return real_path(shape, steps, seed, *args)

    def run(self, x0, seed=None, *args, **kwargs):
        if seed is not None:
            used[current].add(seed)
        return real_run(self, x0, *((seed,) if seed is not None else ()), *args, **kwargs)

    monkeypatch.setattr(coupling, "BrownianPath", path)
    monkeypatch.setattr(StochasticTransformer, "run", run)
    x0 = uniform_sphere(3, 3, batch=(2,), seed=0, dtype=torch.float64)
    for current in (0, 1):
        used[current] = set()
        coupling.width_coupled(x0, [8], 2, 1.0, "relu", 0.1, 0.1, None, seed=current)
    assert used[0] and used[1] and not used[0] & used[1]
