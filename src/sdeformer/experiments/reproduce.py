"""`sdeformer reproduce`: Table 1, Figure 1 and Figures 2-6 in one self-contained report (THEORY section 6).

The orchestrating layer of the report: it runs the experiments (which compute and write their data), has
``sdeformer.plots`` draw their results (the one module of ``experiments`` that imports ``plots``; the grid's
figures are drawn on the executor, one per call) and writes ``index.html``.
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
from ..plots import paper
from . import figure1, grid, table1
from .parts import parts_section

PARTS = ("table1", "figure1", "grid", "theorems")
# names for several parts; "report" (make report) adds the SPDE density solver's checks at their quick size
GROUPS = {"all": PARTS, "paper": ("table1", "figure1", "grid"), "report": (*PARTS, "spde")}


def _work_units(parts: tuple[str, ...], seed: int) -> int:
    """Progress units (setting x layer) of the simulated parts."""
    units = 0
    if "figure1" in parts:
        units += sum(c.layers for c in figure1.figure1_configs(seed).values())
    if "grid" in parts:
        units += sum(c.layers for choice in grid.MLP_CHOICES for c in grid.grid_configs(choice, seed))
    return units


def _grid(out: Path, seed: int, progress: Any, executor: Any) -> list[grid.GridResult]:
    """Figures 2-6: the grid's results, then one figure per MLP choice drawn on ``executor`` (default: here)."""
    from ..sweeps import LocalExecutor

    executor = executor or LocalExecutor(threads=None)
    results = grid.run_and_write(out, seed, progress=progress, executor=executor)
    _stage(f"Figures 2-{len(results) + 1}: drawing {len(results)} figures of 18 panels")
    list(executor.map_calls(paper.grid_figure, [(r, (out / r.figure).resolve()) for r in results]))
    return results


def _in_folder(sections: list[Section], folder: str) -> list[Section]:
    """The sections with their figure paths made relative to the report folder (the figures live in ``folder``)."""
    for section in sections:
        for fig in section.figures:
            fig.path = Path(folder) / fig.path
    return sections


def reproduce(
    part: str,
    out: Path,
    seed: int = 0,
    quick: bool = False,
    show_progress: bool = True,
    executor: Any = None,
    force: bool = False,
) -> Path:
    """Run ``part`` (a name of GROUPS, one of PARTS, 'spde', 'beyond' or 'architectures') into ``out``; returns
    the path of index.html.

    ``out`` belongs to one seed (``store.claim_run_folder``): another seed's folder is refused unless ``force``.
    ``executor`` (a ``sweeps`` executor) runs the grid's and the theorem checks' jobs; default: this process."""
    parts = GROUPS.get(part, (part,))
    out = Path(out)
    claim_run_folder(out, {"command": "reproduce", "seed": seed}, force=force, marker_name="reproduce.json")
    started = time.perf_counter()
    sections: list[Section] = []
    stage = _stage if show_progress else (lambda _text: None)  # one line per stage on stderr
    with progress_bar(_work_units(parts, seed), "part 1: the paper", enabled=show_progress) as advance:
        if "table1" in parts:
            stage("Table 1: kernel constants")
            sections.append(table1.section(table1.run_and_write(out)))
        if "figure1" in parts:
            stage("Figure 1: relu and tanh, 2000 layers each (or their cached parts)")
            first = figure1.run_and_write(out, seed, progress=advance, executor=executor)
            paper.figure1(first, out / figure1.FIGURE)
            sections.append(figure1.section(first))
        if "grid" in parts:
            sections += grid.sections(_grid(out, seed, advance, executor))
    if "theorems" in parts:
        from ..plots.checks import theorem_figures
        from . import theorems

        stage("part 2: theorem checks")
        with progress_bar(theorems.UNITS, "part 2: the theorems", enabled=show_progress) as advance:
            results = theorems.run(out / "theorems", quick=quick, progress=advance, executor=executor)
        theorem_figures(results, out / "theorems")
        sections += _in_folder(theorems.sections(results), "theorems")
    if "spde" in parts:  # the SPDE solved as a density (docs/spde.md); full size only as `reproduce spde`
        from ..plots.spde import report_figures
        from . import spde

        stage("the SPDE as a density: solver checks against the linear theory and the particles")
        solved = spde.run_and_write(out / "spde", quick=quick or part != "spde", seed=seed)
        report_figures(solved, out / "spde")
        sections += _in_folder(spde.sections(solved), "spde")
    if "architectures" in parts:  # report part 4 (not in "all": several minutes; --quick: about 30 s)
        from ..plots.architectures import architecture_figures
        from . import architectures

        stage("part 4: the architectures people build (normalization, ALiBi, graph masks, two species)")
        built = architectures.run(out / "architectures", quick=quick, seed=seed)
        architecture_figures(built, out / "architectures")
        sections += architectures.sections(built, "architectures")
    if "beyond" in parts:  # report part 3 (not in "all": about 5 minutes)
        from .beyond import report as beyond

        stage("part 3: beyond the paper")
        sections += beyond.sections(beyond.run(out, quick=quick, seed=seed))
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
