"""``python tools/run_peer.py NAME DIR`` (the repository tool ``run_peer``, ``peer_harness``): the peer's own script
run unchanged from a copy of its code, then compared as ``--compare`` compares.

The shim and the process handling are checked on small fake scripts written here (never the peers' code). The real
peers run only from ``$SDEFORMER_PEERS/NAME`` when that variable is set explicitly (no default: a world-writable
folder such as /tmp must never feed code to the test suite), and only when every file copied from there has the
sha256 of the snapshot recorded in docs/peers.md; each test is skipped without the variable or the copy.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
import run_peer as tool
import torch
from peer_harness.jobs import SCRIPTS, Job
from peer_harness.process import run_script, snapshot_hashes, verify

from sdeformer.core._errors import ConfigError

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


def test_the_tool_names_dir_for_a_folder_without_the_script(tmp_path, capsys):
    (tmp_path / "kinetic.py").write_text("raise SystemExit('not this one')\nmovie = True\n")
    for args in (["litm"], ["dotm"], ["bruno", "--part", "pde", "--as-published"], ["glpr", "--beta", "1"]):
        assert tool.main([args[0], str(tmp_path), *args[1:]]) == 2
        assert "invalid DIR=" in capsys.readouterr().err
    assert tool.main(["bruno", str(tmp_path)]) == 2  # the particles write no table
    assert "--part pde --as-published" in capsys.readouterr().err
    assert tool.main(["dotm", str(tmp_path), "--part", "kinetic", "--unverified"]) == 2
    err = capsys.readouterr().err
    assert "running third-party code" in err and "kinetic.py exited with code 1: not this one" in err
    assert list(tmp_path.iterdir()) == [tmp_path / "kinetic.py"]  # the user's folder as it was


def test_a_planted_peers_folder_is_refused_and_runs_nothing(tmp_path, monkeypatch, capsys):
    """What anyone able to write /tmp could plant: a 'kinetic.py' that writes a marker. Neither the tests' folder
    (``peer``) nor the tool runs it: its hash is not the snapshot's."""
    marker = tmp_path / "marker"
    planted = tmp_path / "peers" / "dotm"
    planted.mkdir(parents=True)
    (planted / "kinetic.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nmovie = True\n")
    monkeypatch.setenv("SDEFORMER_PEERS", str(tmp_path / "peers"))
    with pytest.raises(ConfigError, match=r"kinetic.py \(sha256 .*\) does not match the snapshot of dotm"):
        peer("dotm")
    assert tool.main(["dotm", str(planted), "--part", "kinetic"]) == 2
    assert "refusing to run it" in capsys.readouterr().err and not marker.exists()
    monkeypatch.delenv("SDEFORMER_PEERS")
    with pytest.raises(pytest.skip.Exception, match="SDEFORMER_PEERS is not set"):
        peer("dotm")  # no default folder
    from benchmarks import _peers as bench  # the peers benchmark: the same check before it reads any copy

    with pytest.raises(ConfigError, match=r"kinetic.py \(sha256 .*\) does not match the snapshot of dotm"):
        bench.verified(tmp_path / "peers")
    assert not marker.exists()


def test_the_snapshot_hashes_are_recorded_for_every_script_run():
    recorded = snapshot_hashes()
    for (name, _), script in SCRIPTS.items():
        assert len(recorded[name][script]) == 64, (name, script)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def child(marker: str, new_session: bool = False) -> str:
    """A script that starts a 60 s child carrying ``marker`` in its command line (found by ``_marked``: inside the
    harness's pid namespace the child's own pid is not the machine's), in a session of its own with ``new_session``."""
    code = "import time; time.sleep(60)"
    return (
        f"import subprocess, sys\nc = subprocess.Popen([sys.executable, '-c', {code!r}, {marker!r}], "
        f"start_new_session={new_session})\nopen('child.started', 'w').write('1')\n"
    )


def _marked(marker: str) -> bool:
    """True while a process whose command line holds ``marker`` runs (not a zombie) on this machine."""
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if marker.encode() in (proc / "cmdline").read_bytes() and _alive(int(proc.name)):
                return True
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return False


def _marked_gone(marker: str) -> bool:
    for _ in range(50):
        if not _marked(marker):
            return True
        time.sleep(0.1)
    return False


def test_a_child_the_script_starts_ends_with_it(tmp_path):
    marker = f"w41-child-{os.getpid()}-{time.monotonic_ns()}"
    scratch = shim_run(tmp_path, child(marker))  # the script exits at once, its child would sleep 60 s
    assert (scratch / "child.started").exists() and _marked_gone(marker)


