"""The practice results page (THEORY section 7): every method against the baseline, the probe of
all-MiniLM-L6-v2, and random-batch inference. Reads what ``sdeformer train --out``, ``sdeformer probe --out``
and ``sdeformer infer-practice`` wrote under one results folder; partial suites are reported as they are. The
figures are drawn by the ``Drawing`` the caller hands in (``sdeformer.plots.PRACTICE_FIGURES``): this package
imports no ``plots``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core._errors import ConfigError
from ..io._claims import RUN_MARKER, claim_run_folder
from ..io._formats import read_json
from ..io._report import Figure, Section, Table, write_report
from ._claims import ALPHA, Welch, holm, seeds_to_resolve, verdict, welch
from ._methods import METHODS, NOISE_LAW
from ._suite import claimed_runs, summarize
from ._tasks import TASKS


@dataclass(frozen=True)
class Drawing:
    """The page's figure functions, each writing one PNG at the path it is given and returning it: ``methods(task,
    summary, path)`` the curves and per-layer synchronization of every method, ``probe(record, label, path)`` and
    ``inference(record, label, path)``."""

    methods: Callable[[str, dict[str, dict], Path], Path]
    probe: Callable[[dict, str, Path], Path]
    inference: Callable[[dict, str, Path], Path]


def load_records(results: Path, task: str) -> list[dict]:
    """Every finished (method, seed) record of a task, in method order: of the settings ``RESULTS/<task>`` is
    tied to (``suite.claim_suite_folder``), or all of them in a folder tied to none."""
    folder = Path(results) / task
    claimed = claimed_runs(folder)  # a folder tied to one train config (run.json): that config's records only
    paths = sorted(folder.glob("*__seed*__*.json")) if folder.is_dir() else []
    recs = [read_json(p) for p in paths if claimed is None or p.name in claimed]
    order = {name: i for i, name in enumerate(METHODS)}
    return sorted(recs, key=lambda r: (order.get(r["method"], 99), r["seed"]))


def _pm(mean: float, std: float, digits: int = 4) -> str:
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


@dataclass(frozen=True)
class Judged:
    """One method against its task's baseline: Welch's test, its Holm-adjusted p over the whole family,
    the verdict and the seeds per arm that would resolve the measured difference (``practice._claims``)."""

    welch: Welch
    holm_p: float
    verdict: str
    seeds_to_resolve: int


def judge(summaries: dict[str, dict]) -> dict[tuple[str, str], Judged]:
    """Every (task, method) against the task's baseline (docs/practice.md "Verdicts"): the comparisons of all
    tasks shown are one family, Holm-corrected at ``claims.ALPHA``; ``summaries`` maps a task to
    ``suite.summarize`` of its records. Tasks without a baseline, and arms of one seed, are left out."""
    tests: dict[tuple[str, str], tuple[Welch, float]] = {}
    for task, summary in summaries.items():
        base = summary.get("baseline")
        for name, s in summary.items():
            if base is None or name == "baseline" or min(s["seeds"], base["seeds"]) < 2:
                continue
            m = (s["final_mean"], s["final_std"], s["seeds"], base["final_mean"], base["final_std"], base["seeds"])
            spread = math.sqrt((s["final_std"] ** 2 + base["final_std"] ** 2) / 2)
            tests[task, name] = (welch(*m), spread)
    adjusted = holm({f"{t}/{n}": w.p for (t, n), (w, _) in tests.items()})
    out = {}
    for (task, name), (w, spread) in tests.items():
        p_adj = adjusted[f"{task}/{name}"]
        n = seeds_to_resolve(w.delta, spread, len(tests)) if spread > 0 and w.delta != 0 else 10_000
        out[task, name] = Judged(w, p_adj, verdict(w.delta, p_adj, task == "mnist"), n)
    return out


def _judged_cells(j: Judged | None) -> list[str]:
    """The Welch t (df), p, Holm p, verdict and seeds-to-resolve cells of a row (blank for the baseline)."""
    if j is None:
        return [""] * 5
    w = j.welch
    t = "" if math.isnan(w.t) else f"{w.t:+.2f} ({w.df:.1f})"
    n = "> 1000" if j.seeds_to_resolve > 1000 else str(j.seeds_to_resolve)
    return [t, f"{w.p:.2g}", f"{j.holm_p:.2g}", j.verdict, n]


def task_section(
    out: Path, task: str, records: list[dict], judged: dict[tuple[str, str], Judged], draw: Drawing
) -> Section:
    """The table and figure of one task's records (non-empty); ``judged`` is ``judge`` over every task shown."""
    summary = summarize(records)  # per method, in method order
    s0 = records[0]["settings"]["task"]
    png = draw.methods(task, summary, out / f"{task}_methods.png")
    higher = task == "mnist"
    rows = []
    for name, s in summary.items():
        m = s["settings"]["method"]
        knobs = ", ".join(f"{k}={v:g}" for k, v in m.items() if k != "name" and v) or "-"
        stt = s["steps_to_target_mean"]
        rows.append(
            [
                name,
                knobs,
                s["seeds"],
                _pm(s["final_mean"], s["final_std"]),
                "" if s["delta_vs_baseline"] is None or name == "baseline" else f"{s['delta_vs_baseline']:+.4f}",
                *_judged_cells(judged.get((task, name))),
                "-" if stt is None else f"{stt:.0f}",
                f"{s['reached_target']}/{s['seeds']}",
                _pm(s["layer_cos_mean"][-1], s["layer_cos_std"][-1], 3),
                _pm(s["layer_energy_mean"][-1], s["layer_energy_std"][-1], 3),
                f"{s['seconds_mean']:.0f}",
            ]
        )
    better = "higher" if higher else "lower"
    model = s0["model"]
    settings = (
        f"Settings: {s0['steps']} AdamW steps (peak lr {s0['lr']:g}, 20-step warm-up, cosine to 10%, weight "
        f"decay 0.01, gradient clip 1), batch {s0['batch']}, pre-norm transformer d = {model['dim']}, "
        f"{model['layers']} blocks, {model['heads']} heads, MLP ratio {model['mlp_ratio']}"
        + (f", context {s0['context']} characters" if task == "charlm" else ", 7x7 patches + class token")
        + f"; validation every {s0['eval_every']} steps on {s0['eval_size']} fixed "
        + ("windows" if task == "charlm" else "images")
        + f"; target {s0['target']:g}. Seeds 0.."
        + f"{max(r['seed'] for r in records)}. Common-noise law: {NOISE_LAW}, dt = 1/L, applied to the "
        "output of every block in training only. Per-layer cosine/energy: block outputs in eval mode on "
        "a fixed validation batch."
    )
    table = Table(
        [
            "method",
            "settings",
            "seeds",
            f"final ({better} better) mean ± std",
            "Δ vs baseline",
            "Welch t (df)",
            "p",
            f"Holm p (all {len(judged)} comparisons)",
            f"verdict (Holm p < {ALPHA:g})",
            "seeds to resolve",
            "steps to target",
            "reached",
            "last-block cos",
            "last-block E_beta",
            "s/run",
        ],
        rows,
        caption=f"{task}: every method against the baseline (std over seeds, ddof = 1)",
    )
    figure = Figure(png.relative_to(out), f"{task}: curves and per-layer synchronization")
    return Section(f"Task {task}", [settings], [table], [figure])


