"""One seeded training run of a practice task (THEORY section 7): the optimisation loop and its record.

``run_one(cfg, method, seed)`` trains one model and returns a plain-JSON record: validation curve, final
metric, steps to reach the task's target, per-layer mean token cosine and E_beta of the block outputs (eval
mode, a fixed validation batch).

Model initialisation uses PyTorch's module initialisers, which draw from the global generator: it runs
inside ``torch.random.fork_rng`` with the run's seed, so the caller's global state is left untouched.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch

from ..core._rng import derive_seeds
from ..io._formats import write_npz
from ..nn import InteractionEnergy, attach
from ..observables import interaction_energy, mean_cosine
from ._methods import ENERGY_BETA, NOISE_LAW, Method
from ._tasks import TaskConfig, load_task


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
    return {
        "layer_cos": [float(mean_cosine(s).mean()) for s in states],
        "layer_energy": [float(interaction_energy(s, ENERGY_BETA).mean()) for s in states],
    }


def build_model(task, cfg: TaskConfig, method: Method, seed: int):
    """The task's model with the method's in-model options, initialised from ``seed`` (global RNG untouched)."""
    net = replace(cfg.model, drop_path=method.drop_path, neftune_alpha=method.neftune_alpha)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return task.model(net)


def run_one(
    cfg: TaskConfig,
    method: Method,
    seed: int,
    advance: Callable[[int], None] = lambda n=1: None,
    weights: Path | None = None,
) -> dict:
    """Train one model; returns the run's record (see module docstring). ``weights``: also save the trained
    parameters there as ``.npz`` (state-dict names as keys). Raises FloatingPointError on a non-finite metric."""
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
    reached = [
        s for s, v in zip(curve_steps, curve_metric) if (v >= cfg.target if task.higher_is_better else v <= cfg.target)
    ]
    return {
        "task": cfg.task,
        "method": method.name,
        "seed": seed,
        "metric": task.metric,
        "settings": {"task": cfg.to_dict(), "method": method.settings(), "noise_law": NOISE_LAW},
        "curve_steps": curve_steps,
        "curve_metric": curve_metric,
        "train_loss": train_loss[:: max(1, cfg.steps // 200)],
        "final": curve_metric[-1],
        "steps_to_target": reached[0] if reached else None,
        "seconds": seconds,
        **layer_stats(model, task.probe_inputs()),
    }
