"""``sweep plot``'s words (plots._sweep): the title names the sweep, the time shown and the ``--where`` filter;
legends and ticks print rounded values (beta = 1.67, -0 as 0) that still tell the values apart; the axis of
the observable names it once, with what was averaged ("mean_radius: mean ± s.e. over runs")."""

from __future__ import annotations

import pytest

from sdeformer import plots
from sdeformer.plots._sweep import plot, value_labels
from sdeformer.sweeps import LocalExecutor, parse_spec, read, run

SPEC = {
    "name": "labels",
    "base": {"tokens": 4, "dim": 3, "width": 8, "layers": 4, "horizon": 1.0, "bias_std": 0.1},
    "axes": {"beta": {"linspace": [1.0, 2.0, 4]}, "activation": ["relu", "tanh"]},
    "seeds": 2,
    "observables": ["energy", "mean_radius"],
    "times": [0.5, 1.0],
}


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    with LocalExecutor() as ex:
        run(parse_spec(SPEC), out, ex)
    return read(out)


@pytest.fixture
def drawn(monkeypatch):
    """The figures plot() draws, kept (save_figure only records them)."""
    figures = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path: figures.append(fig))
    return figures


@pytest.mark.parametrize(
    "values,labels",
    [
        ([1.0, 4 / 3, 5 / 3, 2.0], ["1", "1.33", "1.67", "2"]),
        ([-0.0, 0.5], ["0", "0.5"]),
        ([1.001, 1.002], ["1.001", "1.002"]),  # 3 digits would print both as 1
        ([1e-12, 2.5e6], ["1e-12", "2.5e+06"]),
        (["relu", "tanh"], ["relu", "tanh"]),
        ([3, 4], ["3", "4"]),
    ],
)
def test_value_labels_are_short_and_distinct(values, labels):
    assert value_labels(values) == labels


def test_curves_title_legend_and_label(table, drawn, tmp_path):
    plot(table, tmp_path / "c.png", "beta", "mean_radius", None, where={"activation": "relu"}, title="labels")
    plot(table, tmp_path / "d.png", "activation", "energy", "beta", time=0.5, title="labels")
    ax, other = drawn[0].axes[0], drawn[1].axes[0]
    title = ax.get_title().splitlines()
    assert title[0] == "labels" and title[1] == "t = 1; activation = relu" and title[2].startswith("8 runs")
    assert ax.get_ylabel() == "mean_radius: mean ± s.e. over runs" and "mean mean" not in ax.get_ylabel()
    assert other.get_title().splitlines()[1] == "t = 0.5"
    legend = [text.get_text() for text in other.get_legend().get_texts()]
    assert legend == ["beta = 1", "beta = 1.33", "beta = 1.67", "beta = 2"]


def test_heat_map_ticks_and_colour_bar(table, drawn, tmp_path):
    plot(table, tmp_path / "h.png", "beta", "activation", "energy", title="labels")
    ax, bar = drawn[0].axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "1.33", "1.67", "2"]
    assert bar.get_ylabel() == "energy (mean over the runs of a cell)"
    assert ax.get_title().splitlines()[1] == "t = 1"
