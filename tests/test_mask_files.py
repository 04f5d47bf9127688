"""Mask files' values are validated (BEYOND section 8: an unweighted graph): a .npy adjacency holds 0/1 only,
an edge list exactly two indices per line; each bad file gets its own one-line message naming ``mask``."""

from __future__ import annotations

import numpy as np
import pytest

from sdeformer.attention._masks import graph_adjacency
from sdeformer.core._errors import ConfigError

N = 4
RING = np.roll(np.eye(N), 1, axis=1) + np.roll(np.eye(N), -1, axis=1)  # the cycle, 0/1


def test_a_0_1_adjacency_and_an_edge_list_give_the_same_graph(tmp_path):
    np.save(tmp_path / "ring.npy", RING)
    (tmp_path / "ring.txt").write_text("0 1\n1 2  # a comment\n\n2 3\n3 0\n")
    a, b = (graph_adjacency(str(tmp_path / f), N) for f in ("ring.npy", "ring.txt"))
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (RING * np.where(np.eye(N, k=1) > 0, np.nan, 1.0), "0/1 entries"),  # NaN
        (-RING, "0/1 entries"),  # negative
        (RING * 0.5, "0/1 entries"),  # weighted
        (np.ones((N, N + 1)), r"must be \(4, 4\)"),  # wrong shape: named as a shape, not as an edge list
    ],
)
def test_bad_adjacency_values_are_refused_naming_the_problem(tmp_path, values, message):
    np.save(tmp_path / "bad.npy", values)
    with pytest.raises(ConfigError, match=f"mask.*{message}"):
        graph_adjacency(str(tmp_path / "bad.npy"), N)


@pytest.mark.parametrize("text", ["0 1 0.5\n", "0\n", "0 x\n", "0 1.5\n"])
def test_edge_lists_hold_exactly_two_indices_per_line(tmp_path, text):
    (tmp_path / "g.txt").write_text("1 2\n" + text)
    with pytest.raises(ConfigError, match="line 2"):
        graph_adjacency(str(tmp_path / "g.txt"), N)


def test_a_file_that_is_not_npy_is_named_so(tmp_path):
    (tmp_path / "fake.npy").write_text("0 1\n")
    with pytest.raises(ConfigError, match="not a .npy array file"):
        graph_adjacency(str(tmp_path / "fake.npy"), N)
