"""`sdeformer reproduce`: the registered experiments (``experiments._registry``) in one self-contained report.

It runs the experiments of a group or the one named, in registration order, each with its stage line and its
progress bar or, for one that counts no units, a ``still running`` line every 10 s (``io._progress``); their
``steps`` functions compute, draw and return the sections. It writes ``index.html`` and ends with one line
naming it: the wall time there is the report header's, one number per run.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from ..io._claims import claim_run_folder
from ..io._lock import folder_lock
from ..io._progress import clock_start, keep_alive, progress_bar, stage as _stage
from ..io._report import Section, write_report
from ..observables import FIGURE_CLUSTER_COS
from ._parts import parts_section
from ._registry import EXPERIMENTS, Context


def _progress(name: str, units: int, show: bool) -> Any:
    """The progress of one experiment: its bar when it counts units, else ``still running`` lines every 10 s
    (its stage lines shown); nothing when not shown."""
    if show and units == 0:
        return _alive(name)
    return progress_bar(units, name, enabled=show and units > 0)


@contextmanager
def _alive(name: str) -> Iterator[Callable[[int], None]]:
    with keep_alive(name):
        yield lambda n=1: None


def reproduce(
    part: str,
    out: Path,
    seed: int = 0,
    quick: bool = False,
    show_progress: bool = True,
    executor: Any = None,
    force: bool = False,
    settings: dict[str, Any] | None = None,
    started: float | None = None,
) -> Path:
    """Run ``part`` (a group of ``EXPERIMENTS``: all, paper, report; or one experiment's name) into ``out``;
    returns the path of index.html.

    ``out`` belongs to one seed (``io._claims.claim_run_folder``): another seed's folder is refused unless ``force``.
    ``executor`` (a ``sweeps`` executor) runs the grid's and the theorem checks' jobs; default: this process.
    ``settings``: declared settings of the one experiment ``part`` names (``Experiment.settings``); the folder
    belongs to them too. ``started``: the ``time.perf_counter()`` the wall time counts from (the command line
    passes its process start, the clock of the stage lines; default: this call's start). The wall time is
    printed once, the same in the report's header and the closing line."""
    chosen = EXPERIMENTS.select(part)  # ConfigError for an unknown name
    given = EXPERIMENTS[part].settings(settings) if settings else {}  # ConfigError for a group or a bad setting
    units = {e.name: e.progress_units(seed, quick, given) for e in chosen}  # sizes checked before any folder
    out = Path(out)
    claim = {"command": "reproduce", "seed": seed, **({"settings": given} if given else {})}
    with folder_lock(out, "reproduce"):  # one writer at a time
        claim_run_folder(out, claim, force=force, marker_name="reproduce.json")
        return _run(chosen, part, out, seed, quick, show_progress, executor, given, units, started)


def _run(chosen, part, out, seed, quick, show_progress, executor, given, units, started) -> Path:
    started = time.perf_counter() if started is None else started
    sections: list[Section] = []
    stage = _stage if show_progress else (lambda _text: None)  # one line per stage on stderr
    for experiment in chosen:
        stage(experiment.stage)
        with _progress(experiment.name, units[experiment.name], show_progress) as advance:
            ctx = Context(out, seed, quick, executor, advance, stage, part, given)
            sections += experiment.run(ctx)
    stage(f"writing {out / 'index.html'}")
    wall = time.perf_counter() - started
    meta = (
        f"sdeformer reproduce {part}; seed {seed}; torch {torch.__version__}; {platform.machine()} "
        f"{platform.system()}, {torch.get_num_threads()} threads; wall time {wall:.1f} s "
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
    family = parts_section()  # every registered part, generated from the registries
    path = write_report(out, "sdeformer: reproduction of the paper", [intro, *sections, family], meta)
    if show_progress:  # the closing line: the header's wall time; stamped when it was taken (the same number for
        _stage(f"report written to {path} in {wall:.1f} s", at=started + wall - clock_start())  # the command line)
    return path
