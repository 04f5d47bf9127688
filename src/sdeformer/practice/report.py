"""The practice results page (THEORY section 7): every method against the baseline, the probe of
all-MiniLM-L6-v2, and random-batch inference. Reads what ``sdeformer train --out``, ``sdeformer probe --out``
and ``sdeformer infer-practice`` wrote under one results folder; partial suites are reported as they are.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ..core.errors import ConfigError
from ..io.report import Figure, Section, Table, write_report
from ..io.store import RUN_MARKER, claim_run_folder
from ..plots import save_figure
from .methods import METHODS, NOISE_LAW
from .suite import claimed_runs, summarize
from .tasks import TASKS

_LABEL = {"charlm": "validation loss (nats/char, lower is better)", "mnist": "validation accuracy (higher is better)"}


def load_records(results: Path, task: str) -> list[dict]:
    """Every finished (method, seed) record of a task, in method order: of the settings ``RESULTS/<task>`` is
    tied to (``suite.claim_suite_folder``), or all of them in a folder tied to none."""
    folder = Path(results) / task
    claimed = claimed_runs(folder)  # a folder tied to one train config (run.json): that config's records only
    paths = sorted(folder.glob("*__seed*__*.json")) if folder.is_dir() else []
    recs = [json.loads(p.read_text()) for p in paths if claimed is None or p.name in claimed]
    order = {name: i for i, name in enumerate(METHODS)}
    return sorted(recs, key=lambda r: (order.get(r["method"], 99), r["seed"]))


def _pm(mean: float, std: float, digits: int = 4) -> str:
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def verdict(t: float | None, higher_is_better: bool) -> str:
    """'better' / 'worse' than the baseline when |Welch t| >= 2, else 'no clear difference'."""
    if t is None or abs(t) < 2:
        return "no clear difference"
    return "better" if (t > 0) == higher_is_better else "worse"


def task_section(results: Path, out: Path, task: str) -> Section | None:
    records = load_records(results, task)
    if not records:
        return None
    summary = summarize(records)
    s0 = records[0]["settings"]["task"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    for name, s in summary.items():
        steps, mean, std = s["curve_steps"], s["curve_mean"], s["curve_std"]
        (line,) = axes[0].plot(steps, mean, label=name)
        axes[0].fill_between(
            steps,
            [m - e for m, e in zip(mean, std)],
            [m + e for m, e in zip(mean, std)],
            color=line.get_color(),
            alpha=0.15,
        )
        layers = range(1, len(s["layer_cos_mean"]) + 1)
        axes[1].errorbar(layers, s["layer_cos_mean"], yerr=s["layer_cos_std"], label=name, capsize=2)
        axes[2].errorbar(layers, s["layer_energy_mean"], yerr=s["layer_energy_std"], label=name, capsize=2)
    axes[0].set(xlabel="step", ylabel=_LABEL[task], title=f"{task}: validation curve (mean ± std over seeds)")
    if task == "charlm":
        axes[0].set_ylim(top=min(3.5, max(max(s["curve_mean"]) for s in summary.values())))
    axes[1].set(xlabel="block", ylabel="mean pairwise token cosine", title="per-layer mean cosine (eval)")
    axes[2].set(xlabel="block", ylabel="E_beta (beta = 1)", title="per-layer interaction energy (eval)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    png = out / f"{task}_methods.png"
    save_figure(fig, png, dpi=110)  # atomic
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
                "" if s["delta_vs_baseline"] is None else f"{s['delta_vs_baseline']:+.4f}",
                "" if s["t_vs_baseline"] is None else f"{s['t_vs_baseline']:+.2f}",
                "" if name == "baseline" else verdict(s["t_vs_baseline"], higher),
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
            "Welch t",
            "verdict (|t| >= 2)",
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


def probe_section(results: Path, out: Path) -> Section | None:
    files = sorted(Path(results).glob("probe_*.json"))
    if not files:
        return None
    tables, figures, paras = [], [], []
    for f in files:
        r = json.loads(f.read_text())
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
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        x = range(len(r["layers"]))
        axes[0].plot(x, r["mean_cos"], "k-o", label="clean")
        axes[1].plot(x, r["energy"], "k-o", label="clean")
        for row in r["noise_scales"]:
            axes[0].plot(x, row["mean_cos"], "-o", label=f"scale {row['scale']:g}")
            axes[1].plot(x, row["energy"], "-o", label=f"scale {row['scale']:g}")
        for ax, yl in zip(axes, ("mean pairwise cosine", "E_beta")):
            ax.set(xticks=list(x), xticklabels=r["layers"], ylabel=yl, title=label)
            ax.tick_params(axis="x", rotation=30)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        png = out / f"{f.stem}.png"
        save_figure(fig, png, dpi=110)  # atomic
        figures.append(Figure(png.relative_to(out), f"{label}: token synchronization across layers"))
    return Section("Probe: all-MiniLM-L6-v2 with injected common noise", paras, tables, figures)


def inference_section(results: Path, out: Path) -> Section | None:
    """Random-batch inference of ``RESULTS/inference.json`` (context-128 model) and ``RESULTS/long/inference.json``
    (long-context model), where present."""
    found = [(name, Path(results) / sub / "inference.json") for name, sub in (("", "."), ("long", "long"))]
    found = [(name, path) for name, path in found if path.is_file()]
    if not found:
        return None
    tables, figures = [], []
    for name, path in found:
        r = json.loads(path.read_text())
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
        fig, ax = plt.subplots(figsize=(6, 4))
        rb = [row for row in r["perplexity"] if row["p"]]
        for row in r["perplexity"]:
            if row["p"] == 0:
                ax.axhline(row["ppl"], color="g", ls=":", label=f"local blocks alone (b = {row['block']})")
        ax.errorbar(
            [row["p"] for row in rb],
            [row["ppl"] for row in rb],
            yerr=[row["ppl_std"] for row in rb],
            fmt="-o",
            label="block random batch",
        )
        ax.axhline(r["perplexity"][0]["ppl"], color="k", ls="--", label="full attention")
        ax.set(
            xscale="log", xlabel="random batch size p", ylabel="perplexity", title=f"random-batch inference, {label}"
        )
        ax.set_xticks([row["p"] for row in rb], [str(row["p"]) for row in rb])
        ax.minorticks_off()
        ax.legend()
        fig.tight_layout()
        png = out / f"inference{'_' + name if name else ''}.png"
        save_figure(fig, png, dpi=110)  # atomic
        figures.append(Figure(png.relative_to(out), f"perplexity against random batch size p, {label}"))
    return Section(
        "Random-batch inference (character model)", [json.loads(found[0][1].read_text())["scheme"]], tables, figures
    )


def claim_report_folder(results: Path, out: Path, force: bool = False) -> Path:
    """Tie the report folder ``out`` to the results folder it shows, before any work
    (``store.claim_run_folder``): the report is rebuilt from whatever that folder holds now, so its only
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


def build(results: Path, out: Path, force: bool = False) -> Path:
    """Write the results page ``out/index.html`` from the results folder; returns its path. ``out`` is tied
    to ``results`` first (``claim_report_folder``; ``force`` takes over a folder tied to another). Raises
    ConfigError when ``results`` holds no practice results (before ``out`` is touched)."""
    results, out = Path(results), Path(out)
    if not _holds_results(results):
        raise ConfigError("results", str(results), "holds no practice results (run `sdeformer train --out` first)")
    claim_report_folder(results, out, force)
    sections = [
        s
        for s in [
            *(task_section(results, out, t) for t in TASKS),
            probe_section(results, out),
            inference_section(results, out),
        ]
        if s is not None
    ]
    if not sections:
        raise ConfigError("results", str(results), "holds no practice results (run `sdeformer train --out` first)")
    return write_report(
        out, "sdeformer: the paper's practical suggestions on real data", sections, meta=f"results folder: {results}"
    )
