"""GLPR's phase diagram as one call, against cells its own script wrote.

How the recorded cells were obtained: snapshot 538ba83 of borjanG/2023-transformers-rotf in a scratch folder
outside the repository; ``phase-diagrams.py`` with its device strings 'cuda' changed to 'cpu' (nothing else), run
as ``python seeded.py 67280421310721 phase_cpu.py --batch 4 --ntokens 8 --dmodel 3 --betas 5 --betamin 1
--betamax 5 --disable_tqdm ARGS``; seeded.py (scratch, not shipped) only seeds torch's default generator and runs
the script with runpy (torch 2.13 seeds it at random in a fresh process). torch 2.13.0+cpu, one thread. Its
pickle holds 5 betas x 200 checkpoints; recorded here: the sum over all 1000 cells of the pair counts (cell times
the 224 ordered off-diagonal pairs, 4 runs x 8 x 7) and, per beta, the counts at checkpoints 0, 10, 40, 100, 199.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from sdeformer import peers
from sdeformer.core._errors import ConfigError
from sdeformer.peers import _glpr as glpr

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

SMALL = {"batch": 4, "tokens": 8, "dim": 3, "betas": 5, "betamin": 1.0, "betamax": 5.0}
PAIRS, COLUMNS = 224, [0, 10, 40, 100, 199]
SOFT = {"use_softmax": True, "maxtime": 20.0}
PEER = {  # case: (options beyond SMALL, sum of all counts, counts per beta at COLUMNS)
    "softmax": (SOFT, 115550, "0,2,42,224,224 0,0,26,180,194 0,0,18,156,186 0,0,20,106,126 0,2,28,88,96"),
    "softmax, kq 1, v 1, per run": (
        {**SOFT, "random_kq": 1, "random_v": 1},
        181134,
        "0,6,188,224,224 0,2,166,194,194 0,24,196,196,196 2,14,156,200,224 0,4,184,224,224",
    ),
    "softmax, kq 2 (its Wigner), v 2": (
        {**SOFT, "random_kq": 2, "random_v": 2},
        92236,
        "0,2,48,170,170 0,2,84,98,106 0,0,108,108,108 0,0,98,104,118 0,0,26,70,88",
    ),
    "softmax, kq 3, v 3, noanneal 1": (
        {**SOFT, "random_kq": 3, "random_v": 3, "noanneal": 1},
        132940,
        "0,2,86,224,224 0,0,10,74,216 0,10,48,188,224 0,2,54,224,224 0,0,12,114,168",
    ),
    "softmax, kq 1, noanneal 2, regen 2": (
        {**SOFT, "random_kq": 1, "noanneal": 2, "regen_period": 2.0},
        122500,
        "0,0,14,224,224 0,0,62,192,192 0,0,64,162,162 0,0,66,132,132 0,0,56,100,100",
    ),
    "softmax, kq 1, regen 2.5": (
        {**SOFT, "random_kq": 1, "regen_period": 2.5},
        158114,
        "0,2,50,224,224 0,0,20,224,224 0,0,36,198,224 0,0,34,210,224 0,0,92,194,224",
    ),
    "exp / N (its default)": ({}, 46948, "0,0,0,2,4 0,0,0,0,48 0,0,0,36,130 0,0,30,84,132 0,8,88,126,150"),
    "exp / N, kq 1, v 1": (
        {"random_kq": 1, "random_v": 1},
        33308,
        "0,0,2,2,20 0,0,0,24,36 2,14,30,62,96 2,22,24,46,72 2,12,28,44,46",
    ),
}


@pytest.mark.parametrize("case", list(PEER))
def test_cells_equal_the_scripts(case):
    options, total, columns = PEER[case]
    counts = np.rint(np.array(glpr.run(**SMALL, **options)["density"]) * PAIRS).astype(int)  # (5, 200)
    assert counts.shape == (5, 200)
    assert int(counts.sum()) == total
    assert counts[:, COLUMNS].tolist() == [[int(v) for v in row.split(",")] for row in columns.split()]


def test_write_and_compare_round_trip(tmp_path):
    result = glpr.run(**SMALL, **SOFT, beta=[2.0, 4.0])
    [path] = peers.write("glpr", result, tmp_path)
    with open(path, "rb") as fh:
        table = pickle.load(fh)
    assert table["density_tensor"].shape == (2, 200) and table["density_tensor"].dtype == torch.float64
    assert peers.compare("glpr", result, path) == {"equal": 400, "total": 400, "max_diff": 0.0}
    table["density_tensor"][1, 150] += 1 / PAIRS
    path.write_bytes(pickle.dumps(table))
    assert peers.compare("glpr", result, path)["equal"] == 399


def test_step_and_clock_conventions():
    s = glpr.settings()
    assert s["maxtime"] == 1.0 and glpr.settings(use_softmax=True)["maxtime"] == 30.0
    assert glpr.eta(4.0, s) == pytest.approx(0.1 / (2 * np.exp(3.5)), rel=1e-15)  # exp / N: the step shrinks
    assert glpr.eta(0.1, s) == 0.1  # sqrt(beta) e^{beta - 1/2} < 1: the step as given
    record, redraws = glpr.clock(0.1, glpr.settings(use_softmax=True, maxtime=2.0, regen_period=0.5))
    assert len(record) == 200 and record[0] == 1 and record[-1] == 20  # t = 0 recorded after the first step
    assert redraws == [
        6,
        11,
        15,
    ]  # the first step whose float time exceeds 0.5, 1.0, 1.5 (15 steps: 1.5000000000000004)
    for key, value in (("random_kq", 4), ("noanneal", 3), ("step", 0.0), ("heads", 2)):
        with pytest.raises(ConfigError, match=key):
            glpr.settings(**{key: value})


def test_command(tmp_path):
    from typer.testing import CliRunner

    from sdeformer.cli import app

    args = ["peer", "glpr", "--use-softmax", "--beta", "3", *[f"--{k}={v}" for k, v in SMALL.items()]]
    res = CliRunner().invoke(app, [*args, "--maxtime", "5", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    [path] = tmp_path.glob("*.pkl")
    res = CliRunner().invoke(app, [*args, "--maxtime", "5", "--compare", str(path)])
    assert res.exit_code == 0 and "cells equal: 200 / 200" in res.stdout
    res = CliRunner().invoke(app, ["peer", "glpr", "--norm", "postln"])
    assert res.exit_code == 2 and "norm" in res.output and "Traceback" not in res.output
