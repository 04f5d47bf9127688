"""`sdeformer reproduce`: Table 1, Figure 1 and Figures 2-6 in one self-contained report (THEORY section 6)."""

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
from . import figure1, grid, table1

PARTS = ("table1", "figure1", "grid", "theorems")
GROUPS = {"all": PARTS, "paper": ("table1", "figure1", "grid")}  # names for several parts


def _work_units(parts: tuple[str, ...], seed: int) -> int:
    """Progress units (setting x layer) of the simulated parts."""
    units = 0
    if "figure1" in parts:
        units += sum(c.layers for c in figure1.figure1_configs(seed).values())
    if "grid" in parts:
        units += sum(c.layers for choice in grid.MLP_CHOICES for c in grid.grid_configs(choice, seed))
    return units


def reproduce(
    part: str,
    out: Path,
    seed: int = 0,
    quick: bool = False,
    show_progress: bool = True,
    executor: Any = None,
    force: bool = False,
) -> Path:
    """Run ``part`` (a name of GROUPS, one of PARTS, or 'beyond') into ``out``; returns the path of index.html.

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
            sections.append(figure1.section(figure1.run_and_write(out, seed, progress=advance, executor=executor)))
        if "grid" in parts:
            sections += grid.sections(grid.run_and_write(out, seed, progress=advance, executor=executor))
    if "theorems" in parts:
        from .theorems import UNITS, theorem_sections

        stage("part 2: theorem checks")
        with progress_bar(UNITS, "part 2: the theorems", enabled=show_progress) as advance:
            checked = theorem_sections(out / "theorems", quick=quick, progress=advance, executor=executor)
        for section in checked:  # their figures live in out/theorems
            for fig in section.figures:
                fig.path = Path("theorems") / fig.path
        sections += checked
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
            "sphere; bias stds sU = sW = sigma. Clusters are connected components of the graph cos > 0.99.",
        ],
    )
    stage(f"writing {out / 'index.html'}")
    return write_report(out, "sdeformer: reproduction of the paper", [intro, *sections], meta)
