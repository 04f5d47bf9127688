"""One run of the discrete model into a run directory, resumable (DESIGN: outputs).

The run advances in segments of ``CHECKPOINT_LAYERS`` layers. After each, the segment's saved states and
their observables are appended as ``segments/NNNNNN.npz`` and ``checkpoint.npz`` (current tokens, generator
states: a few kB) is replaced atomically: the I/O per segment does not grow with the run, and an interrupted
run restarts from its last segment with the same random numbers it would have drawn. Memory holds one segment
of states and the per-layer observables. The folder is tied to the config (``run.json``,
``io._claims.claim_run_folder``): the same config resumes, another is refused unless ``force``. On completion
the folder holds ``config.json``, ``metrics.csv`` (per saved layer: t, E_beta, mean cosine, mean |cosine|,
clusters), ``trajectory.npz`` (x: (S, N, d), layers, t; kept as the segment files when larger than
``TRAJECTORY_MAX_BYTES``), and ``summary.json``; the caller draws ``FIGURE`` from the result
(``plots._paper.energy_plot``). Clusters: ``observables.FIGURE_CLUSTER_COS``.
"""

from __future__ import annotations

import math
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..attention._harmonic import FEATURE_BUDGET, HARMONIC_ATTENTIONS, picks_harmonic
from ..config import ModelConfig
from ..core._errors import ConfigError
from ..core._rng import StreamSource, make_streams
from ..core._validate import device as check_device, finite_state, fits_in_memory
from ..dynamics._loop import SaveAt
from ..io._checksums import checksum_path
from ..io._claims import claim_run_folder, write_run_metadata
from ..io._damage import intact, recover
from ..io._formats import read_npz, write_csv, write_json, write_npz
from ..io._hashing import config_hash
from ..io._lock import folder_lock
from ..observables import FIGURE_CLUSTER_COS, cluster_count, interaction_energy, mean_abs_cosine, mean_cosine
from ..plots._names import FIGURES
from ..sweeps._memory import CHECKPOINT_LAYERS, METRIC_CHUNK, METRICS, run_bytes
from ._results import Result

TRAJECTORY_MAX_BYTES = 512 * 2**20  # larger trajectories stay as segments/*.npz
FIGURE = FIGURES["simulate"]["energy"]  # the energy curve in the run directory (the plots own the name)


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
    memory_estimate_bytes: int = 0  # ``memory_estimate(config)``
    attention_method: str = "exact"  # the softmax sums used: exact or harmonic (the config may say auto)

    def summary(self) -> str:
        """One line for the terminal."""
        return (
            f"E_beta: {self.energy[0]:.4g} (layer 0) -> {self.final_energy:.4g} (layer {self.layers[-1]}); "
            f"final mean cosine {self.final_mean_cos:.4f}, mean |cosine| {self.final_mean_abs_cos:.4f}, "
            f"clusters {self.final_clusters}"
        )


BASE_BYTES = 16 << 20  # lazy imports, row blocks, allocator pools: a run at N = 2,048, d = 3 peaks 25 MB, arrays 9


def memory_estimate(cfg: ModelConfig) -> int:
    """Bytes a ``simulate`` run of ``cfg`` adds to its process at its peak: ``BASE_BYTES`` + ``run_bytes(cfg)``, and
    with the harmonic method its chunks of features (three of ``FEATURE_BUDGET`` float64 entries). Within 0.97-1.16x
    of the peak resident memory measured at N = 2,048-32,768, d = 3 and 64, with 2 and 16 saved states under a fixed
    allocator threshold, 0.84-1.06x of glibc's default allocator's median (docs/scaling.md, "Memory estimate")."""
    harmonic = 3 * 8 * FEATURE_BUDGET if method_used(cfg) == "harmonic" else 0
    return BASE_BYTES + run_bytes(cfg) + harmonic


def method_used(cfg: ModelConfig) -> str:
    """The softmax sums a run of ``cfg`` uses: ``"harmonic"`` or ``"exact"`` (``auto`` resolved at its N, d, beta)."""
    plain = cfg.attention in HARMONIC_ATTENTIONS and not cfg.causal
    harmonic = plain and picks_harmonic(cfg.attention_method, cfg.tokens, cfg.dim, cfg.beta)
    return "harmonic" if harmonic else "exact"


ENERGY_BETA_LIMIT = math.log(sys.float_info.max)  # 709.78: above it e^beta, hence E_beta, is beyond float64


