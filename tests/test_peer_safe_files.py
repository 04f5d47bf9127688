"""``--compare`` reads safe formats only (docs/peers.md, "What --compare reads"): a planted pickle that would run code
is refused in one line and runs nothing; the peers' own result pickles (tensors, arrays, argparse's record) still
load; NumPy files are read without pickles; a truncated file is one line.

The wrong model each test fails: ``pickle.load`` (the payload writes its marker), ``np.load(allow_pickle=True)``
(an object array is read), an unwrapped ``EOFError`` (a traceback)."""

from __future__ import annotations

import argparse
import pickle

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from sdeformer import peers
from sdeformer.cli import app
from sdeformer.core._errors import ConfigError
from sdeformer.peers._files import load_array, load_pickle

SMALL = ["--batch", "4", "--tokens", "8", "--dim", "4", "--betas", "5", "--betamin", "1", "--betamax", "5"]


class Payload:
    """What a hostile file holds: unpickled, it writes ``marker`` (as ``os.system`` would run a command)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


@pytest.mark.parametrize("name", ["glpr", "simuformer"])
def test_a_planted_pickle_is_refused_in_one_line_and_runs_nothing(tmp_path, name):
    marker = tmp_path / "marker"
    planted = tmp_path / "ds_planted.pkl"
    planted.write_bytes(pickle.dumps({"density_tensor": Payload(str(marker))}))
    res = CliRunner().invoke(app, ["peer", name, "--beta", "2", *SMALL, "--maxtime", "1", "--compare", str(planted)])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "builtins.exec" in res.output and "compare" in res.output
    assert not marker.exists()  # pickle.load would have written it


def test_the_peers_own_pickles_still_load(tmp_path):
    table = {
        "args": argparse.Namespace(dmodel=2, use_softmax=True),
        "density_tensor": torch.arange(6.0, dtype=torch.float64).reshape(2, 3),
        "betas_list": np.linspace(0.1, 1.0, 4),
        "scalar": np.float64(2.5),
    }
    path = tmp_path / "ds.pkl"
    path.write_bytes(pickle.dumps(table))
    back = load_pickle(path, "the script's result pickle")
    assert torch.equal(back["density_tensor"], table["density_tensor"]) and back["args"].dmodel == 2
    assert np.array_equal(back["betas_list"], table["betas_list"]) and back["scalar"] == 2.5


def test_numpy_files_without_pickles_and_a_truncated_file(tmp_path):
    objects = tmp_path / "z.npy"
    np.save(objects, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ConfigError, match="compare.*pickle"):
        load_array(objects, "the peer's z")
    good = tmp_path / "ds.pkl"
    good.write_bytes(pickle.dumps({"density_tensor": torch.zeros(2)})[:-9])
    with pytest.raises(ConfigError, match="compare"):
        load_pickle(good, "the script's result pickle")
    pde = ["peer", "bruno", "--part", "pde", "--as-published", "--points", "101", "--maxtime", "0.005", "--beta", "5"]
    res = CliRunner().invoke(app, [*pde, "--compare", str(objects)])
    assert res.exit_code == 2 and "Traceback" not in res.output and "compare" in res.output, res.output


def test_the_public_compare_reads_a_written_table(tmp_path):
    result = peers.run("glpr", beta=[2.0], batch=4, tokens=8, dim=4, maxtime=1.0)
    [path] = peers.write("glpr", result, tmp_path)
    assert peers.compare("glpr", result, path)["equal"] == peers.compare("glpr", result, path)["total"] > 0
