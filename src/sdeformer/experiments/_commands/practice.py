"""The practice commands (THEORY section 7): ``train`` (every method over seeds on a real task),
``infer-practice`` (block random-batch attention against full attention) and ``report-practice`` (the results
page); their settings declared once (torch-free), their bodies and their terminal tables."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

from ...core._errors import ConfigError
from ...params import Param
from .options import force, out, table, threads

DEFAULT_RESULTS = Path("results/practice")


class PracticeTask(str, enum.Enum):
    charlm = "charlm"
    mnist = "mnist"


TRAIN = (
    Param("task", PracticeTask, ..., doc="charlm (Shakespeare characters) or mnist (small ViT)"),
    Param("method", str, "all", doc="'all' or a comma-separated list of: baseline, noise-0.1, noise-0.3, noise-1, "
          "neftune, stochdepth, energy+, energy-"),
    Param("steps", int, None, doc="optimiser steps per run [300; quick: 20]"),
    Param("seeds", int, 3, doc="seeds per method (0 .. K-1)"),
    Param("quick", bool, False, doc="tiny model and data subset (seconds per run), for tests"),
    Param("context", int, None, doc="charlm: train at this context instead of 128 (same characters per step: batch "
          "32*128/context)"),
    out(None, "results folder: each (method, seed) run is saved when it finishes and reused on rerun; summary.json "
        "at the end"),
    threads("torch CPU threads (these small models run fastest on 1)"),
    force("train into OUT/TASK even when it is tied (run.json) to other settings (task, methods, seeds); the runs "
          "already saved for these settings are reused"),
)  # fmt: skip
INFER = (
    Param("results", Path, None, doc="folder holding one trained character model (default results/practice; with "
          "--long: results/practice/long)"),
    Param("long", bool, False, doc="the long-context model (trained with `sdeformer train --task charlm --context "
          "1024 --out results/practice/long`)"),
    Param("p", list[int], [0, 16, 32, 64, 128, 256], doc="random batch sizes p (repeat; 0 = the local blocks alone)"),
    Param("block", int, 64, doc="block size b: every query sees its own and the previous block exactly"),
    Param("n", list[int], [1024, 4096, 16384, 65536], doc="contexts N for the kernel timing (repeat; 0 = no kernel "
          "timing)"),
    Param("repeats", int, 3, doc="sampling seeds per p (timing: best of them)"),
    threads(),
    force("overwrite RESULTS/inference.json even when it holds a record of other settings"),
)  # fmt: skip
REPORT = (
    Param("results", Path, DEFAULT_RESULTS, doc="folder written by `sdeformer train --out` and the probe"),
    out(None, "report folder [RESULTS/report]; tied (run.json) to the results folder it shows"),
    force("write into --out even when it holds the report of another results folder"),
)


def set_threads(threads: int | None) -> None:
    if threads is not None:
        import torch

        from ...core._validate import positive_int

        torch.set_num_threads(positive_int("threads", threads))


def train(s: dict[str, Any]) -> dict:
    from ...core._validate import positive_int
    from ...io._formats import write_json
    from ...io._progress import progress_bar
    from ...practice._methods import get_methods
    from ...practice._suite import claim_suite_folder, run_suite, summarize
    from ...practice._tasks import task_config
    from .bounds import bound, train_bytes

    task, method, seeds, quick, folder = s["task"].value, s["method"], s["seeds"], s["quick"], s["out"]
    names = [n.strip() for n in method.split(",")]
    if method.strip() != "all" and (not all(names) or len(set(names)) != len(names)):
        raise ConfigError("method", method, "distinct comma-separated method names (or 'all'), none empty")
    positive_int("seeds", seeds)
    set_threads(s["threads"])
    cfg = task_config(task, s["steps"], quick, s["context"])
    bound("context", cfg.context, train_bytes(cfg))  # before the data loads or a folder is claimed
    methods = get_methods(method)
    if folder is not None:
        claim_suite_folder(folder, cfg, methods, seeds, s["force"])  # before any run: resume, or refuse others
    with progress_bar(len(methods) * seeds * cfg.steps, f"train {task}", enabled=True) as advance:
        records = run_suite(cfg, methods, seeds, folder, advance)
    summary = summarize(records)
    result = {"task": task, "quick": quick, "seeds": seeds, "config": cfg.to_dict(), "metric": records[0]["metric"],
              "methods": summary}  # fmt: skip
    if folder is not None:
        write_json(Path(folder) / task / ("summary_quick.json" if quick else "summary.json"), result, checksum=True)
    return result


def show_train(result: dict, s: dict[str, Any]) -> None:
    rows = [[name, f"{m['final_mean']:.4f}", f"{m['final_std']:.4f}",
             "" if m["delta_vs_baseline"] is None else f"{m['delta_vs_baseline']:+.4f}",
             "-" if m["steps_to_target_mean"] is None else f"{m['steps_to_target_mean']:.0f}",
             f"{m['reached_target']}/{m['seeds']}", f"{m['layer_cos_mean'][-1]:.3f}", f"{m['seconds_mean']:.1f}"]
            for name, m in result["methods"].items()]  # fmt: skip
    title = f"{result['task']}: {result['metric']} after {result['config']['steps']} steps, {s['seeds']} seeds"
    table(title, ("method", "mean", "std", "vs baseline", "steps to target", "reached", "last-layer cos", "s/run"),
          rows)  # fmt: skip


def infer(s: dict[str, Any]) -> dict:
    from ...core._validate import positive_int
    from ...io._formats import write_json
    from ...practice._claims import claim_record
    from ...practice._inference import find_char_model, inference_settings, record_settings, run
    from .bounds import bound, inference_bytes

    batch_size, block, length, repeats = s["p"], s["block"], s["n"], s["repeats"]
    set_threads(s["threads"])
    positive_int("block", block)
    positive_int("repeats", repeats)
    if not batch_size or min(batch_size) < 0:
        raise ConfigError("p", batch_size, "one or more random batch sizes >= 0")
    if min(length) < 0:
        raise ConfigError("n", length, "contexts >= 0")
    folder = s["results"] or (DEFAULT_RESULTS / "long" if s["long"] else DEFAULT_RESULTS)
    lengths = [n for n in length if n > 0]
    cfg = find_char_model(folder)[1]  # a folder without the model is refused before anything is written there
    bound("p/block/n", (max(batch_size), block, max(length)), inference_bytes(cfg, batch_size, block, lengths))
    settings = inference_settings(batch_size, block, lengths, repeats)
    claim_record(folder / "inference.json", settings, record_settings, "random-batch inference", force=s["force"])
    result = run(folder, batch_size, block, lengths, repeats)
    write_json(folder / "inference.json", result, checksum=True)
    return result


def show_infer(result: dict, s: dict[str, Any]) -> None:
    rows = [[r["scheme"], "-" if r["p"] is None else str(r["p"]), f"{r['ppl']:.3f} ± {r['ppl_std']:.3f}",
             f"{r['tokens_per_s']:.0f}"] for r in result["perplexity"]]  # fmt: skip
    table(f"random-batch inference, context {result['context']}, block {s['block']}",
          ("scheme", "p", "perplexity", "tokens/s"), rows)  # fmt: skip
    if result["kernel"]:
        rows = [[str(r["n"]), f"{r['full_s']:.4f}", f"{r['random_batch_s']:.4f}"] for r in result["kernel"]]
        table("attention kernel alone (s per call)", ("N", "full causal SDPA", f"random batch p = {max(s['p'])}"), rows)


def report(s: dict[str, Any]) -> dict:
    from ...plots._practice import PRACTICE_FIGURES
    from ...practice._report import build

    return {"report": str(build(s["results"], s["out"] or s["results"] / "report", s["force"], draw=PRACTICE_FIGURES))}


def show_report(result: dict, _s: dict[str, Any]) -> None:
    from rich.console import Console

    Console().print(f"wrote {result['report']}")