def probe_section(results: Path, out: Path, draw: Drawing) -> Section | None:
    files = sorted(Path(results).glob("probe_*.json"))
    if not files:
        return None
    tables, figures, paras = [], [], []
    for f in files:
        r = read_json(f)
        th, nz = r["theory"], r["noise"]
        label = f"noise {nz['activation']}, sU = {nz['su']:g}, sW = {nz['sw']:g}"
        paras.append(
            f"{f.name}: {label}, width {nz['width']}, dt = {nz['dt']:g} per block (T = {th['horizon']:g}), "
            f"{nz['samples']} noise draws per scale, cluster threshold cos > {nz['cluster_threshold']}; "
            f"kernel at d = {th['dim']}: kappa(1) = {th['kappa1']:.4g}, lambda_bar = {th['lambda_bar']:.4g}, "
            f"lambda_bar' = {th['lambda_bar_prime']:.4g}, synchronizes (theorem) = {th['synchronizes']}. "
            f"Text: {r['text']!r} ({r['n_tokens']} tokens)."
        )
        cols = ["layer", "clean cos", "clean E", "clean clusters"]
        for row in r["noise_scales"]:
            cols += [f"s={row['scale']:g} cos", f"s={row['scale']:g} E", f"s={row['scale']:g} cl"]
        rows = []
        for i, name in enumerate(r["layers"]):
            cells = [name, r["mean_cos"][i], r["energy"][i], r["clusters"][i]]
            for row in r["noise_scales"]:
                cells += [row["mean_cos"][i], row["energy"][i], row["clusters"][i]]
            rows.append(cells)
        tables.append(Table(cols, rows, caption=f"all-MiniLM-L6-v2 per layer, {label}"))
        png = draw.probe(r, label, out / f"{f.stem}.png")
        figures.append(Figure(png.relative_to(out), f"{label}: token synchronization across layers"))
    return Section("Probe: all-MiniLM-L6-v2 with injected common noise", paras, tables, figures)


