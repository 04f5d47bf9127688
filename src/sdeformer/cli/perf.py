"""``sdeformer bench``: the performance benchmarks of :mod:`sdeformer.experiments.bench`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table as RichTable

from ..experiments.bench import PARTS, run_benchmarks, summary_rows
from .common import app, cli_errors, emit_json, progress_bar


@app.command()
@cli_errors
def bench(
    json: bool = typer.Option(False, "--json", help="print one JSON object (all results) on stdout"),
    quick: bool = typer.Option(False, "--quick", help="small sizes (about 30 s); results go to *_quick.json"),
    only: str = typer.Option(",".join(PARTS), help=f"comma-separated parts among {', '.join(PARTS)}"),
    out: Path = typer.Option(Path("benchmarks/results"), help="folder for <part>.json"),
    threads: Optional[int] = typer.Option(None, help="torch CPU threads (1 avoids oversubscription on a busy machine)"),
    device: str = typer.Option("cpu", help="torch device, e.g. cpu or cuda"),
) -> None:
    """Benchmark the engine against straightforward baselines, torchsde and this machine's floor, in one run.

    Parts: grid (Figures 2-6 grid: batched engine vs per-setting loop vs sampling+matmul floor), sde (limit
    SDE vs torchsde, unbatched and batch of 32), attention (full, memory-efficient, random-batch at N up to
    65,536), throughput (discrete model at N = 16,384), precision (bf16 MLP effect on energies).
    """
    parts = tuple(p.strip() for p in only.split(",") if p.strip())
    with progress_bar(len(parts), "benchmarks") as advance:
        results = run_benchmarks(parts, quick=quick, out=out, device=device, threads=threads,
                                 on_part=lambda _part: advance())
    if json:
        emit_json(results)
        return
    table = RichTable(title=f"sdeformer bench ({results['machine']['cpu']}, {results['machine']['torch_threads']} "
                            f"threads{', quick' if quick else ''})")
    for col in ("measurement", "value", "target"):
        table.add_column(col)
    for row in summary_rows(results):
        table.add_row(*row)
    Console().print(table)
    Console().print(f"results written to {out}/")