def check_fits(cfg: ModelConfig) -> None:
    """ConfigError, with the estimate, when a run of ``cfg`` cannot fit in the memory available now, and (naming
    ``beta``) when the E_beta it reports is beyond float64 (beta > 709.78; THEORY section 5)."""
    fits_in_memory("tokens/dim/width/layers", (cfg.tokens, cfg.dim, cfg.width, cfg.layers), memory_estimate(cfg))
    if cfg.beta > ENERGY_BETA_LIMIT:
        raise ConfigError(
            "beta", cfg.beta, f"simulate reports E_beta, beyond float64 above beta = {ENERGY_BETA_LIMIT:.2f} "
            "(in Python: observables.log_interaction_energy at any beta)"
        )  # fmt: skip


def _nan_hint(cfg: ModelConfig) -> str:
    """The parameter(s) most likely to blow a run up, for the NaN guard's message."""
    big = [("horizon", cfg.horizon / cfg.layers > 1), ("attention_scale", abs(cfg.attention_scale) > 100)]
    big += [("beta", cfg.beta > 100), ("su", cfg.su > 100), ("sw", cfg.sw > 100)]
    names = [name for name, large in big if large]
    return "/".join(names) if names else "horizon/attention_scale/beta/su/sw"


def _observables(xs: torch.Tensor, beta: float) -> dict[str, np.ndarray]:
    """E_beta, mean cosine, mean |cosine| and clusters of saved states ``(S, N, d)``, METRIC_CHUNK at a time."""
    parts: dict[str, list[np.ndarray]] = {k: [] for k in METRICS}
    for chunk in xs.split(METRIC_CHUNK):
        n2 = chunk.shape[-2] >= 2
        parts["energy"].append(_np(interaction_energy(chunk.double(), beta)))  # on the states' device, then copied
        parts["mean_cos"].append(_np(mean_cosine(chunk).double()) if n2 else np.ones(len(chunk)))
        parts["mean_abs_cos"].append(_np(mean_abs_cosine(chunk).double()) if n2 else np.ones(len(chunk)))
        parts["clusters"].append(_np(cluster_count(chunk, FIGURE_CLUSTER_COS)))
    return {k: np.concatenate(v) for k, v in parts.items()}


