"""The report builder refuses a number measured from runs without its uncertainty unless its column says why it
needs none (io._report: Table.from_runs, exact, uncertainty); the SPDE part's tables pass it."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from sdeformer.checks._spde.chaos_independent import independent_record
from sdeformer.experiments._spde import study as spde_study
from sdeformer.io._report import Table, _table_html, unqualified


def test_a_number_from_runs_without_an_uncertainty_is_refused():
    t = Table(["setting", "measured", "s.e."], [["a", 0.5, 0.01]], "runs", from_runs=True)
    assert unqualified(t) == ["measured", "s.e."]  # an s.e. column not named as one is a number too
    t = Table(["setting", "measured"], [["a", 0.5]], "runs", from_runs=True)
    assert unqualified(t) == ["measured"]
    with pytest.raises(ValueError, match="without an uncertainty in \\['measured'\\]"):
        _table_html(t)


def test_a_declared_column_passes_and_the_reason_is_printed():
    t = Table(["beta", "measured", "s.e."], [[2.0, 0.5, 0.01]], "runs", from_runs=True,
              exact={"beta": "a setting"}, uncertainty={"measured": "s.e."})  # fmt: skip
    assert unqualified(t) == []
    assert "Without an uncertainty: beta: a setting" in _table_html(t)


def test_formatted_numbers_count_and_counts_or_intervals_do_not():
    rows = [["0.031", "0.031 +- 0.022", 64, "0.5 [0.4, 0.6]", True]]
    t = Table(["bare", "with s.e.", "runs", "with CI", "holds"], rows, from_runs=True)
    assert unqualified(t) == ["bare"]
    assert unqualified(Table(["bare"], [[0.031]])) == []  # not from runs: exact quantities (e.g. Table 1)


def _paired() -> dict:
    """Two seeds of the independent-density check's per-path results (``chaos_independent``)."""
    right = np.linspace(1e-3, 2e-3, 8)
    wrong = {s: right + abs(s) * 1e-3 + np.linspace(0, 1e-5, 8) for s in (0.1, 0.2, -0.1, -0.2)}
    return {k: {"right": right, "spectral": right - 1e-4, "wrong": wrong} for k in (1, 2)}


def _spde_report(with_se: bool = True):
    rate = {"dim": 2, "attention": "softmax", "beta": 2.0, "degree": 1, "theory": 0.5, "measured": 0.5,
            "rel_error": 1e-6}  # fmt: skip
    w2 = {"particles": "iid", "N": [100, 1000], "sup_w2": [0.04, 0.004], "sup_w2_ci": [[0.03, 0.05]] * 2,
          "initial_w2": [0.03, 0.003], "dynamics_added": [0.01, 0.001], "dynamics_added_se": [0.002, 0.0002],
          "slope": -1.0, "slope_ci": [-1.1, -0.9], "bound_slope": -0.5}  # fmt: skip
    if with_se:
        w2["initial_w2_se"] = [0.003, 0.0003]
    conv = {"dim": 2, "modes": 32, "sizes": [100, 1000], "runs": 32, "slope": -0.5, "slope_ci": [-0.55, -0.45],
            "bound_slope": -0.25}  # fmt: skip
    return SimpleNamespace(
        rates=[rate],
        dominant=[{"dim": 2, "attention": "softmax", "beta": 2.0, "theory": 3, "measured": 3, "rate": 1.2}],
        moments=[
            {
                "dim": 2,
                "attention": "off",
                "noise_scale": 0.5,
                "k": 0.15,
                "paths": 400,
                "degrees": "1-4",
                "z_max": 2.6,
                "passes": True,
            }
        ],  # fmt: skip
        chaos={"w2": [w2], "independent": independent_record(_paired(), 10000, 32, 20)},
        covariance=[
            {
                "setting": {"dim": 2, "paths": 3200},
                "measured": 1.01,
                "standard_error": 0.02,
                "step_bias": 0.02,
                "tolerance": 0.08,
                "smallest_error_caught": 0.1,
                "verdict": "holds",
                "powers": [{"size": 0.1, "measured": 1.14, "tolerance": 0.085}],
            }
        ],  # fmt: skip
        convergence=[conv],
        resolution={"first_unresolved_time": 0.2, "error_resolved": 1e-9, "error_after": 1e-3},
        large={
            "w2": {**w2, "paths": 8, "holds": True, "initial_w2_se": [0.003, 0.0003]},
            "energy": [
                {
                    "t": 0.0,
                    "N": [100, 1000],
                    "sd": [0.1, 0.03],
                    "sd_ci": [[0.08, 0.12], [0.025, 0.035]],
                    "iid_sd": [0.09, 0.028],
                    "slope": -0.52,
                    "slope_ci": [-0.6, -0.45],
                    "predicted_slope": -0.5,
                    "clouds": 16,
                    "paths": 2,
                    "holds": True,
                }
            ],
        },
    )


def test_every_table_of_the_spde_part_carries_its_uncertainties():
    section = spde_study.section(_spde_report())
    assert len(section.tables) == 10 and all(t.from_runs for t in section.tables)
    assert [unqualified(t) for t in section.tables] == [[]] * 10
    assert all(t.rows for t in section.tables[-2:])  # the large-N W_2 and the energy along the dynamics
    html = "".join(_table_html(t) for t in section.tables)
    assert "0.03 (0.003)" in html  # the initial part with its s.e.


