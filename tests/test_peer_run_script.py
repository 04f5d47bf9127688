"""``sdeformer peer NAME --run-peer DIR`` (``peers.run_peer``, ``peers._run_script``, ``peers._shim``): the peer's
own script run unchanged from a copy of its code, then compared as ``--compare`` compares.

The shim is checked on small fake scripts written here (never the peers' code); the real peers run from
``$SDEFORMER_PEERS/NAME`` (default ``/tmp/peers/NAME``: scratch copies of the snapshots named in docs/peers.md,
never shipped), each test skipped when its copy is absent, at the smallest size whose cells docs/peers.md records.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from sdeformer import peers
from sdeformer.cli import app
from sdeformer.core._errors import ConfigError
from sdeformer.peers._run_script import Job, run_script

PEERS = Path(os.environ.get("SDEFORMER_PEERS", "/tmp/peers"))
ABSENT = "sdeformer_test_module_not_installed"  # a module no machine has


def shim_run(tmp_path: Path, source: str, name: str = "fake.py", **spec) -> Path:
    """Run ``source``, written as ``name`` into a folder of its own, under the shim with ``spec``; its scratch
    folder (the files it wrote)."""
    folder, scratch = tmp_path / "peer", tmp_path / f"scratch{len(list(tmp_path.glob('scratch*')))}"
    folder.mkdir(exist_ok=True)
    scratch.mkdir()
    (folder / name).write_text(source)
    run_script(folder, Job({"script": name, **spec}, ()), scratch)
    return scratch


def test_unseeded_draws_are_seeded_and_repeatable(tmp_path):
    source = "import numpy as np, torch\nnp.save('x.npy', torch.randn(6).numpy())\n"
    first, second = (np.load(shim_run(tmp_path, source, seed=1234) / "x.npy") for _ in range(2))
    torch.manual_seed(1234)
    assert np.array_equal(first, second) and np.array_equal(first, torch.randn(6).numpy())


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU fallback of a machine without CUDA")
def test_cuda_placements_run_on_the_cpu(tmp_path):
    source = """import torch
x = torch.randn(2, 2)
made = [
    torch.zeros(2, device="cuda"),
    torch.eye(2, device=torch.device("cuda:0")),
    torch.ones(2, device=0),
    x.to("cuda"),
    x.to(torch.device("cuda"), torch.float64),
    x.to(device="cuda", non_blocking=True),
    x.cuda(),
]
open("devices.txt", "w").write(" ".join(str(t.device) for t in made) + " " + str(made[4].dtype))
"""
    scratch = shim_run(tmp_path, source, cuda_to_cpu=True)
    assert (scratch / "devices.txt").read_text() == "cpu " * 7 + "torch.float64"
    with pytest.raises(ConfigError, match="exited with code 1"):  # the same script without the shim's mapping
        shim_run(tmp_path, source)


def test_unused_imports_are_stubbed_and_figures_skipped(tmp_path):
    source = f"""import imageio, {ABSENT}
