"""Report part 3 (BEYOND.md): the check records carry the keys of checks.json, and a quick run of the whole
experiment writes checks.json, beyond.json and the figures."""

import json

import pytest

from sdeformer.experiments.beyond import report as beyond
from sdeformer.theory.checks import Check

RECORD_KEYS = {"model", "setting", "quantity", "predicted", "measured", "standard_error", "step_bias", "holds"}


def test_check_records_and_bounds():
    c = Check(
        "partial_sde",
        {"dim": 8},
        "stationary_mean_one_minus_u",
        0.5,
        0.52,
        0.01,
        0.0,
        {"activation": "relu", "dim": 8, "bias_std": 0.1, "share": 0.9},
    )
    rec = c.record()
    assert set(rec) >= RECORD_KEYS and {"activation", "dim", "bias_std", "share"} <= set(rec) and rec["holds"]
    assert not Check("m", {}, "q", 0.5, 0.6, 0.01).holds
    assert Check("m", {}, "rate", 1.0, 3.0, 0.1, bound="at_least").holds
    assert not Check("m", {}, "rate", 1.0, 0.5, 0.1, bound="at_least").holds


@pytest.mark.slow
def test_quick_run_writes_part_three(tmp_path):
    result = beyond.run(tmp_path, quick=True)
    folder = tmp_path / "beyond"
    records = json.loads((folder / "checks.json").read_text())
    assert len(records) == len(result.checks) and all(set(r) >= RECORD_KEYS for r in records)
    partial = [r for r in records if r["quantity"] == "stationary_mean_one_minus_u"]
    assert partial and all({"activation", "dim", "bias_std", "share"} <= set(r) for r in partial)
    for name in ("checks.png", "partial_width.png", "side_by_side.png", "phase.png", "beyond.json"):
        assert (folder / name).stat().st_size > 0
    assert "theory checks hold" in beyond.closing_note(result) and len(beyond.sections(result)) == 3
