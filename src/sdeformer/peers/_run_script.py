"""``run_peer(name, folder, **options)``: the peer's own script, unchanged, run from the user's copy of its code,
and the preset at the same options, compared as ``compare`` compares them (docs/peers.md, "Running the peer's
own script").

Each run of the script is a subprocess (``sys.executable``) under ``peers._shim``, which seeds torch, moves
GLPR's hard-coded 'cuda' to the CPU, stubs unused imports, skips the figures and saves the arrays the comparison
reads (its spec, built here per peer from the preset's options). It runs in a scratch folder holding a copy of the
folder's top-level ``.py`` and ``.ipynb`` files: the scripts write next to themselves (litm) or into the working
folder (the others, simuformer skipping a run whose result file already exists), so the user's folder is never
written and every file read is this run's; the scratch folder is removed afterwards.

What the script runs is what the preset's options say, as the peer's own options (the same mapping as
docs/peers.md): simuformer's and GLPR's sizes, grids and modes (one ``beta`` as a grid of one); dotm's
``kinetic.py`` to its movie section and its beta (a module-level name of the script); ``staircase.py``'s
``max_iter`` (``max_iter``; the script has no option for it); the notebook's PDE cells for each beta (5, 7),
its ``PDESimulation`` called with the preset's ``points`` and T. Not reachable: litm's particle beta (a local of
its ``main``), the notebook's own seed, the particles of bruno (no table).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core._errors import ConfigError
from ..core._validate import positive_int
from . import compare, module, run
from ._bruno_pde import BETAS as BRUNO_BETAS
from ._simuformer import TORCH_SEED

SHIM = Path(__file__).with_name("_shim.py")
PHASE_FLAGS = {  # the preset's settings -> the phase-diagram scripts' options (booleans: --name)
    "random_kq": "--randomKQ",
    "random_v": "--randomV",
    "noanneal": "--noanneal",
    "batch": "--batch",
    "tokens": "--ntokens",
    "dim": "--dmodel",
    "betas": "--betas",
    "betamin": "--betamin",
    "betamax": "--betamax",
    "maxtime": "--maxtime",
    "step": "--step",
}
SIMUFORMER_FLAGS = {**PHASE_FLAGS, "norm": "--norm", "heads": "--n_heads", "checkpoints": "--n_time_ckpts"}
GLPR_FLAGS = {**PHASE_FLAGS, "regen_period": "--regen_period"}
NOTEBOOK_PDE = r"class PDESimulation\b"  # the notebook's cell that defines its PDE solver


SCRIPTS = {  # (peer, part) -> the script that runs it, in the peer's folder
    ("simuformer", None): "runner.py",
    ("glpr", None): "phase-diagrams.py",
    ("dotm", "staircase"): "staircase.py",
    ("dotm", "kinetic"): "kinetic.py",
    ("litm", "threshold"): "generate_u_shape_numerology_data.py",
    ("litm", "particles"): "generate_alibi_particle_circle_dynamics.py",
    ("bruno", "pde"): "experiments.ipynb",
}
DEFAULT_PART = {"dotm": "staircase", "litm": "threshold", "bruno": "particles"}
LITM_OUTPUTS = {
    "threshold": "u_shape_numerology_lambda1_tcrit.dat",
    "particles": "alibi_particle_circle_clusters_dynamics.npz",
}


@dataclass(frozen=True)
class Job:
    """One run of the peer's script: the shim's spec (``peers._shim``) and the files the comparison reads, each a
    pattern in the scratch folder (or "stdout", its printed output) with the part of our result it is compared
    with."""

    spec: dict
    outputs: tuple[tuple[str, dict], ...]
    note: str = ""  # what the spec does not say in words (a notebook's cells)


def check(name: str, folder: Path, options: dict, max_iter=None) -> None:
    """Before anything runs: ConfigError for what the peer's script cannot run at ``options``, and for a
    ``folder`` without the script (a part the preset refuses is left to the preset)."""
    part = options.get("part", DEFAULT_PART.get(name))
    beta = options.get("beta")
    if max_iter is not None and (name, part) != ("dotm", "staircase"):
        raise ConfigError("max_iter", max_iter, "an option of dotm's staircase.py only")
    if max_iter is not None:
        positive_int("max_iter", max_iter)
    if name in ("simuformer", "glpr") and beta is not None and len(beta) != 1:
        raise ConfigError("beta", list(beta), "one beta with --run-peer (the script sweeps --betamin..--betamax)")
    if (name, part) == ("litm", "particles") and beta is not None and float(np.atleast_1d(beta)[0]) != 1.0:
        raise ConfigError("beta", beta, "1 with --run-peer (the script's main fixes its beta)")
    if name == "bruno" and (part != "pde" or not options.get("as_published")):
        raise ConfigError(
            "--run-peer", str(folder), "bruno's notebook writes a table for its PDE only: --part pde --as-published"
        )
    if name == "bruno" and not set(np.atleast_1d(beta if beta is not None else BRUNO_BETAS)) <= set(BRUNO_BETAS):
        raise ConfigError("beta", beta, f"the notebook's PDE cells' betas {list(BRUNO_BETAS)} with --run-peer")
    if name == "bruno" and options.get("seed", 0) != 0:
        raise ConfigError("seed", options["seed"], "0 with --run-peer (the notebook's cells seed torch with 0)")
    script = SCRIPTS.get((name, part))
    if script is not None and not (folder / script).is_file():
        raise ConfigError("--run-peer", str(folder), f"a copy of {name}'s code with its {script} (none there)")


def _argv(s: dict, flags: dict) -> list[str]:
    """The script's command line for the preset's settings ``s``: every setting explicit (floats by repr)."""
    argv: list[str] = []
    for key, value in s.items():
        if isinstance(value, bool):
            argv += [f"--{key}"] if value else []
        else:
            argv += [flags[key], repr(value) if isinstance(value, float) else str(value)]
    return argv


def _phase_jobs(name: str, result: dict, options: dict) -> list[Job]:
    s, beta = result["settings"], options.get("beta")
    if beta is not None:  # one beta: the script's grid of one
        s = {**s, "betas": 1, "betamin": float(beta[0]), "betamax": float(beta[0])}
    spec = {"seed": options.get("seed", TORCH_SEED)}
    if name == "glpr":  # its pickle, named by the time and a random salt, in the working folder
        spec |= {"script": SCRIPTS[name, None], "argv": [*_argv(s, GLPR_FLAGS), "--disable_tqdm"], "cuda_to_cpu": True}
        return [Job(spec, (("ds_*.pkl", result),))]
    argv = [*_argv(s, SIMUFORMER_FLAGS), "--no_plot", "--disable_tqdm", "--outdir", "out"]
    printed = (("stdout", result),) if s["analyze_evecs"] else ()  # its eigenvector cosines are printed only
    return [Job({**spec, "script": SCRIPTS[name, None], "argv": argv}, (("out/*.pkl", result), *printed))]


def _dotm_job(result: dict, options: dict, max_iter) -> Job:
    stubs = ["imageio", "seaborn", "networkx"]  # imported by the scripts, unused by what they compute
    if result["part"] == "kinetic":
        beta = options.get("beta")
        spec = {"script": "kinetic.py", "stubs": stubs, "stop_at": "movie = True", "save": {"z": "z.npy"}}
        spec |= {"set": {"beta": float(np.atleast_1d(beta)[0])}} if beta is not None else {}
        return Job(spec, (("z.npy", result),))
    spec = {"script": "staircase.py", "stubs": stubs}
    spec |= {"set": {"max_iter": max_iter}} if max_iter is not None else {}
    return Job(spec, (("stdout", result),))


def _bruno_jobs(result: dict) -> list[Job]:
    jobs = []
    for r in result["runs"]:
        cells = [NOTEBOOK_PDE, rf"PDESimulation\((?s:.)*?\bbeta\s*=\s*{r['beta']:g}\b"]
        calls = {"PDESimulation": {"n_points": result["n_points"], "T": r["maxtime"]}}
        table = f"U_beta{r['beta']:g}.npy"
        spec = {"script": SCRIPTS["bruno", "pde"], "cells": cells, "calls": calls, "save": {"results": table}}
        jobs.append(Job(spec, ((table, {**result, "runs": [r]}),), f"(its cell for beta = {r['beta']:g})"))
    return jobs


def jobs(name: str, result: dict, options: dict, max_iter=None) -> list[Job]:
    """The runs of the peer's script that give the files to compare with ``result`` (the preset's at
    ``options``)."""
    if name in ("simuformer", "glpr"):
        return _phase_jobs(name, result, options)
    if name == "dotm":
        return [_dotm_job(result, options, max_iter)]
    if name == "bruno":
        return _bruno_jobs(result)
    part = result.get("part", "threshold")  # litm: its scripts write next to themselves
    return [Job({"script": SCRIPTS["litm", part]}, ((LITM_OUTPUTS[part], result),))]


def described(job: Job) -> str:
    """The run as one line: the seed, the script and its arguments, and what the shim sets in it."""
    spec = job.spec
    words = [f"torch.manual_seed({spec['seed']});"] if spec.get("seed") is not None else []
    words += [spec["script"], *spec.get("argv", [])]
    words += [f"up to {spec['stop_at']!r}"] if spec.get("stop_at") else []
    words += [f"with {k} = {v!r}" for k, v in spec.get("set", {}).items()]
    for call, keywords in spec.get("calls", {}).items():
        words.append(f"with {call}({', '.join(f'{k}={v!r}' for k, v in keywords.items())})")
    return " ".join([*words, job.note] if job.note else words)


def run_script(folder: Path, job: Job, scratch: Path) -> float:
    """Run ``job``'s script from a copy of ``folder``'s top-level .py and .ipynb files in ``scratch``; its wall
    seconds. ConfigError with its exit code and the last line of its stderr when it fails."""
    for path in folder.iterdir():
        if path.is_file() and path.suffix in (".py", ".ipynb"):
            shutil.copyfile(path, scratch / path.name)
    (scratch / "shim.json").write_text(json.dumps(job.spec))
    env = {**os.environ, "MPLBACKEND": "Agg"}
    start = time.perf_counter()
    with open(scratch / "stdout.txt", "wb") as out, open(scratch / "stderr.txt", "wb") as err:
        code = subprocess.run([sys.executable, str(SHIM), "shim.json"], cwd=scratch, stdout=out, stderr=err, env=env)
    seconds = time.perf_counter() - start
    if code.returncode != 0:
        lines = [x for x in (scratch / "stderr.txt").read_text(errors="replace").splitlines() if x.strip()]
        last = lines[-1].strip() if lines else "(nothing on stderr)"
        raise ConfigError("--run-peer", str(folder), f"{job.spec['script']} exited with code {code.returncode}: {last}")
    return seconds


def _output(folder: Path, scratch: Path, job: Job, pattern: str) -> Path:
    found = [scratch / "stdout.txt"] if pattern == "stdout" else sorted(scratch.glob(pattern))
    if len(found) != 1:
        raise ConfigError("--run-peer", str(folder), f"{job.spec['script']} wrote {len(found)} files {pattern}, not 1")
    return found[0]


def run_peer(name: str, folder: Path, max_iter=None, **options) -> dict:
    """The preset's result at ``options`` (``run(name, ...)``), with ``compare``: its cells equal / total against
    the files the peer's script in ``folder`` writes when run at the same options (summed over the files, each
    also under ``files``), and ``peer_runs``: each run (``described``) and its wall seconds."""
    folder = Path(folder)
    module(name)  # the name checked before the folder
    if not folder.is_dir():
        raise ConfigError("--run-peer", str(folder), f"a folder with a copy of {name}'s code (not a folder)")
    options = {k: v for k, v in options.items() if v is not None}
    check(name, folder, options, max_iter)
    result = run(name, **options)  # a part the preset refuses raises here
    files, runs = [], []
    for job in jobs(name, result, options, max_iter):
        with tempfile.TemporaryDirectory(prefix=f"sdeformer-{name}-") as scratch:
            seconds = run_script(folder, job, Path(scratch))
            runs.append({"run": described(job), "seconds": seconds})
            for pattern, ours in job.outputs:
                path = _output(folder, Path(scratch), job, pattern)
                files.append({"file": path.name, **compare(name, ours, path)})
    total = {k: sum(f[k] for f in files) for k in ("equal", "total")}
    result["compare"] = {**total, "max_diff": max(f["max_diff"] for f in files), "files": files}
    result["peer_runs"] = runs
    return result
