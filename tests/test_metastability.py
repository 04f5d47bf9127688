"""Metastability (BEYOND section 10): the plateau detector in rescaled time, the saddles it reports, the closed
form of k equal clusters at equal spacing, and the staircase of the discrete model with and without common
noise, batched."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from sdeformer import metastability as ms
from sdeformer.core._errors import ConfigError
from sdeformer.experiments._architectures import checks as ac
from sdeformer.observables import interaction_energy
from sdeformer.sweeps import parse_spec, run

BETA = 4.0


def equal_clusters(k: int, size: int) -> torch.Tensor:
    """k clusters of ``size`` coinciding tokens at angles 2 pi m / k, ``(k size, 2)``."""
    angle = torch.arange(k, dtype=torch.float64).repeat_interleave(size) * 2 * math.pi / k
    return torch.stack([angle.cos(), angle.sin()], -1)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 8])
def test_closed_form_energy_of_equal_clusters(k):
    for beta in (0.5, 4.0):
        assert ms.equal_clusters_energy(k, beta) == pytest.approx(float(interaction_energy(equal_clusters(k, 3), beta)))
    assert ms.equal_clusters_energy(2, 1.0) == pytest.approx(math.sinh(1.0) / 2)
    side = ac._side_by_side(k, 16)  # the wrong input: the clusters at spacing 2 pi / 16
    if k > 1:
        assert ms.cluster_energy([3] * k, side, BETA) < 0.9 * ms.equal_clusters_energy(k, BETA)


def synthetic(levels, switches, beta, t):
    """An energy that steps down through ``levels`` at the times ``switches`` (smooth in log t)."""
    e = np.full_like(t, levels[-1])
    for a, b, s in zip(levels, levels[1:], switches):
        e += (a - b) / 2 * (1 - np.tanh(4 * beta * (np.log(t) - np.log(s))))
    return e


def test_plateaus_found_in_rescaled_time_and_missed_in_linear_time():
    t = np.geomspace(1.0, 1e8, 400)
    levels, switches = [8.0, 6.0, 3.0, 0.0], [math.exp(0.5 * BETA), math.exp(1.5 * BETA), math.exp(3.0 * BETA)]
    found = ms.plateaus(t, synthetic(levels, switches, BETA, t), BETA)
    assert [round(p.level, 3) for p in found] == levels
    assert found[-1].open and not any(p.open for p in found[:-1])
    assert found[1].start == pytest.approx(switches[0] * 1.5, rel=0.6) and found[1].end == pytest.approx(
        switches[1] / 1.5, rel=0.6
    )
    linear = ms.plateaus(t, synthetic(levels, switches, BETA, t), BETA, scale="linear")
    assert len(linear) < len(levels)  # the wrong time scale: the early plateaus are too short to see
    with pytest.raises(ConfigError, match="times"):
        ms.plateaus(np.linspace(0, 1, 10), np.zeros(10), BETA)


def staircase_run(strength: float, seeds, horizon: float = 3000.0):
    runs = ac.staircase_runs(BETA, 8, 1.0, horizon, (strength,), seeds, width=32)
    return runs[strength]


def test_staircase_levels_are_the_saddles_of_equal_clusters():
    """8 tokens on the circle at beta = 4: the detector finds the saddles (2,2,2,2) and (4,4) of the hierarchical
    start with the closed-form levels E_4, E_2; side-by-side clusters (the wrong input) are rejected."""
    t, energy, found = staircase_run(0.0, [0])
    sizes = [p.sizes for p in found[0]]
    assert (2, 2, 2, 2) in sizes and (4, 4) in sizes
    checks = ac.level_checks([p for p in found[0] if p.clusters < 8], BETA, 8)
    assert {c.setting["clusters"] for c in checks} == {4, 2}
    for c in checks:
        assert c.holds, c.record()  # level within 0.2% of E_8, and the wrong closed form caught
    linear = ms.plateaus(t, energy[0], BETA, scale="linear")
    assert all(abs(p.level - ms.equal_clusters_energy(4, BETA)) > 0.05 for p in linear)  # linear time misses E_4


@pytest.mark.kernels
def test_staircase_with_common_noise_batched_equals_unbatched():
    t, energy, found = staircase_run(0.01, [3, 4], horizon=400.0)
    _, alone, _ = staircase_run(0.01, [4], horizon=400.0)
    np.testing.assert_allclose(energy[1], alone[0], rtol=0, atol=1e-9)
    assert all(found) and all(p.level >= 0 for ps in found for p in ps)


def test_staircase_reports_the_saddle_of_a_given_state():
    x = equal_clusters(4, 2).unsqueeze(0).expand(5, 8, 2)  # (S, N, 2): sitting at the (2,2,2,2) saddle
    t = np.geomspace(1.0, 100.0, 5)
    energy = interaction_energy(x, BETA).numpy()
    [p] = ms.staircase(t, energy, x, BETA)
    assert (p.clusters, p.sizes, p.open) == (4, (2, 2, 2, 2), True)
    assert p.level == pytest.approx(ms.equal_clusters_energy(4, BETA))


def test_plateaus_of_a_sweeps_energy_at_geometric_times(tmp_path):
    """A sweep with common noise records E_beta at geometric times; the detector reads the table's columns."""
    times = sorted({float(round(t)) for t in ms.geometric_times(2.0, 300.0, 40)})  # multiples of dt = 1
    base = {"tokens": 8, "dim": 2, "width": 16, "layers": 300, "horizon": 300.0, "beta": BETA, "dtype": "float64"}
    spec = parse_spec({"name": "stairs", "base": base, "seeds": 2, "observables": ["energy"], "times": times})
    assert run(spec, tmp_path)["done"] == 2
    df = pd.read_parquet(tmp_path / "table")
    for _, rows in df.groupby("replicate"):
        rows = rows.sort_values("t")
        found = ms.plateaus(rows["t"].to_numpy(), rows["energy"].to_numpy(), BETA)
        assert found and all(rows["energy"].min() - 1e-9 <= p.level <= rows["energy"].max() + 1e-9 for p in found)
