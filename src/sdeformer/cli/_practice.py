"""The practice commands: train, probe, infer-practice, report-practice (THEORY section 7)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table as RichTable

from ..core._errors import ConfigError
from ..params import params_of
from ._common import app, cli_errors, emit_json, json_option, progress_bar
from ._generate import declared_options, lazy_command

DEFAULT_RESULTS = Path("results/practice")


class PracticeTask(str, enum.Enum):
    charlm = "charlm"
    mnist = "mnist"


def _threads(threads: int | None) -> None:
    if threads is not None:
        import torch

        from ..core._validate import positive_int

        torch.set_num_threads(positive_int("threads", threads))


@app.command()
@cli_errors
def train(
    task: PracticeTask = typer.Option(..., help="charlm (Shakespeare characters) or mnist (small ViT)"),
    method: str = typer.Option(
        "all",
        help="'all' or a comma-separated list of: baseline, noise-0.1, noise-0.3, "
        "noise-1, neftune, stochdepth, energy+, energy-",
    ),
    steps: int | None = typer.Option(None, help="optimiser steps per run [300; quick: 20]"),
    seeds: int = typer.Option(3, help="seeds per method (0 .. K-1)"),
    quick: bool = typer.Option(False, "--quick", help="tiny model and data subset (seconds per run), for tests"),
    context: int | None = typer.Option(
        None, help="charlm: train at this context instead of 128 (same characters per step: batch 32*128/context)"
    ),
    out: Path | None = typer.Option(
        None,
        help="results folder: each (method, seed) run is saved when it "
        "finishes and reused on rerun; summary.json at the end",
    ),
    threads: int | None = typer.Option(1, help="torch CPU threads (these small models run fastest on 1)"),
    force: bool = typer.Option(
        False,
        "--force",
        help="train into OUT/TASK even when it is tied (run.json) to other settings (task, methods, seeds); "
        "the runs already saved for these settings are reused",
    ),
    json: bool = json_option(),
) -> None:
    """Train every method over seeds on a real task; report final metric mean +- std and steps to target.

    With --out, OUT/TASK is tied to the settings (run.json) before any run: the same settings resume, other
    settings are refused (exit 2) unless --force."""
    from ..core._validate import positive_int
    from ..io._formats import write_json
    from ..practice._methods import get_methods
    from ..practice._suite import claim_suite_folder, run_suite, summarize
    from ..practice._tasks import task_config
    from ._bounds import bound, train_bytes

    names = [n.strip() for n in method.split(",")]
    if method.strip() != "all" and (not all(names) or len(set(names)) != len(names)):
        raise ConfigError("method", method, "distinct comma-separated method names (or 'all'), none empty")
    positive_int("seeds", seeds)
    _threads(threads)
    cfg = task_config(task.value, steps, quick, context)
    bound("context", cfg.context, train_bytes(cfg))  # before the data loads or a folder is claimed
    methods = get_methods(method)
    if out is not None:
        claim_suite_folder(out, cfg, methods, seeds, force)  # before any run: resume, or refuse other settings
    with progress_bar(len(methods) * seeds * cfg.steps, f"train {task.value}", enabled=True) as advance:
        records = run_suite(cfg, methods, seeds, out, advance)
    summary = summarize(records)
    result = {
        "task": task.value,
        "quick": quick,
        "seeds": seeds,
        "config": cfg.to_dict(),
        "metric": records[0]["metric"],
        "methods": summary,
    }
    if out is not None:
        write_json(Path(out) / task.value / ("summary_quick.json" if quick else "summary.json"), result, checksum=True)
    if json:
        emit_json(result)
        return
    table = RichTable(title=f"{task.value}: {result['metric']} after {cfg.steps} steps, {seeds} seeds")
    for col in ("method", "mean", "std", "vs baseline", "steps to target", "reached", "last-layer cos", "s/run"):
        table.add_column(col, justify="right")
    for name, s in summary.items():
        delta = s["delta_vs_baseline"]
        stt = s["steps_to_target_mean"]
        table.add_row(
            name,
            f"{s['final_mean']:.4f}",
            f"{s['final_std']:.4f}",
            "" if delta is None else f"{delta:+.4f}",
            "-" if stt is None else f"{stt:.0f}",
            f"{s['reached_target']}/{s['seeds']}",
            f"{s['layer_cos_mean'][-1]:.3f}",
            f"{s['seconds_mean']:.1f}",
        )
    Console().print(table)


PROBE_DOC = "Probe all-MiniLM-L6-v2: per-layer mean token cosine, E_beta and clusters, without and with common noise."


def _probe_command() -> Callable:
    from ..practice._probe import ProbeNoise

    @cli_errors
    @declared_options("noise", params_of(ProbeNoise))  # --samples, --dt, --activation, --width, --bias-std, ...
    def probe(
        text: str | None = typer.Option(None, help="text to probe [a fixed 20-token sentence]"),
        file: Path | None = typer.Option(None, help="read the text from this file instead"),
        scales: list[float] = typer.Option([0.1, 0.3, 1.0, 3.0], "--scale", help="noise scales of the sweep (repeat)"),
        out: Path | None = typer.Option(
            None, help="also write the JSON record to this file (a record of other settings there is refused)"
        ),
        force: bool = typer.Option(False, "--force", help="overwrite --out holding a record of other settings"),
        json: bool = json_option(),
        noise: dict[str, Any] | None = None,
    ) -> None:
        _probe(text, file, scales, out, force, json, noise or {})

    probe.__doc__ = PROBE_DOC
    return probe


def _probe(text: str | None, file: Path | None, scales: list[float], out: Path | None, force: bool, json: bool,
           options: dict[str, Any]) -> None:  # fmt: skip
    from ..core._activations import get_activation
    from ..core._validate import finite_float, positive_float, positive_int, seed as check_seed
    from ..io._formats import write_json
    from ..practice._claims import claim_record
    from ..practice._probe import DEFAULT_TEXT, ProbeNoise, probe as run, probe_settings, record_settings
    from ._bounds import bound, probe_bytes

    if text is not None and file is not None:
        raise ConfigError("text", text, "give --text or --file, not both")
    o = ProbeNoise(**options)
    if not -1.0 < finite_float("threshold", o.threshold) < 1.0:
        raise ConfigError("threshold", o.threshold, "a cosine strictly between -1 and 1")
    check_seed("seed", o.seed)
    positive_float("dt", o.dt)  # the noise's settings, before the model loads
    positive_int("width", o.width)
    get_activation(o.activation)
    body = file.read_text(encoding="utf-8") if file is not None else (DEFAULT_TEXT if text is None else text)
    bound("samples/width", (o.samples, o.width), probe_bytes(len(body), positive_int("samples", o.samples), o.width))
    if out is not None:  # before the model loads: the file is tied to the settings its record keeps
        claim_record(out, probe_settings(body, scales, **options), record_settings, "probe", force=force)
    result = run(body, scales, **options)
    if out is not None:
        write_json(out, result, checksum=True)
    if json:
        emit_json(result)
        return
    th, nz = result["theory"], result["noise"]
    table = RichTable(
        title=f"all-MiniLM-L6-v2, {result['n_tokens']} tokens; noise {o.activation}, sU {nz['su']:g}, sW {nz['sw']:g}: "
        f"lambda_bar = {th['lambda_bar']:.4g}, synchronizes = {th['synchronizes']}"
    )
    table.add_column("layer")
    table.add_column("mean cos / E / clusters (clean)", justify="right")
    for row in result["noise_scales"]:
        table.add_column(f"scale {row['scale']:g}", justify="right")
    for i, name in enumerate(result["layers"]):
        cells = [f"{result['mean_cos'][i]:.3f} / {result['energy'][i]:.3f} / {result['clusters'][i]:g}"]
        cells += [
            f"{r['mean_cos'][i]:.3f} / {r['energy'][i]:.3f} / {r['clusters'][i]:.3g}" for r in result["noise_scales"]
        ]
        table.add_row(name, *cells)
    Console().print(table)


lazy_command("probe", PROBE_DOC, _probe_command)


@app.command("infer-practice")
@cli_errors
def infer_practice(
    results: Path | None = typer.Option(
        None,
        help="folder holding one trained character model "
        "(default results/practice; with --long: results/practice/long)",
    ),
    long: bool = typer.Option(
        False,
        "--long",
        help="the long-context model (trained with `sdeformer train --task "
        "charlm --context 1024 --out results/practice/long`)",
    ),
    batch_size: list[int] = typer.Option(
        [0, 16, 32, 64, 128, 256], "--p", help="random batch sizes p (repeat; 0 = the local blocks alone)"
    ),
    block: int = typer.Option(64, help="block size b: every query sees its own and the previous block exactly"),
    length: list[int] = typer.Option(
        [1024, 4096, 16384, 65536], "--n", help="contexts N for the kernel timing (repeat; 0 = no kernel timing)"
    ),
    repeats: int = typer.Option(3, help="sampling seeds per p (timing: best of them)"),
    threads: int | None = typer.Option(1, help="torch CPU threads"),
    force: bool = typer.Option(
        False,
        "--force",
        help="overwrite RESULTS/inference.json even when it holds a record of other settings",
    ),
    json: bool = json_option(),
) -> None:
    """Perplexity and tokens/s of block random-batch attention against full attention (trained char model).

    Writes RESULTS/inference.json; a record of other settings (p, block, n, repeats) there is refused (exit 2)
    unless --force."""
    from ..core._validate import positive_int
    from ..io._formats import write_json
    from ..practice._claims import claim_record
    from ..practice._inference import find_char_model, inference_settings, record_settings, run
    from ._bounds import bound, inference_bytes

    _threads(threads)
    positive_int("block", block)
    positive_int("repeats", repeats)
    if not batch_size or min(batch_size) < 0:
        raise ConfigError("p", batch_size, "one or more random batch sizes >= 0")
    if min(length) < 0:
        raise ConfigError("n", length, "contexts >= 0")
    folder = results or (DEFAULT_RESULTS / "long" if long else DEFAULT_RESULTS)
    lengths = [n for n in length if n > 0]
    cfg = find_char_model(folder)[1]  # a folder without the model is refused before anything is written there
    bound("p/block/n", (max(batch_size), block, max(length)), inference_bytes(cfg, batch_size, block, lengths))
    settings = inference_settings(batch_size, block, lengths, repeats)
    claim_record(folder / "inference.json", settings, record_settings, "random-batch inference", force=force)
    result = run(folder, batch_size, block, lengths, repeats)
    write_json(folder / "inference.json", result, checksum=True)
    if json:
        emit_json(result)
        return
    table = RichTable(title=f"random-batch inference, context {result['context']}, block {block}")
    for col in ("scheme", "p", "perplexity", "tokens/s"):
        table.add_column(col, justify="right")
    for row in result["perplexity"]:
        table.add_row(
            row["scheme"],
            "-" if row["p"] is None else str(row["p"]),
            f"{row['ppl']:.3f} ± {row['ppl_std']:.3f}",
            f"{row['tokens_per_s']:.0f}",
        )
    Console().print(table)
    if not result["kernel"]:
        return
    kernel = RichTable(title="attention kernel alone (s per call)")
    for col in ("N", "full causal SDPA", f"random batch p = {max(batch_size)}"):
        kernel.add_column(col, justify="right")
    for row in result["kernel"]:
        kernel.add_row(str(row["n"]), f"{row['full_s']:.4f}", f"{row['random_batch_s']:.4f}")
    Console().print(kernel)


@app.command("report-practice")
@cli_errors
def report_practice(
    results: Path = typer.Option(DEFAULT_RESULTS, help="folder written by `sdeformer train --out` and the probe"),
    out: Path | None = typer.Option(
        None, help="report folder [RESULTS/report]; tied (run.json) to the results folder it shows"
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="write into --out even when it holds the report of another results folder",
    ),
    json: bool = json_option(),
) -> None:
    """The practice results page: every method against the baseline, probe and random-batch inference.

    The report folder is tied to the results folder: rebuilding it from the same results folder (after more
    runs) overwrites it; a report of another results folder there is refused (exit 2) unless --force."""
    from ..plots._practice import PRACTICE_FIGURES
    from ..practice._report import build

    path = build(results, out or results / "report", force, draw=PRACTICE_FIGURES)
    if json:
        emit_json({"report": str(path)})
    else:
        Console().print(f"wrote {path}")
