"""The multi-seed suite of the practice tasks (THEORY section 7) and its statistics.

``run_suite`` runs every (method, seed), saving each record atomically as soon as it finishes and reusing
records that already exist for the same settings (a rerun resumes). ``summarize`` gives per method the mean
and std over seeds, the difference to the baseline with its Welch t, and the mean curves and layer profiles.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..core._validate import positive_int
from ..io._claims import BOOKKEEPING, RUN_MARKER, claim_run_folder
from ..io._damage import recover
from ..io._formats import read_json, write_json
from ..io._hashing import config_hash
from ._methods import NOISE_LAW, Method
from ._tasks import TaskConfig
from ._training import run_one


def _run_stem(task: dict, method: dict, noise_law: dict, seed: int) -> str:
    """``METHOD__seedS__KEY``: the file name (less suffix) of one run, KEY the hash of its settings."""
    key = config_hash({"task": task, "method": method, "noise_law": noise_law})
    return f"{method['name']}__seed{seed}__{key}"


def run_path(out: Path, cfg: TaskConfig, method: Method, seed: int) -> Path:
    """Where the record of one (method, seed) run lives, keyed by the hash of its settings."""
    return Path(out) / cfg.task / f"{_run_stem(cfg.to_dict(), method.settings(), NOISE_LAW, seed)}.json"


def weights_path(run: Path) -> Path:
    """Where the parameters of a saved run live (only the baseline, seed 0, is kept)."""
    return run.with_suffix(".weights.npz")


SUMMARIES = ("summary.json", "summary_quick.json")


def suite_config(cfg: TaskConfig, methods: list[Method], seeds: int) -> dict:
    """The settings that determine a suite's results: what ``OUT/<task>`` is tied to (``run.json``)."""
    return {
        "command": "train",
        "task": cfg.to_dict(),
        "methods": [m.settings() for m in methods],
        "seeds": positive_int("seeds", seeds),
        "noise_law": NOISE_LAW,
    }


def _suite_files(config: dict) -> set[str]:
    """Names of the files a suite of ``suite_config`` writes (records, weights, summaries)."""
    stems = {
        _run_stem(config["task"], m, config["noise_law"], seed)
        for m in config["methods"]
        for seed in range(config["seeds"])
    }
    return {f"{s}.json" for s in stems} | {f"{s}.weights.npz" for s in stems} | set(SUMMARIES)


def claim_suite_folder(out: Path, cfg: TaskConfig, methods: list[Method], seeds: int, force: bool = False) -> Path:
    """Tie ``OUT/<task>`` (where ``run_suite`` writes) to this suite before any run (``io._claims.claim_run_folder``):
    the same settings resume from the saved records; other settings raise ConfigError naming the folder unless
    ``force`` (which keeps the other settings' records: they are keyed by their own settings, and reports read
    the claimed settings' records only). A folder written before folders were claimed (no ``run.json``) is taken
    over when it holds only this suite's files. Returns the folder."""
    folder = Path(out) / cfg.task
    config = suite_config(cfg, methods, seeds)
    legacy = (
        folder.is_dir()
        and not (folder / RUN_MARKER).exists()
        and all(p.name in BOOKKEEPING or (p.is_file() and p.name in _suite_files(config)) for p in folder.iterdir())
    )
    claim_run_folder(folder, config, force=force or legacy)
    return folder


def claimed_runs(folder: Path) -> set[str] | None:
    """Names of the files of the suite ``folder`` is tied to (``claim_suite_folder``); None when it is tied to
    none (every record there counts)."""
    try:
        config = read_json(Path(folder) / RUN_MARKER)["config"]
        return _suite_files(config) if config.get("command") == "train" else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def run_suite(
    cfg: TaskConfig,
    methods: list[Method],
    seeds: int,
    out: Path | None = None,
    advance: Callable[[int], None] = lambda n=1: None,
) -> list[dict]:
    """Every (method, seed) run, seeds 0 .. ``seeds`` - 1; with ``out``, each record is written when it finishes
    and reused on rerun. Raises ConfigError for seeds < 1."""
    seeds = positive_int("seeds", seeds)
    records = []
    for seed in range(seeds):  # seed-major: an interrupted suite has every method at equal seeds
        for method in methods:
            path = run_path(out, cfg, method, seed) if out is not None else None
            held = recover(path, read_json) if path is not None else None  # a damaged record is moved aside, rerun
            if isinstance(held, dict):
                records.append(held)
                advance(cfg.steps)
                continue
            keep = path is not None and method.name == "baseline" and seed == 0  # for random-batch inference
            rec = run_one(cfg, method, seed, advance, weights=weights_path(path) if path is not None and keep else None)
            if path is not None:
                write_json(path, rec, checksum=True)
            records.append(rec)
    return records


def _mean_std(values: list[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0


def _seed_std(a: np.ndarray) -> list[float]:
    """Std over seeds (axis 0, ddof 1) of ``(seeds, L)``; zeros for one seed."""
    return a.std(0, ddof=1).tolist() if len(a) > 1 else [0.0] * a.shape[1]


def _welch_t(m1: float, s1: float, n1: int, m0: float, s0: float, n0: int) -> float | None:
    """Welch's t statistic of a difference of means (None when the standard error is 0)."""
    se = math.sqrt(s1**2 / n1 + s0**2 / n0)
    return (m1 - m0) / se if se > 0 else None


def summarize(records: list[dict]) -> dict:
    """Per method: final metric mean and std over seeds, difference to the baseline (and its Welch t), steps
    to target (mean over the seeds that reached it, and how many did), per-layer cosine and energy mean and
    std, mean curve."""
    by_method: dict[str, list[dict]] = {}
    for r in records:
        by_method.setdefault(r["method"], []).append(r)
    base = by_method.get("baseline")
    base_stats = (*_mean_std([r["final"] for r in base]), len(base)) if base else None  # mean, std, seeds
    out = {}
    for name, rs in by_method.items():
        mean, std = _mean_std([r["final"] for r in rs])
        reached = [r["steps_to_target"] for r in rs if r["steps_to_target"] is not None]
        cos = np.asarray([r["layer_cos"] for r in rs])  # (seeds, L)
        en = np.asarray([r["layer_energy"] for r in rs])  # (seeds, L)
        curves = np.asarray([r["curve_metric"] for r in rs])  # (seeds, points)
        out[name] = {
            "seeds": len(rs),
            "final_mean": mean,
            "final_std": std,
            "delta_vs_baseline": None if base_stats is None else mean - base_stats[0],
            "t_vs_baseline": None if base_stats is None else _welch_t(mean, std, len(rs), *base_stats),
            "steps_to_target_mean": float(np.mean(reached)) if reached else None,
            "reached_target": len(reached),
            "layer_cos_mean": cos.mean(0).tolist(),
            "layer_cos_std": _seed_std(cos),
            "layer_energy_mean": en.mean(0).tolist(),
            "layer_energy_std": _seed_std(en),
            "curve_steps": rs[0]["curve_steps"],
            "curve_mean": curves.mean(0).tolist(),
            "curve_std": curves.std(0).tolist(),
            "seconds_mean": float(np.mean([r["seconds"] for r in rs])),
            "settings": rs[0]["settings"],
        }
    return out
