"""The peers' experiments as one call (docs/peers.md), against numbers produced by the peers' own code.

How the recorded numbers were obtained (scratch copies outside the repository, never shipped):
- litm, snapshot c7e12ba of borjanG/2026-lost-in-the-middle: ``python generate_u_shape_numerology_data.py``
  printed t_crit = 2.457489, 0.600716, 0.174018 at beta = 1, 2, 3 and wrote
  u_shape_numerology_lambda1_tcrit.dat (rows 1, 10, 48 recorded below).
- dotm, snapshot 4aa178a of HugoKoubbi/2024-transformers-dotm: kinetic.py run up to its movie section (the
  dynamics only): z[:, -1] = (-0.26758966, 0.96353296) for all five tokens, z[:, 1000] two clusters at
  (0.97930835, 0.2023738) x2 and (-0.89153347, 0.45295483) x3; staircase.py with max_iter = 20000 (1e6 in the
  script; only the iteration count changed, imageio and seaborn stubbed, no LaTeX): at beta = 500, 1000, 1500,
  2000, 3000, 4000 its energy reaches 1.0 and turns NaN at iteration 12237, 11090, 10477, 10082, 9571, 9238:
  the path lengths lr log(beta) * (steps before NaN) are recorded below. 36.7 s for the six betas.
  The same run with its print(E) kept (stdout redirected: print(theta0), then six lists of np.float64(...)):
  NaN from the same iterations, and `sdeformer peer dotm --as-published --compare out.txt` gives 12 / 12.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from sdeformer import peers
from sdeformer.cli import app
from sdeformer.core._errors import ConfigError
from sdeformer.peers import _dotm as dotm

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

LITM_T_CRIT = {1.0: 2.457489, 2.0: 0.600716, 3.0: 0.174018}  # printed with 6 decimals
LITM_ROWS = {0: (0.1, 27.092952059171), 9: (1.0, 2.457488980328), 47: (4.8, 0.022308300519)}
DOTM_PATH = {500.0: 0.7604815930039236, 2000.0: 0.7663229859710328, 4000.0: 0.7662043057526253}


def test_litm_t_crit_in_both_time_units():
    result = peers.run("litm")
    for row in result["t_crit"]:
        assert row["t_crit_paper"] == pytest.approx(LITM_T_CRIT[row["beta"]], abs=5e-7)
        # sdeformer's softmax time is slower by beta I_0(beta)
        assert row["t_crit_softmax"] == pytest.approx(row["t_crit_paper"] * row["time_ratio"], rel=1e-12)
    assert result["t_crit"][0]["time_ratio"] == pytest.approx(1.2660658777520082, rel=1e-12)  # I_0(1)
    assert result["alibi_slope_per_token"] == pytest.approx(1 / 64)


def test_litm_table_matches_the_peers_rows(tmp_path):
    result = peers.run("litm")
    [path] = peers.write("litm", result, tmp_path)
    rows = path.read_text().split("\n")
    assert rows[0] == "beta t_crit" and len(rows) == 50
    for k, (beta, t) in LITM_ROWS.items():
        assert rows[1 + k] == f"{beta:.6f} {t:.12f}"
    same = peers.compare("litm", result, path)
    assert (same["equal"], same["total"]) == (96, 96) and same["max_diff"] <= 5e-13
    bad = tmp_path / "bad.dat"
    bad.write_text(path.read_text().replace("2.457488980328", "2.457488980428"))
    assert peers.compare("litm", result, bad)["equal"] == 95


def test_dotm_kinetic_reproduced():
    z = dotm.kinetic()  # (n, steps + 1, d)
    assert z.shape == (5, 4001, 2)
    np.testing.assert_allclose(z[:, -1], np.tile([-0.26758966, 0.96353296], (5, 1)), atol=1e-6)
    two = np.array([[0.97930835, 0.2023738]] * 2 + [[-0.89153347, 0.45295483]] * 3)
    np.testing.assert_allclose(z[:, 1000], two, atol=1e-6)


@pytest.mark.parametrize("beta", [500.0, 2000.0, 4000.0])
def test_dotm_staircase_completes_through_every_saddle(beta):
    row = dotm.staircase(beta)
    assert row["done"] and row["final_clusters"] == 1
    assert row["saddles"] == [[1, 1, 1, 1, 1], [2, 1, 1, 1], [3, 1, 1], [3, 2], [5]]
    assert row["levels"] == pytest.approx([0.2, 0.28, 0.44, 0.52, 1.0])
    assert [round(v, 2) for v in row["plateau_levels"][-3:]] == [0.28, 0.44, 0.52]  # the detector's defaults
    assert row["path_length"] == pytest.approx(DOTM_PATH[beta], rel=0.05)  # the peer's path, merges cut short
    assert row["log_t_end"] / beta == pytest.approx(0.075, abs=0.01)  # the last merge at tau ~ 0.075


def test_dotm_compare_reads_the_peers_energies(tmp_path):
    result = peers.run("dotm", beta=[2000.0], as_published=True)
    assert result["runs"][0]["peer_nan_after"] == pytest.approx(10082, rel=0.05)
    n = 10082
    energies = np.r_[np.linspace(0.2, 1.0, n), np.full(9918, np.nan)].tolist()
    path = tmp_path / "peer.json"
    path.write_text(json.dumps({"E": {"2000": energies}}))
    assert peers.compare("dotm", result, path)["equal"] == 2
    path.write_text(json.dumps({"E": {"2000": energies[: n // 2] + [math.nan] * (n // 2)}}))
    assert peers.compare("dotm", result, path)["equal"] == 0  # collapsed early, below one cluster's energy


def test_dotm_compare_reads_the_staircase_scripts_printed_output(tmp_path):
    """``python staircase.py > out.txt``: print(theta0) (numpy, no commas), then print(E) per beta of the script's
    six, floats as np.float64(...) under numpy 2 and bare under numpy 1 (the peer's run above printed the former)."""
    result = peers.run("dotm", beta=[2000.0], as_published=True)
    n, rows = 10082, []
    for beta in dotm.BETAS:  # the collapse at 2000 after n steps; the other betas never reach one cluster
        e = np.r_[np.linspace(0.2, 1.0 if beta == 2000.0 else 0.5, n), np.full(50, np.nan)]
        rows.append("[" + ", ".join(f"np.float64({v!r})" if beta < 3000 else repr(v) for v in e.tolist()) + "]")
    text = "[0.         0.04249034 0.16996135\n 0.33992269 0.59486471]\n" + "\n".join(rows) + "\n"
    path = tmp_path / "out.txt"
    path.write_text(text)
    assert peers.compare("dotm", result, path)["equal"] == 2
    assert peers.compare("dotm", peers.run("dotm", beta=[1000.0], as_published=True), path)["equal"] == 0
    path.write_text(text.replace(rows[-1], ""))
    with pytest.raises(ConfigError, match="compare"):
        peers.compare("dotm", result, path)


def test_peer_command_json_and_errors(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["peer", "litm", "--beta", "2", "--json", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [r["beta"] for r in out["t_crit"]] == [2.0] and out["files"]
    res = runner.invoke(app, ["peer", "litm", "--compare", out["files"][0]])
    assert res.exit_code == 0 and "cells equal: 96 / 96" in res.stdout
    for args, word in ((["peer", "nope"], "peer"), (["peer", "litm", "--part", "kinetic"], "part")):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and word in res.output and "Traceback" not in res.output
    with pytest.raises(ConfigError, match="part"):
        peers.run("dotm", part="movie")


# bruno, snapshot dafd7da of gbruno16/transformers-metastability: the notebook's first cell (ParticlesSimulation)
# executed, ParticlesSimulation(torch.double, cpu, beta=b, N=10).g_coeff(k) for k = 1..10: its largest at
# k = 1, 2, 3, 4, 6 for beta = 1, 2, 5, 10, 20, and g_coeff(3) = 5.919313022082268 at beta = 5.
BRUNO_DOMINANT = {1.0: 1, 2.0: 2, 5.0: 3, 10.0: 4, 20.0: 6}
BRUNO_G3_BETA5 = 5.919313022082268


def test_bruno_rates_and_dominant_modes():
    from sdeformer.peers import _bruno as bruno

    for beta, k in BRUNO_DOMINANT.items():
        assert int(np.argmax(bruno.rates(beta))) + 1 == k
    assert bruno.rates(5.0, as_published=True)[2] == pytest.approx(BRUNO_G3_BETA5, rel=1e-12)
    assert bruno.rates(5.0)[2] == pytest.approx(math.pi * BRUNO_G3_BETA5, rel=1e-12)  # the particles' rate


def test_bruno_particles_grow_the_dominant_mode_at_gamma_k():
    """500 particles at beta = 2: mode 2 grows at k^2 I_k(beta) / beta (not the notebook's / (pi beta))."""
    from sdeformer.peers import _bruno as bruno

    [row] = peers.run("bruno", beta=[2.0], tokens=500)["runs"]
    assert row["dominant"] == 2
    assert row["dominant_rate_ratio"] == pytest.approx(1.0, abs=0.15)
    assert row["measured"][1] > 2 * bruno.rates(2.0, as_published=True)[1]


def test_each_peer_is_a_function_of_sdeformer_peers():
    import sdeformer as sdf

    assert sdf.peers.litm(beta=[2.0]) == peers.run("litm", beta=[2.0])
    assert all(callable(getattr(sdf.peers, name)) for name in peers.NAMES)
    with pytest.raises(ConfigError, match="part"):
        sdf.peers.dotm(part="movie")


def test_cells_count_infinities_and_nans_as_the_same_number():
    """A cell equal on both sides is equal, an infinity of the same sign included, NaN only against NaN; the
    largest difference is infinite where a NaN or an infinity meets anything else (the wrong rule counted inf
    against inf unequal and reported "largest difference 0" for identical tables)."""
    inf, nan = float("inf"), float("nan")
    table = [1.0, inf, -inf, nan, 2.5]
    assert peers.cells(table, list(table), tol=0.0) == {"equal": 5, "total": 5, "max_diff": 0.0}
    theirs = [1.0 + 1e-12, -inf, -inf, 0.0, nan]
    assert peers.cells(table, theirs, tol=1e-9) == {"equal": 2, "total": 5, "max_diff": inf}
    assert peers.cells([1.0, 2.0], [1.0, 2.5], tol=0.1) == {"equal": 1, "total": 2, "max_diff": 0.5}
