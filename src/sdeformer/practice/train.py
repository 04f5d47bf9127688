"""Seeded, resumable training runs of the practice tasks (THEORY section 7).

``run_one(task, method, seed, cfg)`` trains one model and returns a plain-JSON record: validation curve,
final metric, steps to reach the task's target, per-layer mean token cosine and E_beta of the block
outputs (eval mode, a fixed validation batch). ``run_suite`` runs every (method, seed), saving each record
atomically as soon as it finishes and skipping records that already exist for the same settings.

Model initialisation uses PyTorch's module initialisers, which draw from the global generator: it runs
inside ``torch.random.fork_rng`` with the run's seed, so the caller's global state is left untouched.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from ..diagnostics import interaction_energy, mean_cosine
from ..errors import ConfigError
from ..nn import InteractionEnergy, attach
from ..rng import derive_seeds
from ..store import config_hash, write_json, write_npz
from .data import CharCorpus, mnist
from .methods import ENERGY_BETA, NOISE_LAW, Method
from .models import CharTransformer, ModelConfig, ViT

TASKS = ("charlm", "mnist")


@dataclass(frozen=True)
class TaskConfig:
    task: str
    steps: int  # optimiser steps
    batch: int  # sequences (charlm) or images (mnist) per step
    lr: float  # AdamW peak learning rate (20-step warm-up, cosine decay to 10%)
    eval_every: int  # steps between validation points
    eval_size: int  # validation sequences / images
    target: float  # charlm: validation loss to reach; mnist: validation accuracy to reach
    model: ModelConfig
    context: int = 128  # charlm sequence length
    max_data: int | None = None  # truncate the corpus (characters) / training images

    def to_dict(self) -> dict:
        return asdict(self)


def task_config(task: str, steps: int | None = None, quick: bool = False, context: int | None = None) -> TaskConfig:
    """Default settings of a task; ``quick`` shrinks model and data so a run takes about a second.

    ``context`` (charlm only) trains at another sequence length with the same characters per step (batch
    ``32 * 128 / context``, at least 1; quick: ``8 * 32 / context``) and about 10 validation points.
    """
    if task not in TASKS:
        raise ConfigError("task", task, f"one of {list(TASKS)}")
    if steps is not None and int(steps) < 1:
        raise ConfigError("steps", steps, "must be a positive integer")
    if context is not None and (task != "charlm" or int(context) < 2):
        raise ConfigError("context", context, "an integer >= 2, for the charlm task only")
    if task == "charlm":
        cfg = TaskConfig("charlm", 300, 32, 2e-3, 25, 64, 2.5, ModelConfig(dim=64, layers=4, heads=4), context=128)
        if quick:
            cfg = replace(cfg, steps=20, batch=8, eval_every=10, eval_size=8, target=3.0, context=32,
                          model=ModelConfig(dim=32, layers=2, heads=2), max_data=200_000)
    else:
        cfg = TaskConfig("mnist", 300, 128, 2e-3, 25, 1000, 0.9, ModelConfig(dim=64, layers=4, heads=4))
        if quick:
            cfg = replace(cfg, steps=20, batch=16, eval_every=10, eval_size=100, target=0.3,
                          model=ModelConfig(dim=32, layers=2, heads=2), max_data=2000)
    cfg = replace(cfg, steps=int(steps)) if steps is not None else cfg
    if context is not None:
        cfg = replace(cfg, context=int(context), batch=max(1, cfg.batch * cfg.context // int(context)),
                      eval_every=max(cfg.eval_every, cfg.steps // 10))
    return cfg


class _Char:
    higher_is_better = False
    metric = "val_loss"

    def __init__(self, cfg: TaskConfig):
        self.cfg = cfg
        self.corpus = CharCorpus.load(max_chars=cfg.max_data)
        g = torch.Generator().manual_seed(1234)  # the same validation windows for every run
        self.val = self.corpus.batch("val", cfg.eval_size, cfg.context, g)

    def model(self, mcfg: ModelConfig) -> CharTransformer:
        return CharTransformer(mcfg, len(self.corpus.vocab), self.cfg.context)

    def batch(self, g: torch.Generator):
        return self.corpus.batch("train", self.cfg.batch, self.cfg.context, g)

    @staticmethod
    def loss(model, x, y) -> torch.Tensor:
        logits = model(x)  # (B, N, vocab)
        return F.cross_entropy(logits.flatten(0, 1), y.flatten())

    def evaluate(self, model) -> float:
        x, y = self.val
        return float(torch.cat([self.loss(model, xb, yb)[None] for xb, yb in zip(x.split(32), y.split(32))]).mean())

    def probe_inputs(self) -> torch.Tensor:
        return self.val[0][:16]


class _Mnist:
    higher_is_better = True
    metric = "val_acc"

    def __init__(self, cfg: TaskConfig):
        self.cfg = cfg
        data = mnist(max_train=cfg.max_data, max_val=cfg.eval_size)
        self.train, self.val = data["train"], data["val"]

    def model(self, mcfg: ModelConfig) -> ViT:
        return ViT(mcfg)

    def batch(self, g: torch.Generator):
        idx = torch.randint(len(self.train.y), (self.cfg.batch,), generator=g)  # (B,)
        return self.train.x[idx], self.train.y[idx]

    @staticmethod
    def loss(model, x, y) -> torch.Tensor:
        return F.cross_entropy(model(x), y)

    def evaluate(self, model) -> float:
        correct = sum(int((model(xb).argmax(-1) == yb).sum())
                      for xb, yb in zip(self.val.x.split(500), self.val.y.split(500)))
        return correct / len(self.val.y)

    def probe_inputs(self) -> torch.Tensor:
        return self.val.x[:64]


_DATA_CACHE: dict[tuple, object] = {}


def load_task(cfg: TaskConfig):
    """The task's data (cached per process: a suite loads it once)."""
    key = (cfg.task, cfg.max_data, cfg.eval_size, cfg.context, cfg.batch)
    if key not in _DATA_CACHE:
        _DATA_CACHE[key] = (_Char if cfg.task == "charlm" else _Mnist)(cfg)
    return _DATA_CACHE[key]


