"""``python -m benchmarks suite`` (``make bench``): the benchmark parts of ``benchmarks._run`` in one run, from a
checkout (the benchmarks are not in the wheel); the results go to ``benchmarks/results``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import typer
from rich.console import Console
from rich.table import Table as RichTable

from sdeformer.cli._common import cli_errors, emit_json, progress_bar

app = typer.Typer(add_completion=False, help="the benchmark suite (docs/benchmarks.md)")


def benchmark_runner() -> ModuleType:
    """``benchmarks._run`` (imported when the command runs: it imports torch and every benchmarked part)."""
    return importlib.import_module("benchmarks._run")


def claim_bench_folder(out: Path, parts: tuple[str, ...], device: str, threads: int | None, force: bool) -> Path:
    """Tie the results folder ``out`` to the options that determine every number written there (``device``
    and ``threads``; ``io._claims.claim_run_folder``), before any benchmark runs.

    Each part writes its own ``<part>[_quick].json``, so which parts (``--only``) and ``--quick`` do not
    conflict: running the other parts later fills the same folder. Another device or thread count would mix
    settings in one folder and is refused (ConfigError naming the folder) unless ``force``. A folder written
    before folders were claimed (no ``run.json``; only benchmark results, none recorded on another device, as
    the committed ``benchmarks/results``) is taken over. Results are read verified (``io._formats.read_json``:
    their sha256 in ``_checksums/``, written by ``bench._run``); a damaged one is moved to ``OUT/damaged/``
    (one line) and written again by this run."""
    from sdeformer.io._checksums import CHECKSUMS, Damaged
    from sdeformer.io._claims import RUN_MARKER, claim_run_folder
    from sdeformer.io._damage import DAMAGED, move_aside
    from sdeformer.io._formats import read_json

    config = {"command": "bench", "device": device, "threads": threads}
    names = {f"{part}{suffix}.json" for part in (*parts, "sweeps") for suffix in ("", "_quick")}

    def ours(path: Path) -> bool:
        if path.is_dir() and path.name in (CHECKSUMS, DAMAGED):  # the results' sha256 files, damaged ones kept
            return True
        if not path.is_file() or path.name not in names:
            return False
        try:
            recorded = read_json(path).get("machine", {}).get("device")
        except Damaged as damage:  # moved aside under OUT/damaged (one line); this run writes the part again
            move_aside(damage, out)
            return True
        except (OSError, ValueError, AttributeError):
            return False
        return recorded in (None, device)

    legacy = out.is_dir() and not (out / RUN_MARKER).exists() and all(ours(p) for p in sorted(out.iterdir()))
    claim_run_folder(out, config, force=force or legacy)
    return out


@app.command()
@cli_errors
def bench(
    json: bool = typer.Option(False, "--json", help="print one JSON object (all results) on stdout"),
    quick: bool = typer.Option(False, "--quick", help="small sizes (about 80 s of CPU); results go to *_quick.json"),
    only: str | None = typer.Option(
        None, help="comma-separated parts among grid, sde, attention, throughput, precision, rng [all]"
    ),
    out: Path = typer.Option(Path("benchmarks/results"), help="folder for <part>.json"),
    threads: int = typer.Option(1, help="torch CPU threads (default 1: more than the free cores oversubscribe them)"),
    device: str = typer.Option("cpu", help="torch device, e.g. cpu or cuda"),
    force: bool = typer.Option(
        False, "--force", help="write into --out even when it holds results of another --device or --threads"
    ),
) -> None:
    """Benchmark the engine against straightforward baselines, torchsde and this machine's floor, in one run.

    Parts: grid (Figures 2-6 grid: batched engine vs per-setting loop vs sampling+matmul floor), sde (limit
    SDE vs torchsde, unbatched and batch of 32), attention (full, memory-efficient, random-batch at N up to
    65,536), throughput (discrete model at N = 16,384), precision (bf16 MLP effect on energies); the rest in
    benchmarks/. Runs from a checkout. The --out folder is tied (run.json) to
    --device and --threads: results of other options there are refused (exit 2) unless --force; other parts and
    --quick add their own files.
    """
    from sdeformer.core._errors import ConfigError
    from sdeformer.core._validate import positive_int

    runner = benchmark_runner()
    parts = runner.PARTS if only is None else tuple(p.strip() for p in only.split(","))
    if not parts or any(p not in runner.PARTS for p in parts) or len(set(parts)) != len(parts):
        raise ConfigError("only", only, f"distinct comma-separated parts among {list(runner.PARTS)}")
    if threads is not None:
        positive_int("threads", threads)
    resolved = str(runner.check_device(device))
    # bad input, an unwritable folder and a folder of other options are refused before minutes of benchmarks
    claim_bench_folder(out, runner.PARTS, resolved, threads, force)
    with progress_bar(len(parts), "benchmarks") as advance:
        results = runner.run_benchmarks(
            parts, quick=quick, out=out, device=device, threads=threads, on_part=lambda _part: advance(1)
        )
    if json:
        emit_json(results)
        return
    table = RichTable(
        title=f"benchmark suite ({results['machine']['cpu']}, {results['machine']['torch_threads']} "
        f"threads{', quick' if quick else ''})"
    )
    for col in ("measurement", "value", "target"):
        table.add_column(col)
    for row in runner.summary_rows(results):
        table.add_row(*row)
    Console().print(table)
    Console().print(f"results written to {out}/")


if __name__ == "__main__":
    app()
