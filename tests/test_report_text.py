"""The report's words (io._report): a figure's ``alt`` text describes it (its caption's first sentence, or the
text given), never its file name; a table cell never prints a zero as -0."""

from __future__ import annotations

import re

import pytest

from sdeformer.io._report import Figure, Section, Table, render
from sdeformer.plots import plt


@pytest.fixture
def png(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    fig.savefig(tmp_path / "fig_energy_vs_t.png")
    plt.close(fig)
    return tmp_path / "fig_energy_vs_t.png"


def _alts(page: str) -> list[str]:
    return re.findall(r'<img alt="([^"]*)"', page)


def test_alt_texts_describe_the_figure_not_its_file(png, tmp_path):
    figures = [
        Figure(png, "Energy against time for three seeds. Dashed: the theory."),
        Figure(png, "", alt="Energy falls to zero in all three runs"),
        Figure(png, ""),
    ]
    alts = _alts(render("r", [Section("s", figures=figures)], tmp_path))
    assert alts == [
        "Figure: Energy against time for three seeds",
        "Energy falls to zero in all three runs",
        "Figure: fig energy vs t",
    ]
    assert not any(a.endswith(".png") for a in alts)


def test_a_quote_in_a_caption_cannot_break_the_alt_attribute(png, tmp_path):
    page = render("r", [Section("s", figures=[Figure(png, 'The "common" noise <b>.')])], tmp_path)
    assert _alts(page) == ["Figure: The &quot;common&quot; noise &lt;b&gt;"]


@pytest.mark.parametrize(
    "value,cell",
    [(-0.0, "0"), (0.0, "0"), ("-0", "0"), ("-0.000", "0.000"), ("-0e+00", "0e+00"), (-0.5, "-0.5"),
     ("-0.001", "-0.001"), (-1e-300, "-1e-300"), ("-", "-")],
)  # fmt: skip
def test_a_zero_never_prints_as_minus_zero(value, cell, tmp_path):
    page = render("r", [Section("s", tables=[Table(["x"], [[value]])])], tmp_path)
    assert f"<td>{cell}</td>" in page
