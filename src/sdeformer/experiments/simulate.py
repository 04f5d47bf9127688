"""One run of the discrete model into a run directory, resumable (DESIGN: outputs).

The run advances in segments of ``CHECKPOINT_LAYERS`` layers; after each, ``checkpoint.npz`` (tokens,
saved states, generator states) is written atomically, so an interrupted run restarts from its last
segment with the same random numbers it would have drawn. On completion the folder holds
``config.json``, ``metrics.csv`` (per saved layer: t, E_beta, mean cosine, mean |cosine|, clusters),
``trajectory.npz`` (x: (S, N, d), layers, t), ``summary.json`` and ``energy.png``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..config import ModelConfig
from ..diagnostics import cluster_count, interaction_energy, mean_abs_cosine, mean_cosine
from ..rng import Streams
from ..store import config_hash, read_npz, write_csv, write_json, write_npz, write_run_metadata
from .results import Result

CHECKPOINT_LAYERS = 500
CLUSTER_THRESHOLD = 0.99


@dataclass(frozen=True)
class SimulateResult(Result):
    """Per saved layer ``(S,)``: layers, t, E_beta ``energy``, mean cosine, mean |cosine|, clusters; the final
    values and the resolved config (THEORY section 5 observables)."""

    layers: np.ndarray
    t: np.ndarray
    energy: np.ndarray
    mean_cos: np.ndarray
    mean_abs_cos: np.ndarray
    clusters: np.ndarray
    final_energy: float
    final_mean_cos: float
    final_mean_abs_cos: float
    final_clusters: int
    config: dict[str, Any]

    def summary(self) -> str:
        """One line for the terminal."""
        return (
            f"E_beta: {self.energy[0]:.4g} (layer 0) -> {self.final_energy:.4g} (layer {self.layers[-1]}); "
            f"final mean cosine {self.final_mean_cos:.4f}, mean |cosine| {self.final_mean_abs_cos:.4f}, "
            f"clusters {self.final_clusters}"
        )


def _load_checkpoint(path: Path, key: str, streams: Streams) -> tuple[int, list[torch.Tensor], list[int]] | None:
    """(next layer, saved states (N, d) each, their layer indices) of a matching checkpoint, else None."""
    if not path.exists():
        return None
    data = read_npz(path)
    if str(data["config_hash"]) != key:
        return None
    streams.set_state([torch.from_numpy(s) for s in data["generator_states"]])
    return int(data["layer"]), list(torch.from_numpy(data["x"])), data["layers"].tolist()


def simulate(
    cfg: ModelConfig, out: Path | None = None, progress: Callable[[int], None] | None = None
) -> SimulateResult:
    """Run ``cfg`` (THEORY section 1); if ``out`` is given, write (and resume) a run directory."""
    model, x = cfg.build(), cfg.initial_tokens()
    streams = Streams(cfg.seed, (), x.device)
    key = config_hash(cfg.to_dict())
    ckpt = out / "checkpoint.npz" if out is not None else None
    state = _load_checkpoint(ckpt, key, streams) if ckpt is not None else None
    start, saved, idx = (0, [x], [0]) if state is None else state  # saved: (N, d) each
    x = saved[-1].to(cfg.torch_dtype)
    if progress and start:
        progress(start)
    while start < cfg.layers:
        stop = min(start + CHECKPOINT_LAYERS, cfg.layers)
        traj = model.run(
            x,
            save_every=cfg.save_every,
            streams=streams,
            start_layer=start,
            stop_layer=stop,
            progress=(lambda _l: progress(1)) if progress else None,
        )
        x = traj.final
        saved += list(traj.x[1:])
        idx += traj.layers[1:].tolist()
        start = stop
        if ckpt is not None and start < cfg.layers:
            write_npz(
                ckpt,
                x=torch.stack(saved).numpy(),
                layers=np.array(idx),
                layer=np.array(start),
                config_hash=np.array(key),
                generator_states=np.stack([s.numpy() for s in streams.get_state()]),
            )
    xs = torch.stack(saved)  # (S, N, d)
    layers = np.array(idx)
    t = layers * model.dt
    n2 = cfg.tokens >= 2
    metrics = {
        "layers": layers,
        "t": t,
        "energy": interaction_energy(xs, cfg.beta).numpy(),
        "mean_cos": mean_cosine(xs).numpy() if n2 else np.ones(len(layers)),
        "mean_abs_cos": mean_abs_cosine(xs).numpy() if n2 else np.ones(len(layers)),
        "clusters": cluster_count(xs, CLUSTER_THRESHOLD).numpy(),
    }
    result = SimulateResult(
        **metrics,
        final_energy=float(metrics["energy"][-1]),
        final_mean_cos=float(metrics["mean_cos"][-1]),
        final_mean_abs_cos=float(metrics["mean_abs_cos"][-1]),
        final_clusters=int(metrics["clusters"][-1]),
        config=cfg.to_dict(),
    )
    if out is not None:
        write_run_metadata(out, cfg.to_dict(), cfg.seed)
        rows = [dict(zip(metrics, vals)) for vals in zip(*metrics.values())]
        write_csv(out / "metrics.csv", rows, list(metrics))
        write_npz(out / "trajectory.npz", x=xs.numpy(), layers=layers, t=t)
        write_json(out / "summary.json", result.to_json())
        from ..plots.paper import energy_plot

        energy_plot(
            out / "energy.png",
            t,
            metrics["energy"],
            f"E_beta, {cfg.activation} d={cfg.dim} sU={cfg.su:g} sW={cfg.sw:g} s={cfg.attention_scale:+g}",
        )
        (out / "checkpoint.npz").unlink(missing_ok=True)
    return result