def inference_section(results: Path, out: Path, draw: Drawing) -> Section | None:
    """Random-batch inference of ``RESULTS/inference.json`` (context-128 model) and ``RESULTS/long/inference.json``
    (long-context model), where present."""
    found = [(name, Path(results) / sub / "inference.json") for name, sub in (("", "."), ("long", "long"))]
    found = [(name, path) for name, path in found if path.is_file()]
    if not found:
        return None
    tables, figures = [], []
    for name, path in found:
        r = read_json(path)
        label = f"context {r['context']}"
        rows = [
            [
                row["scheme"],
                "-" if row["p"] is None else row["p"],
                "-" if row["block"] is None else row["block"],
                _pm(row["ppl"], row["ppl_std"], 3),
                f"{row['tokens_per_s']:.0f}",
            ]
            for row in r["perplexity"]
        ]
        tables.append(
            Table(
                ["scheme", "p", "block", "perplexity (mean ± std over sampling seeds)", "tokens/s"],
                rows,
                caption=f"trained character model (baseline, seed 0), {label}, {r['windows']} validation "
                f"windows of {r['context']} characters",
            )
        )
        if r["kernel"]:
            tables.append(
                Table(
                    ["N", "d", "p", "block", "full causal SDPA s", "block random-batch s", "speed-up"],
                    [
                        [
                            k["n"],
                            k["d"],
                            k["p"],
                            k["block"],
                            f"{k['full_s']:.4g}",
                            f"{k['random_batch_s']:.4g}",
                            f"{k['full_s'] / k['random_batch_s']:.2f}",
                        ]
                        for k in r["kernel"]
                    ],
                    caption=f"attention kernel alone ({label} run), 1 sequence, 4 heads, one call after a warm-up",
                )
            )
        png = draw.inference(r, label, out / f"inference{'_' + name if name else ''}.png")
        figures.append(Figure(png.relative_to(out), f"perplexity against random batch size p, {label}"))
    return Section("Random-batch inference (character model)", [read_json(found[0][1])["scheme"]], tables, figures)


def claim_report_folder(results: Path, out: Path, force: bool = False) -> Path:
    """Tie the report folder ``out`` to the results folder it shows, before any work
    (``io._claims.claim_run_folder``): the report is rebuilt from whatever that folder holds now, so its only
    setting is which folder (as a path relative to ``out``, so moving both keeps the tie). A report of another
    results folder raises ConfigError naming ``out`` unless ``force``; a folder written before reports were
    claimed (no ``run.json``, only .html/.png files) is taken over."""
    results, out = Path(results), Path(out)
    config = {"command": "report-practice", "results": os.path.relpath(results.resolve(), out.resolve())}
    legacy = (
        out.is_dir()
        and not (out / RUN_MARKER).exists()
        and all(p.is_file() and p.suffix in (".html", ".png") for p in out.iterdir())
    )
    claim_run_folder(out, config, force=force or legacy)
    return out


def _holds_results(results: Path) -> bool:
    """Whether ``results`` holds anything the page shows (checked before the report folder is claimed)."""
    return (
        any(any((results / t).glob("*__seed*__*.json")) for t in TASKS)
        or any(results.glob("probe_*.json"))
        or any((results / sub / "inference.json").is_file() for sub in (".", "long"))
    )


def build(results: Path, out: Path, force: bool = False, *, draw: Drawing) -> Path:
    """Write the results page ``out/index.html`` from the results folder, its figures drawn by ``draw``; returns
    its path. ``out`` is tied to ``results`` first (``claim_report_folder``; ``force`` takes over a folder tied to
    another). Raises ConfigError when ``results`` holds no practice results (before ``out`` is touched)."""
    results, out = Path(results), Path(out)
    if not _holds_results(results):
        raise ConfigError("results", str(results), "holds no practice results (run `sdeformer train --out` first)")
    claim_report_folder(results, out, force)
    records = {t: recs for t in TASKS if (recs := load_records(results, t))}
    judged = judge({t: summarize(recs) for t, recs in records.items()})
    sections = [
        s
        for s in [
            *(task_section(out, t, recs, judged, draw) for t, recs in records.items()),
            probe_section(results, out, draw),
            inference_section(results, out, draw),
        ]
        if s is not None
    ]
    if not sections:
        raise ConfigError("results", str(results), "holds no practice results (run `sdeformer train --out` first)")
    return write_report(
        out, "sdeformer: the paper's practical suggestions on real data", sections, meta=f"results folder: {results}"
    )
