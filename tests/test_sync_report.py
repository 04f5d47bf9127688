"""Part two of the report ("The theorems, checked"): sections, figures and JSON files (quick scale)."""

import json

import pytest

from sdeformer.experiments.theorems import UNITS, theorem_sections
from sdeformer.report import Section, write_report


@pytest.mark.slow
def test_theorem_sections_quick(tmp_path):
    ticks = []
    sections = theorem_sections(tmp_path, quick=True, progress=ticks.append)
    assert len(ticks) == UNITS
    assert all(isinstance(s, Section) for s in sections) and len(sections) == 4
    for s in sections:
        for f in s.figures:
            assert not f.path.is_absolute() and (tmp_path / f.path).exists()
    depth = json.loads((tmp_path / "rates_depth.json").read_text())
    assert {"kind", "x", "error", "slope", "slope_ci", "expected_slope"} <= set(depth)
    assert write_report(tmp_path, "theorems", sections).exists()
