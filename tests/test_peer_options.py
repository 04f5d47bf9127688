"""The phase-diagram peers' other options (simuformer's ``--no_softmax``, ``--rawstep``, ``--adjacent``,
``--plotdim``, ``--cluster_sizes``; GLPR's ``--rawstep``, ``--plotdim``, ``--cluster_sizes``) against cells their
own scripts wrote.

How the recorded cells were obtained: the snapshots and the seeded runs of tests/test_peer_simuformer.py (simuformer
1959a8a: ``python seeded.py 67280421310721 runner.py --batch 4 --ntokens 8 --dmodel 4 --betas 5 --betamin 1
--betamax 5 --n_time_ckpts 21 --no_plot --disable_tqdm --norm postln ARGS``) and tests/test_peer_glpr.py (GLPR
538ba83, 'cuda' changed to 'cpu': ``python seeded.py 67280421310721 phase_cpu.py --batch 4 --ntokens 8 --dmodel 3
--betas 5 --betamin 1 --betamax 5 --disable_tqdm ARGS``), with the ARGS of each case below; torch 2.13.0+cpu, one
thread. simuformer: each row is one beta (1..5), each number its ``density_tensor`` cell times ``SCALE`` (its pair
count: 112 pairs, 28 adjacent ones; with ``--plotdim`` the summed span dimension of the 4 runs) and its
``cluster_tensor`` cell times 2 (twice the median rank). GLPR: the sum over its 1000 cells and, per beta, the
cells at checkpoints 0, 10, 40, 100, 199, in the same units (224 pairs).
"""

from __future__ import annotations

import numpy as np
import pytest
from threshold_cells import assert_threshold_cells

from sdeformer.peers import _glpr as glpr, _simuformer as simuformer

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

SF_SMALL = {"batch": 4, "tokens": 8, "dim": 4, "betas": 5, "betamin": 1.0, "betamax": 5.0, "checkpoints": 21}
SF_SMALL["norm"] = "postln"


def _rows(text: str) -> np.ndarray:
    return np.array([[int(v) for v in row.split(",")] for row in text.split()])


