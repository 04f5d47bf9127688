"""`sdeformer reproduce`: the registered experiments (``experiments._registry``) in one self-contained report.

It runs the experiments of a group or the one named, in registration order, each with its stage line and its
progress bar or, for one that counts no units, a ``still running`` line every 10 s (``io._progress``); their
``steps`` functions compute, draw and return the sections. Given an executor (``--executor dask``), two or more
built-in experiments that do not spread jobs over it themselves (``_steps.spreads_jobs``: Figure 1, the grid, the
theorem checks) go to its workers whole, several at once, before the others run in the driver; the sections keep
registration order. It writes ``index.html`` and ends with one line naming it: the wall time there is the
report header's, one number per run.
"""

from __future__ import annotations

import importlib
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import torch

from ..io._claims import claim_run_folder
from ..io._lock import folder_lock
from ..io._progress import clock_start, keep_alive, progress_bar, stage as _stage
from ..io._report import Section, write_report
from ..observables import FIGURE_CLUSTER_COS
from ._parts import parts_section
from ._registry import EXPERIMENTS, Context, Experiment


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
    ``executor`` (a ``sweeps`` executor) runs the grid's and the theorem checks' jobs and, two or more at once,
    the chosen experiments that spread no jobs themselves (module docstring); default: this process.
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


def _spreads_jobs(experiment: Experiment) -> bool:
    """Whether the experiment runs where ``reproduce`` is: a plugin's (its function is not importable on a worker)
    or one that spreads its own jobs over the executor (``_steps.spreads_jobs``)."""
    if not isinstance(experiment.target, str):
        return True
    module, _, attr = experiment.target.partition(":")
    return bool(getattr(getattr(importlib.import_module(module), attr), "spreads_jobs", False))


def _on_worker(name: str, index: int, out: str, seed: int, quick: bool, part: str, given: dict) -> tuple:
    """(index, sections, seconds) of one experiment computed whole on a worker (its stages stay silent there)."""
    started = time.perf_counter()
    sections = EXPERIMENTS[name].run(Context(Path(out), seed, quick, None, requested=part, settings=given))
    return index, sections, time.perf_counter() - started


def _run_on_workers(executor, chosen, indices, out, seed, quick, part, given, stage, show) -> dict[int, list]:
    """The sections of ``chosen[i]`` for ``i`` in ``indices``, computed on the executor's workers at once."""
    stage(f"on the workers, whole and several at once: {', '.join(chosen[i].name for i in indices)}")
    calls = [(chosen[i].name, i, str(out), seed, quick, part, given) for i in indices]
    found: dict[int, list] = {}
    with keep_alive("workers") if show else nullcontext():
        for index, sections, seconds in executor.map_calls(_on_worker, calls):
            found[index] = sections
            stage(f"{chosen[index].name}: done on a worker in {seconds:.1f} s")
    return found


def _run(chosen, part, out, seed, quick, show_progress, executor, given, units, started) -> Path:
    started = time.perf_counter() if started is None else started
    stage = _stage if show_progress else (lambda _text: None)  # one line per stage on stderr
    remote = [i for i, e in enumerate(chosen) if executor is not None and not _spreads_jobs(e)]
    found = {}
    if len(remote) > 1:  # one experiment alone gains nothing on a one-thread worker
        found = _run_on_workers(executor, chosen, remote, out, seed, quick, part, given, stage, show_progress)
    for index, experiment in enumerate(chosen):
        if index in found:
            continue
        stage(experiment.stage)
        with _progress(experiment.name, units[experiment.name], show_progress) as advance:
            ctx = Context(out, seed, quick, executor, advance, stage, part, given)
            found[index] = experiment.run(ctx)
    sections: list[Section] = [s for index in range(len(chosen)) for s in found[index]]
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