def test_a_child_that_leaves_the_group_ends_with_the_script_when_contained(tmp_path):
    """setsid: out of the process group the harness kills, but inside the pid namespace the kernel ends whole."""
    from peer_harness import contain

    if not contain.available():
        pytest.skip("no unprivileged user namespaces here: a setsid child is not reached (docs/peers.md)")
    marker = f"w41-setsid-{os.getpid()}-{time.monotonic_ns()}"
    scratch = shim_run(tmp_path, child(marker, new_session=True))
    assert (scratch / "child.started").exists() and _marked_gone(marker)


def test_a_script_past_its_time_limit_is_stopped_with_its_children(tmp_path):
    folder, scratch = tmp_path / "peer", tmp_path / "scratch"
    folder.mkdir()
    scratch.mkdir()
    marker = f"w41-limit-{os.getpid()}-{time.monotonic_ns()}"
    (folder / "fake.py").write_text(child(marker) + "import time\ntime.sleep(60)\n")
    with pytest.raises(ConfigError, match="invalid timeout=8.0: fake.py ran past it"):  # not its 60 s sleep's end
        run_script(folder, Job({"script": "fake.py"}, ()), scratch, timeout=8.0)  # 8 s: start-up at load 14
    assert (scratch / "child.started").exists() and _marked_gone(marker)


def peer(name: str) -> Path:
    """``$SDEFORMER_PEERS/NAME``, its files checked against the snapshot's hashes; skipped without the variable
    (never a default folder) or the copy."""
    root = os.environ.get("SDEFORMER_PEERS")
    if not root:
        pytest.skip("SDEFORMER_PEERS is not set (the folder of the peers' snapshots, docs/peers.md)")
    folder = Path(root) / name
    if not folder.is_dir():
        pytest.skip(f"no copy of {name}'s code in {folder}")
    verify(name, folder)
    return folder


SMALL = {"batch": 4, "tokens": 8, "betas": 5, "betamin": 1.0, "betamax": 5.0, "maxtime": 20.0}


def equal_cells(name: str, **options) -> tuple[int, int]:
    c = tool.run_peer(name, peer(name), **options)["compare"]
    return c["equal"], c["total"]


def test_simuformer_runner(one_thread):
    assert equal_cells("simuformer", norm="postln", heads=1, dim=4, checkpoints=21, **SMALL) == (105, 105)


def test_glpr_phase_diagrams_with_its_cuda_strings(one_thread):
    assert equal_cells("glpr", use_softmax=True, dim=3, random_kq=1, random_v=1, **SMALL) == (1000, 1000)


def test_litm_threshold_curve_through_the_command(capsys):
    assert tool.main(["litm", str(peer("litm"))]) == 0
    assert "cells equal: 96 / 96" in capsys.readouterr().out


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


PLANTED = """
import sys
from pathlib import Path
open("inside.txt", "w").write("the scratch copy is writable")
for target in sys.argv[1:]:
    try:
        Path(target).write_text("planted")
    except OSError as exc:
        print(f"refused {target}: {exc.strerror}")
"""


def _planted(tmp_path: Path) -> tuple[Path, list[Path], Path]:
    """A planted script in a private folder that tries to write beside its DIR, into DIR and into the home."""
    private = tmp_path / "private"
    folder, scratch = private / "peer", private / "scratch"
    folder.mkdir(parents=True)
    scratch.mkdir()
    (folder / "planted.py").write_text(PLANTED)
    return folder, [private / "marker-beside", folder / "marker-in-dir"], scratch


def test_a_planted_script_cannot_write_outside_its_scratch_copy(tmp_path):
    """Where user namespaces work: every write outside the scratch copy fails ("Read-only file system"), the
    markers stay absent, the scratch copy is written; HOME and TMPDIR are in it. Wrong models it fails: the script
    run as the user (the markers appear), the scratch read-only too, HOME left at the user's."""
    from peer_harness import contain

    if not contain.available():
        pytest.skip("no unprivileged user namespaces here (the fallback is tested below)")
    folder, markers, scratch = _planted(tmp_path)
    spec = {"script": "planted.py", "argv": [str(m) for m in markers]}
    run_script(folder, Job(spec, ()), scratch)
    assert not any(m.exists() for m in markers)
    out = (scratch / "stdout.txt").read_text()
    assert out.count("Read-only file system") == 2, out
    assert (scratch / "inside.txt").exists()


def test_without_namespaces_a_write_outside_is_detected_and_refused(tmp_path, monkeypatch):
    """The fallback: the script runs as the user, its write into DIR is named after the run, in one line."""
    from peer_harness import contain

    monkeypatch.setattr(contain, "available", lambda: False)
    folder, markers, scratch = _planted(tmp_path)
    with pytest.raises(ConfigError, match=r"planted.py wrote outside its scratch copy: .*marker-in-dir"):
        run_script(folder, Job({"script": "planted.py", "argv": [str(markers[1])]}, ()), scratch)
    assert (scratch / "home").is_dir() and (scratch / "tmp").is_dir()  # HOME and TMPDIR in the scratch copy