SF = {  # case: (options (ARGS), scale, the peer's density cells, its cluster cells or None)
    "no_softmax, 1 head (--n_heads 1 --no_softmax --maxtime 1)": (
        {"heads": 1, "no_softmax": True, "maxtime": 1.0},
        112,
        "0,0,0,0,3,6,6,16,35,39,41,45,45,49,60,77,81,81,81,82,90 1,2,6,19,29,31,41,43,43,43,44,45,60,60,62,62,62,62,"
        "63,64,64 1,16,21,21,21,21,35,47,64,70,85,90,90,90,90,90,90,90,90,90,90 0,41,69,69,69,69,69,69,69,69,70,70,"
        "70,70,72,72,72,75,75,75,75 0,25,28,31,32,37,39,39,39,39,41,41,56,56,56,56,56,56,56,56,56",
        None,
    ),
    "no_softmax, rawstep (--n_heads 1 --no_softmax --rawstep --maxtime 1)": (
        {"heads": 1, "no_softmax": True, "rawstep": True, "maxtime": 1.0},
        112,
        "0,0,0,0,0,3,3,12,12,27,27,41,41,49,49,59,59,78,78,81,81 1,1,1,4,4,8,8,26,26,44,44,57,57,58,58,61,61,61,61,"
        "63,63 1,1,1,13,13,41,41,41,41,43,43,57,57,74,74,94,94,96,96,96,96 2,2,2,4,4,36,36,54,54,63,63,68,68,68,68,"
        "68,68,68,68,70,70 5,5,5,23,23,37,37,42,42,66,66,67,67,67,67,67,67,67,67,67,67",
        None,
    ),
    "plotdim (--n_heads 1 --plotdim --maxtime 20)": (
        {"heads": 1, "plotdim": True, "maxtime": 20.0},
        4,
        "16,16,16,16,16,15,8,6,6,4,4,4,4,4,4,4,4,4,4,4,4 16,16,16,16,15,12,9,7,7,7,7,7,7,7,7,7,7,7,7,7,7 16,16,16,16,"
        "15,12,8,5,5,5,4,4,4,4,4,4,4,4,4,4,4 16,16,16,16,14,9,8,6,6,6,6,5,5,5,5,5,5,5,5,5,5 16,16,16,16,15,9,9,8,7,7,"
        "7,7,7,7,6,6,6,6,6,6,6",
        None,
    ),
    "cluster_sizes (--n_heads 1 --cluster_sizes --maxtime 20)": (
        {"heads": 1, "cluster_sizes": True, "maxtime": 20.0},
        112,
        "0,0,0,4,12,46,73,86,112,112,112,112,112,112,112,112,112,112,112,112,112 0,0,0,2,12,34,67,71,73,73,73,73,73,"
        "73,73,73,73,73,73,73,73 0,0,0,1,16,43,85,99,100,112,112,112,112,112,112,112,112,112,112,112,112 0,0,1,4,29,"
        "62,75,79,81,81,96,96,96,96,96,96,96,96,96,96,96 0,0,0,1,26,58,58,66,66,66,66,66,66,81,81,81,81,81,81,81,81",
        "16,16,16,16,16,15,15,7,3,2,2,2,2,2,2,2,2,2,2,2,2 16,16,16,16,16,15,10,7,4,4,4,4,4,4,4,4,4,4,4,4,4 16,16,16,"
        "16,16,16,13,9,2,2,2,2,2,2,2,2,2,2,2,2,2 16,16,16,16,15,12,6,5,3,3,3,2,2,2,2,2,2,2,2,2,2 16,16,16,16,16,13,8,"
        "5,5,4,4,4,4,4,3,3,3,3,3,3,3",
    ),
    "no_softmax, 8 heads (--no_softmax --maxtime 1)": (
        {"no_softmax": True, "maxtime": 1.0},
        112,
        "0,0,0,0,0,1,1,6,32,62,89,96,96,99,100,112,112,112,112,112,112 0,2,13,23,55,86,93,93,93,108,112,112,112,112,"
        "112,112,112,112,112,112,112 1,55,68,68,68,68,80,80,96,96,112,112,112,112,112,112,112,112,112,112,112 0,99,105,"
        "112,112,112,112,112,112,112,112,112,112,112,112,112,112,112,112,112,112 0,112,112,112,112,112,112,112,112,"
        "112,112,112,112,112,112,112,112,112,112,112,112",
        None,
    ),
    "adjacent, 8 heads (--adjacent --maxtime 20)": (
        {"adjacent": True, "maxtime": 20.0},
        28,
        "0,0,0,0,2,12,21,28,28,28,28,28,28,28,28,28,28,28,28,28,28 0,0,0,0,1,12,23,28,28,28,28,28,28,28,28,28,28,28,"
        "28,28,28 0,0,0,0,1,3,15,22,26,28,28,28,28,28,28,28,28,28,28,28,28 0,0,0,0,1,15,22,28,28,28,28,28,28,28,28,28,"
        "28,28,28,28,28 0,0,1,1,1,10,17,25,28,28,28,28,28,28,28,28,28,28,28,28,28",
        None,
    ),
}
SLOW = ("no_softmax, 8 heads", "adjacent, 8 heads")  # several seconds each on a loaded core


@pytest.mark.parametrize(
    "case", [pytest.param(c, marks=pytest.mark.slow) if c.startswith(SLOW) else c for c in SF]
)  # fmt: skip
def test_simuformer_cells_equal_the_scripts(case):
    """The scripts' pair counts, cell for cell up to the one pair that kernels move (``threshold_cells``: "1 head
    without softmax" has a cosine at 0.999 at beta 1, t = 1, one pair off under AVX-512)."""
    options, scale, density, clusters = SF[case]
    result = simuformer.run(**SF_SMALL, **options)
    assert_threshold_cells(np.rint(np.array(result["density"]) * scale).astype(int), _rows(density))
    if clusters is not None:
        assert_threshold_cells(np.rint(np.array(result["cluster"]) * 2).astype(int), _rows(clusters))
    else:
        assert not np.any(result["cluster"])  # the peer's zeros without --cluster_sizes