def test_the_spde_power_columns_give_size_80_and_catch_rates_or_the_reason():
    """Each SPDE table of a check (rates, moments, covariance, W_2, the independent density) has a power column:
    size_80 with the catch rates and how they were found (K seeds where counted), and the record's own reason
    where no size is caught with P >= 0.8 (the moment check's, a W_2 record's)."""
    report = _spde_report()
    report.chaos["w2"][0] |= {"size_80": None, "smallest_error_caught": None, "reason": "intervals reach r_d"}
    column = "smallest error caught"
    tables = [t for t in spde_study.section(report).tables if column in t.columns]
    cells = {row[t.columns.index(column)] for t in tables for row in t.rows}
    assert len(tables) == 5 and len(cells) == 5
    assert any("of K = 2 seeds, false alarms 0" in c for c in cells)  # the independent density's, K = 2
    assert "size_80 10%; caught +10% 1, +20% 1, -10% 1, -20% 1 (deterministic)" in cells  # the rates' 1 % rule
    assert any(c.startswith("no size_80") and c.endswith("intervals reach r_d") for c in cells)
    assert any("catches a doubled or missing Laplacian" in c for c in cells)


def test_every_table_of_the_architectures_part_carries_its_uncertainties():
    from sdeformer.experiments._architectures.report import ArchitecturesResult, sections

    check = {"model": "graph", "quantity": "consensus rate", "setting": {"mask": "path"}, "predicted": 0.02,
             "measured": 0.02, "standard_error": 0.0, "tolerance": 2e-4,
             "power": {"perturbation": "continuum rate", "measured": 0.025, "caught": True},
             "smallest_error_caught": 0.1, "verdict": "holds", "holds": True}  # fmt: skip
    alibi = {"tokens": 64, "samples": 96, "measured_crossing": 2.78, "crossing_se": 0.29,
             "predicted_crossing": 2.59, "t_crit": 3.11}  # fmt: skip
    species = {"none": {"clusters_y": [3.5], "clusters_y_se": [0.5], "clusters_x": [3.0], "clusters_x_se": [1.0],
                        "clusters_joint": [3.5], "clusters_joint_se": [1.5], "attached": [0.9],
                        "attached_se": [0.08], "energy_xy": [16.5], "energy_xy_se": [2.6]}}  # fmt: skip
    durations = {"0.01": {"mean": 32.0, "ci": 22.0, "visits": 60, "runs": 64}}
    result = ArchitecturesResult((check,), alibi, alibi, alibi, {}, durations, species, 1.0)
    tables = [t for s in sections(result) for t in s.tables]
    assert len(tables) == 4 and all(t.from_runs for t in tables)
    assert [unqualified(t) for t in tables] == [[]] * 4
    species["none"].pop("energy_xy_se")  # a result without its s.e.: refused
    bare = [t for s in sections(result) for t in s.tables][-1]
    assert unqualified(bare) == ["cross energy"]


def test_the_sync_table_gives_every_rate_and_energy_its_uncertainty(one_thread):
    """sync_check records the jackknife s.e. of each fitted rate; the theorems' sync table shows it beside the
    rate, and E E_beta(T) with its 95% half-width."""
    from sdeformer.experiments._sync.check import sync_check
    from sdeformer.experiments._theorems import _sync_section

    result = sync_check(dim=8, bias_std=0.3, runs=20, tokens=4, steps=40, horizon=2.0, seed=1)
    assert set(result.measured_rate_se) == {"sde", "discrete"}
    assert all(0 < v < abs(result.measured_rate[k]) for k, v in result.measured_rate_se.items())
    table = _sync_section((result,), {"runs": 20, "tokens": 4, "dim": 8, "steps": 40, "horizon": 2.0}).tables[0]
    assert unqualified(table) == []
    row = dict(zip(table.columns, table.rows[0]))
    assert row["s.e. SDE"] == result.measured_rate_se["sde"] and row["95% half-width"] > 0
    assert "a one-sided bound" in row["power"] and "caught +10% 0" in row["power"]  # the record's rates and reason
    outside = dataclasses.replace(result, theorem_applies=False, not_applicable={"norm": "pre-LN"})
    table = _sync_section((outside,), {"runs": 20, "tokens": 4, "dim": 8, "steps": 40, "horizon": 2.0}).tables[0]
    assert dict(zip(table.columns, table.rows[0]))["power"] == "not applicable"  # no check, no power to claim


def test_the_rate_and_lyapunov_tables_of_the_theorems_carry_their_uncertainties():
    from sdeformer.experiments._lyapunov import LyapunovRow
    from sdeformer.experiments._theorems import _lyapunov_section, _rates_section

    rate = SimpleNamespace(kind="depth", slope=-1.02, slope_ci=(-1.1, -0.95), expected_slope=-1.0, wall_s=3.0,
                           figure="rates_depth.png")  # fmt: skip
    lyap = LyapunovRow("relu", 3, 0.0, "relu d=3", -0.1, 0.01, -0.1, 64, 100, 1.0, 1.0)
    tables = [*_rates_section((rate,)).tables, *_lyapunov_section((lyap,)).tables]  # pyright: ignore[reportArgumentType]
    assert [unqualified(t) for t in tables] == [[], []] and all(t.from_runs for t in tables)
