"""``sdeformer bench``: the performance benchmarks of the source checkout's ``benchmarks/`` package.

The benchmarks are not shipped in the wheel: the command finds them beside ``src/`` (the checkout this
package is installed from, editable) and stops with exit code 2 when they are absent.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import typer
from rich.console import Console
from rich.table import Table as RichTable

import sdeformer

from .common import app, cli_errors, emit_json, fail, progress_bar


def benchmark_runner() -> ModuleType:
    """``benchmarks.run`` of the source checkout (``<repo>/benchmarks``, the repo being two folders above the
    package); raises the CLI's exit 2 with one line when there is none (installed from a wheel)."""
    folder = Path(sdeformer.__file__).resolve().parents[2] / "benchmarks"
    init = folder / "__init__.py"
    if not init.is_file():
        raise fail(f"benchmarks need a source checkout: {folder} does not exist (the wheel does not ship them)")
    loaded = sys.modules.get("benchmarks")
    if loaded is None or Path(loaded.__file__ or "").resolve() != init:
        spec = importlib.util.spec_from_file_location("benchmarks", init, submodule_search_locations=[str(folder)])
        assert spec is not None and spec.loader is not None  # a .py file always has a spec and a loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["benchmarks"] = module
        spec.loader.exec_module(module)
    return importlib.import_module("benchmarks.run")


@app.command()
@cli_errors
def bench(
    json: bool = typer.Option(False, "--json", help="print one JSON object (all results) on stdout"),
    quick: bool = typer.Option(False, "--quick", help="small sizes (about 30 s); results go to *_quick.json"),
    only: str | None = typer.Option(
        None, help="comma-separated parts among grid, sde, attention, throughput, precision [all]"
    ),
    out: Path = typer.Option(Path("benchmarks/results"), help="folder for <part>.json"),
    threads: int | None = typer.Option(None, help="torch CPU threads (1 avoids oversubscription on a busy machine)"),
    device: str = typer.Option("cpu", help="torch device, e.g. cpu or cuda"),
) -> None:
    """Benchmark the engine against straightforward baselines, torchsde and this machine's floor, in one run.

    Parts: grid (Figures 2-6 grid: batched engine vs per-setting loop vs sampling+matmul floor), sde (limit
    SDE vs torchsde, unbatched and batch of 32), attention (full, memory-efficient, random-batch at N up to
    65,536), throughput (discrete model at N = 16,384), precision (bf16 MLP effect on energies). Needs a source
    checkout (the benchmarks/ folder).
    """
    from ..errors import ConfigError
    from ..store import ensure_writable
    from ..validate import positive_int

    runner = benchmark_runner()
    parts = runner.PARTS if only is None else tuple(p.strip() for p in only.split(","))
    if not parts or any(p not in runner.PARTS for p in parts) or len(set(parts)) != len(parts):
        raise ConfigError("only", only, f"distinct comma-separated parts among {list(runner.PARTS)}")
    if threads is not None:
        positive_int("threads", threads)
    runner.check_device(device)
    ensure_writable(out, "out")  # bad input and an unwritable folder are refused before minutes of benchmarks
    with progress_bar(len(parts), "benchmarks") as advance:
        results = runner.run_benchmarks(
            parts, quick=quick, out=out, device=device, threads=threads, on_part=lambda _part: advance(1)
        )
    if json:
        emit_json(results)
        return
    table = RichTable(
        title=f"sdeformer bench ({results['machine']['cpu']}, {results['machine']['torch_threads']} "
        f"threads{', quick' if quick else ''})"
    )
    for col in ("measurement", "value", "target"):
        table.add_column(col)
    for row in runner.summary_rows(results):
        table.add_row(*row)
    Console().print(table)
    Console().print(f"results written to {out}/")
