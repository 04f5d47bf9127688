"""The runs of a peer's own script that reproduce the preset at its options (docs/peers.md, "Running the peer's
own script"): per peer, the shim's spec (``peer_harness/shim.py``: it seeds torch, moves GLPR's hard-coded 'cuda'
to the CPU, stubs unused imports, skips the figures and saves the arrays the comparison reads) and the files the
comparison reads. ``peer_harness/process.py`` runs them; ``tools/run_peer.py`` is the command.

What the script runs is what the preset's options say, as the peer's own options (the same mapping as
docs/peers.md): simuformer's and GLPR's sizes, grids and modes (one ``beta`` as a grid of one); dotm's
``kinetic.py`` to its movie section and its beta (a module-level name of the script); ``staircase.py``'s
``max_iter`` (``max_iter``; the script has no option for it); the notebook's PDE cells for each beta (5, 7),
its ``PDESimulation`` called with the preset's ``points`` and T. Not reachable: litm's particle beta (a local of
its ``main``), the notebook's own seed, the particles of bruno (no table).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sdeformer.core._errors import ConfigError
from sdeformer.core._validate import positive_int
from sdeformer.peers._bruno_pde import BETAS as BRUNO_BETAS
from sdeformer.peers._simuformer import TORCH_SEED

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
    """One run of the peer's script: the shim's spec (``shim.py``) and the files the comparison reads, each a
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
        raise ConfigError("beta", list(beta), "one beta with run_peer.py (the script sweeps --betamin..--betamax)")
    if (name, part) == ("litm", "particles") and beta is not None and float(np.atleast_1d(beta)[0]) != 1.0:
        raise ConfigError("beta", beta, "1 with tools/run_peer.py (the script's main fixes its beta)")
    if name == "bruno" and (part != "pde" or not options.get("as_published")):
        raise ConfigError(
            "DIR", str(folder), "bruno's notebook writes a table for its PDE only: --part pde --as-published"
        )
    if name == "bruno" and not set(np.atleast_1d(beta if beta is not None else BRUNO_BETAS)) <= set(BRUNO_BETAS):
        raise ConfigError("beta", beta, f"the notebook's PDE cells' betas {list(BRUNO_BETAS)} with tools/run_peer.py")
    if name == "bruno" and options.get("seed", 0) != 0:
        raise ConfigError("seed", options["seed"], "0 with tools/run_peer.py (the notebook's cells seed torch with 0)")
    script = SCRIPTS.get((name, part))
    if script is not None and not (folder / script).is_file():
        raise ConfigError("DIR", str(folder), f"a copy of {name}'s code with its {script} (none there)")


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
