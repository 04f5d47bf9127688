"""Part two of the report ("The theorems, checked"): sections, figures and JSON files (quick scale)."""

import json

import pytest

from sdeformer.experiments import _theorems as theorems
from sdeformer.io._report import Section, write_report
from sdeformer.plots._checks import theorem_figures


@pytest.mark.slow
def test_theorem_sections_quick(tmp_path):
    ticks = []
    results = theorems.run(tmp_path, quick=True, progress=ticks.append)
    theorem_figures(results, tmp_path)
    sections = theorems.sections(results)
    assert len(ticks) == theorems.UNITS
    assert all(isinstance(s, Section) for s in sections) and len(sections) == 4
    for s in sections:
        for f in s.figures:
            assert not f.path.is_absolute() and (tmp_path / f.path).exists()
    depth = json.loads((tmp_path / "rates_depth.json").read_text())
    assert {"kind", "x", "error", "slope", "slope_ci", "expected_slope"} <= set(depth)
    assert write_report(tmp_path, "theorems", sections).exists()


@pytest.mark.slow  # 8 figures: ~25 s on a loaded machine
def test_sync_section_reports_verdicts_not_vacuous_passes(tmp_path):
    from sdeformer.experiments._sync.check import VERDICTS
    from sdeformer.experiments._theorems import SYNC_FIGURES, SYNC_QUICK, SYNC_SETTINGS, _run_sync, _sync_section
    from sdeformer.plots._checks import energy_figure

    results = _run_sync(tmp_path, True, None)
    for name, part in SYNC_FIGURES.items():
        energy_figure(results[part], tmp_path / name)
    section = _sync_section(results, SYNC_QUICK)
    table = section.tables[0]
    verdict, eps_from = table.columns.index("verdict"), table.columns.index("eps from")
    for (act, sigma, _), row in zip(SYNC_SETTINGS, table.rows):
        assert row[verdict] in VERDICTS and row[eps_from] == "certified"
        if sigma == 0.0:  # relu: lambda_bar = 1/d > 0; tanh: odd field
            assert row[verdict] == "not applicable"
        saved = json.loads((tmp_path / f"sync_{act}_{sigma:g}_{row[0].split('s=')[1]}" / "sync.json").read_text())
        assert saved["verdict"] == row[verdict]
    for f in section.figures:
        assert (tmp_path / f.path).exists()