def _lr(step: int, cfg: TaskConfig) -> float:
    warm = min(20, max(cfg.steps // 10, 1))
    if step < warm:
        return cfg.lr * (step + 1) / warm
    frac = (step - warm) / max(cfg.steps - warm, 1)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


@torch.no_grad()
def layer_stats(model, inputs: torch.Tensor) -> dict:
    """Per-block mean pairwise token cosine and E_beta (beta = 1) of the block outputs, eval mode.

    Averaged over the sequences (charlm) or images (mnist) of ``inputs``; lists of length L.
    """
    model.eval()
    hooks = attach(model, record=True)
    try:
        model(inputs)
        states = hooks.states  # L x (B, N, d)
    finally:
        hooks.remove()
    return {"layer_cos": [float(mean_cosine(s).mean()) for s in states],
            "layer_energy": [float(interaction_energy(s, ENERGY_BETA).mean()) for s in states]}


def build_model(task, cfg: TaskConfig, method: Method, seed: int):
    mcfg = replace(cfg.model, drop_path=method.drop_path, neftune_alpha=method.neftune_alpha)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return task.model(mcfg)


def run_one(cfg: TaskConfig, method: Method, seed: int, advance: Callable[[int], None] = lambda n=1: None,
            weights: Path | None = None) -> dict:
    """Train one model; returns the run's record (see module docstring). ``weights``: also save the trained
    parameters there as ``.npz`` (state-dict names as keys)."""
    task = load_task(cfg)
    s_init, s_data, s_noise = derive_seeds(seed, 3)
    model = build_model(task, cfg, method, s_init)
    g = torch.Generator().manual_seed(s_data)
    model.set_generator(g)
    noise = {"dt": 1.0 / cfg.model.layers, "scale": method.noise_scale, **NOISE_LAW} if method.noise_scale else None
    energy = InteractionEnergy(ENERGY_BETA, method.energy_weight) if method.energy_weight else None
    hooks = attach(model, noise=noise, energy=energy, seed=s_noise)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    curve_steps, curve_metric, train_loss = [], [], []
    start = time.perf_counter()
    try:
        for step in range(cfg.steps):
            model.train()
            for group in opt.param_groups:
                group["lr"] = _lr(step, cfg)
            x, y = task.batch(g)
            loss = task.loss(model, x, y)
            total = loss + energy.loss() if energy is not None else loss
            opt.zero_grad(set_to_none=True)
            total.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            train_loss.append(float(loss.detach()))
            if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
                model.eval()
                with torch.no_grad(), hooks.disabled():
                    curve_steps.append(step + 1)
                    curve_metric.append(task.evaluate(model))
            advance(1)
    finally:
        hooks.remove()
    if not all(math.isfinite(v) for v in curve_metric):
        raise FloatingPointError(f"{cfg.task}/{method.name}/seed {seed}: non-finite validation metric")
    seconds = time.perf_counter() - start
    if weights is not None:
        write_npz(weights, **{k: v.detach().numpy() for k, v in model.state_dict().items()})
    reached = [s for s, v in zip(curve_steps, curve_metric)
               if (v >= cfg.target if task.higher_is_better else v <= cfg.target)]
    return {
        "task": cfg.task, "method": method.name, "seed": seed, "metric": task.metric,
        "settings": {"task": cfg.to_dict(), "method": method.settings(), "noise_law": NOISE_LAW},
        "curve_steps": curve_steps, "curve_metric": curve_metric,
        "train_loss": train_loss[:: max(1, cfg.steps // 200)],
        "final": curve_metric[-1], "steps_to_target": reached[0] if reached else None,
        "seconds": seconds, **layer_stats(model, task.probe_inputs()),
    }


def run_path(out: Path, cfg: TaskConfig, method: Method, seed: int) -> Path:
    key = config_hash({"task": cfg.to_dict(), "method": method.settings(), "noise_law": NOISE_LAW})
    return Path(out) / cfg.task / f"{method.name}__seed{seed}__{key}.json"


def weights_path(run: Path) -> Path:
    """Where the parameters of a saved run live (only the baseline, seed 0, is kept)."""
    return run.with_suffix(".weights.npz")


def run_suite(cfg: TaskConfig, methods: list[Method], seeds: int, out: Path | None = None,
              advance: Callable[[int], None] = lambda n=1: None) -> list[dict]:
    """Every (method, seed) run; with ``out``, each record is written when it finishes and reused on rerun."""
    if int(seeds) < 1:
        raise ConfigError("seeds", seeds, "must be a positive integer")
    records = []
    for seed in range(int(seeds)):  # seed-major: an interrupted suite has every method at equal seeds
        for method in methods:
            path = run_path(out, cfg, method, seed) if out is not None else None
            if path is not None and path.is_file():
                records.append(json.loads(path.read_text()))
                advance(cfg.steps)
                continue
            keep = path is not None and method.name == "baseline" and seed == 0  # for random-batch inference
            rec = run_one(cfg, method, seed, advance, weights=weights_path(path) if keep else None)
            if path is not None:
                write_json(path, rec)
            records.append(rec)
    return records


def _mean_std(values: list[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0


def _welch_t(m1: float, s1: float, n1: int, m0: float, s0: float, n0: int) -> float | None:
    """Welch's t statistic of a difference of means (None when the standard error is 0)."""
    se = math.sqrt(s1**2 / n1 + s0**2 / n0)
    return (m1 - m0) / se if se > 0 else None


def summarize(records: list[dict]) -> dict:
    """Per method: final metric mean and std over seeds, difference to the baseline (and its Welch t), steps
    to target (mean over
    the seeds that reached it, and how many did), per-layer cosine and energy mean and std, mean curve."""
    by_method: dict[str, list[dict]] = {}
    for r in records:
        by_method.setdefault(r["method"], []).append(r)
    base = by_method.get("baseline")
    base_mean, base_std = _mean_std([r["final"] for r in base]) if base else (None, None)
    out = {}
    for name, rs in by_method.items():
        mean, std = _mean_std([r["final"] for r in rs])
        reached = [r["steps_to_target"] for r in rs if r["steps_to_target"] is not None]
        cos = np.asarray([r["layer_cos"] for r in rs])  # (seeds, L)
        en = np.asarray([r["layer_energy"] for r in rs])  # (seeds, L)
        out[name] = {
            "seeds": len(rs), "final_mean": mean, "final_std": std,
            "delta_vs_baseline": None if base_mean is None else mean - base_mean,
            "t_vs_baseline": _welch_t(mean, std, len(rs), base_mean, base_std, len(base)) if base else None,
            "steps_to_target_mean": float(np.mean(reached)) if reached else None,
            "reached_target": len(reached),
            "layer_cos_mean": cos.mean(0).tolist(), "layer_cos_std": cos.std(0, ddof=1).tolist() if len(rs) > 1 else [0.0] * cos.shape[1],
            "layer_energy_mean": en.mean(0).tolist(), "layer_energy_std": en.std(0, ddof=1).tolist() if len(rs) > 1 else [0.0] * en.shape[1],
            "curve_steps": rs[0]["curve_steps"],
            "curve_mean": np.asarray([r["curve_metric"] for r in rs]).mean(0).tolist(),
            "curve_std": np.asarray([r["curve_metric"] for r in rs]).std(0).tolist(),
            "seconds_mean": float(np.mean([r["seconds"] for r in rs])),
            "settings": rs[0]["settings"],
        }
    return out