class _Segments:
    """The saved states and observables of a run: in memory (no folder) or appended to ``folder/segments``."""

    def __init__(self, folder: Path | None):
        self.folder = folder / "segments" if folder is not None else None
        self.memory: list[dict[str, np.ndarray]] = []

    def paths(self) -> list[Path]:
        return sorted(self.folder.glob("*.npz")) if self.folder is not None and self.folder.exists() else []

    def append(self, layers: list[int], xs: torch.Tensor, beta: float) -> None:
        if not layers:  # a segment shorter than save_every saves nothing
            return
        part: dict[str, Any] = {"layers": np.array(layers), **_observables(xs, beta), "x": _np(xs)}
        if self.folder is None:
            self.memory.append(part)
        else:
            write_npz(self.folder / f"{len(self.paths()):06d}.npz", checksum=True, **part)

    def gather(self, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
        parts = self.memory if self.folder is None else [read_npz(p) for p in self.paths()]
        return {k: np.concatenate([p[k] for p in parts]) for k in keys}


def _np(x: torch.Tensor) -> np.ndarray:
    """``x`` as numpy, copied to the CPU (bfloat16, which numpy lacks, widened exactly to float32)."""
    return (x.float() if x.dtype == torch.bfloat16 else x).cpu().numpy()


def _load_checkpoint(
    path: Path, key: str, streams: StreamSource, segments: _Segments
) -> tuple[int, torch.Tensor] | None:
    """(next layer, tokens (N, d)) of a matching checkpoint, else None (and stale segments removed). Segments
    written after the checkpoint (an interruption between the two writes) are dropped; a damaged checkpoint or
    segment is moved into ``damaged/`` and the run restarts from layer 0."""
    data = recover(path, read_npz)
    paths = segments.paths()
    if (
        data is None
        or str(data["config_hash"]) != key
        or int(data["segments"]) > len(paths)
        or not all(intact(p, path.parent) for p in paths[: int(data["segments"])])
    ):
        if segments.folder is not None:
            shutil.rmtree(segments.folder, ignore_errors=True)
        return None
    for extra in paths[int(data["segments"]) :]:
        extra.unlink()
    streams.set_state([torch.from_numpy(s) for s in data["generator_states"]])
    return int(data["layer"]), torch.from_numpy(data["x"])


def simulate(
    cfg: ModelConfig,
    out: Path | None = None,
    progress: Callable[[int], None] | None = None,
    *,
    force: bool = False,
    device: str | torch.device = "cpu",
) -> SimulateResult:
    """Run ``cfg`` (THEORY section 1) on ``device``; if ``out`` is given, write (and resume) a run directory. On a
    GPU the draws are made there (its generators: other numbers than the CPU's), the observables too; each
    segment's saved states and observables are copied to the CPU (docs/scaling.md, "Devices").

    Raises ConfigError before any work when the run cannot fit in memory (with the estimate), when ``out`` is
    not writable, holds another config's run or one made from other input files (unless ``force``), or another
    command is writing there (``io._lock``), and during the run when the tokens become NaN (naming the layer and
    the likely parameter)."""
    device = check_device("device", device)
    check_fits(cfg)
    if out is None:
        return _simulate(cfg, None, progress, False, device)
    with folder_lock(out, "simulate run"):  # one writer at a time
        return _simulate(cfg, Path(out), progress, force, device)


def _simulate(
    cfg: ModelConfig, out: Path | None, progress: Callable[[int], None] | None, force: bool, device: torch.device
) -> SimulateResult:
    key = config_hash(cfg.to_dict())
    if out is not None and not claim_run_folder(out, cfg.to_dict(), force=force):
        for stale in ("checkpoint.npz", "segments", "summary.json"):
            shutil.rmtree(out / stale) if (out / stale).is_dir() else (out / stale).unlink(missing_ok=True)
    model, x = cfg.build(), cfg.initial_tokens(device)
    streams, segments = make_streams(cfg.rng, cfg.seed, (), x.device), _Segments(out)
    ckpt = out / "checkpoint.npz" if out is not None else None
    state = _load_checkpoint(ckpt, key, streams, segments) if ckpt is not None else None
    if state is None:
        start = 0
        segments.append([0], x[None], cfg.beta)
    else:
        start, x = state
        x = x.to(device=device, dtype=cfg.torch_dtype)
    if progress and start:
        progress(start)
    hint = _nan_hint(cfg)
    while start < cfg.layers:
        stop = min(start + CHECKPOINT_LAYERS, cfg.layers)
        traj = model.run(
            x,
            saveat=SaveAt(every=cfg.save_every, observers=(lambda k, _t, xk: finite_state(xk, k, hint),)),
            streams=streams,
            start=start,
            stop=stop,
            progress=(lambda _l: progress(1)) if progress else None,
        )
        x, start = traj.final.clone(), stop  # a copy: a view would keep the segment's stack alive
        segments.append(traj.steps[1:].tolist(), traj.x[1:], cfg.beta)
        del traj  # its states are the segment's now (in memory, or in its file)
        if ckpt is not None and start < cfg.layers:
            states = np.stack([s.numpy() for s in streams.get_state()])
            count = np.array(len(segments.paths()))
            write_npz(
                ckpt,
                checksum=True,
                x=_np(x),
                layer=np.array(start),
                config_hash=np.array(key),
                generator_states=states,
                segments=count,
            )
    return _finish(cfg, out, model.dt, segments)


def _finish(cfg: ModelConfig, out: Path | None, dt: float, segments: _Segments) -> SimulateResult:
    """The result from the segments; with ``out``, the run directory's files."""
    metrics = segments.gather(("layers", *METRICS))
    layers = metrics["layers"]
    metrics = {"layers": layers, "t": layers * dt, **{k: metrics[k] for k in METRICS}}
    result = SimulateResult(
        **metrics,
        final_energy=float(metrics["energy"][-1]),
        final_mean_cos=float(metrics["mean_cos"][-1]),
        final_mean_abs_cos=float(metrics["mean_abs_cos"][-1]),
        final_clusters=int(metrics["clusters"][-1]),
        config=cfg.to_dict(),
        memory_estimate_bytes=memory_estimate(cfg),
        attention_method=method_used(cfg),
    )
    if out is None:
        return result
    write_run_metadata(out, cfg.to_dict(), cfg.seed)
    rows = [dict(zip(metrics, vals)) for vals in zip(*metrics.values())]
    write_csv(out / "metrics.csv", rows, list(metrics))
    item = torch.tensor([], dtype=cfg.torch_dtype).element_size()
    if len(layers) * cfg.tokens * cfg.dim * item <= TRAJECTORY_MAX_BYTES:
        write_npz(out / "trajectory.npz", x=segments.gather(("x",))["x"], layers=layers, t=metrics["t"])
        shutil.rmtree(out / "segments", ignore_errors=True)
    write_json(out / "summary.json", result.to_json())
    (out / "checkpoint.npz").unlink(missing_ok=True)
    checksum_path(out / "checkpoint.npz").unlink(missing_ok=True)
    return result