import matplotlib.pyplot as plt
plt.rcParams.update({{"text.usetex": True}})  # drawing it would need LaTeX
plt.plot([0, 1], [0, 1])
plt.title(r"$\\beta$")
plt.savefig("figure.pdf")
plt.gcf().savefig("figure.png")
plt.show()
open("done.txt", "w").write("ran")
"""
    scratch = shim_run(tmp_path, source, stubs=["imageio", ABSENT])
    assert (scratch / "done.txt").read_text() == "ran" and not list(scratch.glob("figure.*"))
    with pytest.raises(ConfigError, match=f"ModuleNotFoundError: No module named '{ABSENT}'"):
        shim_run(tmp_path, source, stubs=["imageio"])


def test_a_size_set_after_its_assignment_and_a_run_stopped_at_a_line(tmp_path):
    source = "import numpy as np\nmax_iter = int(1e6)\nz = np.arange(max_iter)\nmovie = True\nraise SystemExit(3)\n"
    scratch = shim_run(tmp_path, source, set={"max_iter": 4}, stop_at="movie = True", save={"z": "z.npy"})
    assert np.load(scratch / "z.npy").tolist() == [0, 1, 2, 3]
    with pytest.raises(ConfigError, match="never assigned"):
        shim_run(tmp_path, source, set={"n_iter": 4}, stop_at="movie = True")


def test_a_failing_script_is_one_line_with_its_exit_code_and_last_stderr_line(tmp_path):
    source = "import sys\nprint('partial', file=sys.stderr)\nprint('the peer gave up', file=sys.stderr)\nsys.exit(3)\n"
    with pytest.raises(ConfigError, match="fake.py exited with code 3: the peer gave up$"):
        shim_run(tmp_path, source)


def test_notebook_cells_chosen_their_call_resized_and_a_tensor_saved(tmp_path):
    cells = [
        "import torch\nclass Sim:\n    def __init__(self, n_points=10, beta=1):\n        self.n = n_points\n"
        "    def run(self):\n        return torch.arange(float(self.n))",
        "raise RuntimeError('the particle cell: not run')",
        "results = Sim(n_points=10000, beta=7).run()",
        "results = Sim(n_points=10000, beta=5).run()",
    ]
    notebook = {"cells": [{"cell_type": "markdown", "source": ["# title"]}]}
    notebook["cells"] += [{"cell_type": "code", "source": [c]} for c in cells]
    spec = {"cells": ["class Sim", r"beta\s*=\s*5\b"], "calls": {"Sim": {"n_points": 3}}, "save": {"results": "U.npy"}}
    scratch = shim_run(tmp_path, json.dumps(notebook), "nb.ipynb", **spec)
    assert np.load(scratch / "U.npy").tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ConfigError, match="no code cell"):
        shim_run(tmp_path, json.dumps(notebook), "nb.ipynb", cells=["class Sim", r"beta\s*=\s*6\b"])


def test_the_command_names_run_peer_for_a_folder_without_the_script(tmp_path):
    (tmp_path / "kinetic.py").write_text("raise SystemExit('not this one')\nmovie = True\n")
    runner = CliRunner()
    for args in (["litm"], ["dotm"], ["bruno", "--part", "pde", "--as-published"], ["glpr", "--beta", "1"]):
        res = runner.invoke(app, ["peer", *args, "--run-peer", str(tmp_path)])
        assert res.exit_code == 2 and "--run-peer" in res.output and "Traceback" not in res.output, res.output
    res = runner.invoke(app, ["peer", "bruno", "--run-peer", str(tmp_path)])  # the particles write no table
    assert res.exit_code == 2 and "--part pde --as-published" in res.output
    res = runner.invoke(app, ["peer", "dotm", "--part", "kinetic", "--run-peer", str(tmp_path)])
    assert res.exit_code == 2 and "kinetic.py exited with code 1: not this one" in res.output
    assert list(tmp_path.iterdir()) == [tmp_path / "kinetic.py"]  # the user's folder as it was


def peer(name: str) -> Path:
    folder = PEERS / name
    if not folder.is_dir():
        pytest.skip(f"no copy of {name}'s code in {folder} (set SDEFORMER_PEERS)")
    return folder


SMALL = {"batch": 4, "tokens": 8, "betas": 5, "betamin": 1.0, "betamax": 5.0, "maxtime": 20.0}


def equal_cells(name: str, **options) -> tuple[int, int]:
    c = peers.run_peer(name, peer(name), **options)["compare"]
    return c["equal"], c["total"]


def test_simuformer_runner(one_thread):
    assert equal_cells("simuformer", norm="postln", heads=1, dim=4, checkpoints=21, **SMALL) == (105, 105)


def test_glpr_phase_diagrams_with_its_cuda_strings(one_thread):
    assert equal_cells("glpr", use_softmax=True, dim=3, random_kq=1, random_v=1, **SMALL) == (1000, 1000)


def test_litm_threshold_curve_through_the_command():
    res = CliRunner().invoke(app, ["peer", "litm", "--run-peer", str(peer("litm"))])
    assert res.exit_code == 0 and "cells equal: 96 / 96" in res.stdout, res.output


@pytest.mark.slow
def test_litm_particles():
    assert equal_cells("litm", part="particles") == (3264, 3264)


def test_dotm_kinetic_to_its_movie_section():
    assert equal_cells("dotm", part="kinetic") == (40010, 40010)


def test_dotm_staircase_printed_energies_at_a_reduced_max_iter():
    assert equal_cells("dotm", beta=[4000.0], max_iter=9300) == (2, 2)  # the peer collapses after 9238 steps


@pytest.mark.slow
def test_dotm_staircase_all_six_betas():
    assert equal_cells("dotm", max_iter=12300) == (12, 12)  # the last collapse (beta = 500) after 12237 steps


def test_bruno_notebook_pde_cells(one_thread):
    options = {"part": "pde", "as_published": True, "points": 1001, "maxtime": 0.01}
    assert equal_cells("bruno", **options) == (158000, 158000)  # beta 5 and 7, 79 rows of 1000 points each
