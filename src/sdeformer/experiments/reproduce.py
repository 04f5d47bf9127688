"""`sdeformer reproduce`: the registered experiments (``experiments.registry``) in one self-contained report.

It runs the experiments of a group or the one named, in registration order, each with its stage line and its
progress bar (their ``steps`` functions compute, draw and return the sections), and writes ``index.html``.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path
from typing import Any

import torch

from ..io.progress import progress_bar
from ..io.progress import stage as _stage
from ..io.report import Section, write_report
from ..io.store import claim_run_folder
from ..observables import FIGURE_CLUSTER_COS
from .parts import parts_section
from .registry import EXPERIMENTS, Context


def reproduce(
    part: str,
    out: Path,
    seed: int = 0,
    quick: bool = False,
    show_progress: bool = True,
    executor: Any = None,
    force: bool = False,
    settings: dict[str, Any] | None = None,
) -> Path:
    """Run ``part`` (a group of ``EXPERIMENTS``: all, paper, report; or one experiment's name) into ``out``;
    returns the path of index.html.

    ``out`` belongs to one seed (``store.claim_run_folder``): another seed's folder is refused unless ``force``.
    ``executor`` (a ``sweeps`` executor) runs the grid's and the theorem checks' jobs; default: this process.
    ``settings``: declared settings of the one experiment ``part`` names (``Experiment.settings``); the folder
    belongs to them too."""
    chosen = EXPERIMENTS.select(part)  # ConfigError for an unknown name
    given = EXPERIMENTS[part].settings(settings) if settings else {}  # ConfigError for a group or a bad setting
    out = Path(out)
    claim = {"command": "reproduce", "seed": seed, **({"settings": given} if given else {})}
    claim_run_folder(out, claim, force=force, marker_name="reproduce.json")
    started = time.perf_counter()
    sections: list[Section] = []
    stage = _stage if show_progress else (lambda _text: None)  # one line per stage on stderr
    for experiment in chosen:
        stage(experiment.stage)
        units = experiment.units(seed, quick)
        with progress_bar(units, experiment.name, enabled=show_progress and units > 0) as advance:
            ctx = Context(out, seed, quick, executor, advance, stage, part, given)
            sections += experiment.run(ctx)
    meta = (
        f"sdeformer reproduce {part}; seed {seed}; torch {torch.__version__}; {platform.machine()} "
        f"{platform.system()}, {torch.get_num_threads()} threads; wall time {time.perf_counter() - started:.1f} s "
        "(cached parts are reused; delete the folder to recompute)."
    )
    intro = Section(
        "About this report",
        [
            "Reproduction of arXiv:2604.26898 (Agazzi, Bruno, Mosig Garcia, Saviozzi, Romito): the discrete stochastic "
            "transformer of THEORY section 1 with a fresh random MLP per layer shared by all tokens (common noise).",
            "Settings the paper leaves unstated, chosen here: MLP width m = 2048 for Figures 2-6; Q = K = sqrt(beta) I "
            f"with beta = 1 and V = s I; one run per panel with seed {seed}; initial tokens i.i.d. uniform on the "
            "sphere; bias stds sU = sW = sigma. Clusters are connected components of the graph "
            f"cos > {FIGURE_CLUSTER_COS}.",
        ],
    )
    stage(f"writing {out / 'index.html'}")
    family = parts_section()  # every registered part, generated from the registries
    return write_report(out, "sdeformer: reproduction of the paper", [intro, *sections, family], meta)