GL_SMALL = {"batch": 4, "tokens": 8, "dim": 3, "betas": 5, "betamin": 1.0, "betamax": 5.0}
COLUMNS = [0, 10, 40, 100, 199]
GL = {  # case: (options (ARGS), key, scale, sum of all cells, cells per beta at COLUMNS)
    "exp / N, rawstep (--maxtime 1 --rawstep)": (
        {"maxtime": 1.0, "rawstep": True}, "density", 224, 21272,
        "0,0,0,2,4 0,0,0,0,20 0,0,0,6,88 0,0,2,36,84 2,2,14,58,92",
    ),
    "softmax, plotdim (--use_softmax --maxtime 20 --plotdim)": (
        {"use_softmax": True, "maxtime": 20.0, "plotdim": True}, "density", 4, 8457,
        "12,12,11,4,4 12,12,12,6,5 12,12,12,7,6 12,12,12,9,8 12,12,12,10,9",
    ),
    "softmax, cluster_sizes (--use_softmax --maxtime 20 --cluster_sizes)": (
        {"use_softmax": True, "maxtime": 20.0, "cluster_sizes": True}, "cluster", 2, 7466,
        "16,16,15,2,2 16,16,15,3,2 16,16,15,4,3 16,16,16,5,4 16,16,15,5,4",
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    "case", [c if "rawstep" in c else pytest.param(c, marks=pytest.mark.slow) for c in GL]
)  # fmt: skip
def test_glpr_cells_equal_the_scripts(case):
    options, key, scale, total, columns = GL[case]
    cells = np.rint(np.array(glpr.run(**GL_SMALL, **options)[key]) * scale).astype(int)  # (5, 200)
    assert int(cells.sum()) == total
    assert cells[:, COLUMNS].tolist() == _rows(columns).tolist()


def test_the_raw_step_and_the_corrected_one():
    """Without softmax the step is divided by max(sqrt(beta) e^{beta - 1/2}, 1) unless rawstep; with softmax never."""
    import torch

    beta = torch.tensor(4.0)
    s = simuformer.settings(no_softmax=True)
    assert simuformer.eta(beta, s) == pytest.approx(0.1 / (2 * np.exp(3.5)), rel=1e-15)
    assert simuformer.eta(beta, {**s, "rawstep": True}) == 0.1 == simuformer.eta(beta, simuformer.settings())
    assert glpr.eta(4.0, glpr.settings(rawstep=True)) == 0.1


def test_the_command_takes_the_options_and_refuses_them_for_a_peer_without(tmp_path):
    import json

    from typer.testing import CliRunner

    from sdeformer.cli import app

    small = ["--batch", "2", "--tokens", "4", "--dim", "3", "--betas", "2", "--maxtime", "1", "--json"]
    args = ["peer", "simuformer", "--norm", "postln", "--heads", "1", "--checkpoints", "3", *small]
    res = CliRunner().invoke(app, [*args, "--no-softmax", "--rawstep", "--cluster-sizes", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["settings"]["no_softmax"] and out["settings"]["rawstep"] and len(out["cluster"]) == 2
    assert all(1 <= c <= 4 for row in out["cluster"] for c in row)  # a median count of clusters of 4 tokens
    [path] = tmp_path.glob("*.pkl")
    res = CliRunner().invoke(app, [*args, "--no-softmax", "--rawstep", "--cluster-sizes", "--compare", str(path)])
    assert json.loads(res.stdout)["compare"] == {"equal": 12, "total": 12, "max_diff": 0.0}
    for flag in ("--adjacent", "--plotdim"):
        assert CliRunner().invoke(app, [*args, flag]).exit_code == 0
    res = CliRunner().invoke(app, ["peer", "glpr", "--no-softmax", *small])
    assert res.exit_code == 2 and "no_softmax" in res.output and "Traceback" not in res.output
