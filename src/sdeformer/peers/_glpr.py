"""GLPR (Geshkovski, Letrouit, Polyanskiy, Rigollet; borjanG/2023-transformers-rotf, 538ba83): the (beta, t) phase
diagram of ``phase-diagrams.py``, the pooled fraction of token pairs with cosine above 0.999 (THEORY section 1;
BEYOND section 5 for its random matrices).

The peer's conventions, built in here (shared with simuformer in ``peers._phase``):
- its draws, in its order, float64 (it sets the default dtype first), from torch's default generator (``seed``):
  per beta the tokens ``randn(batch, N, d)`` normalized, then Q^T K (``random_kq`` 0 identity, 1 A B / sqrt d,
  2 its first Wigner: (G + G^T) with the diagonal over 2 and the rest over sqrt 2, 3 (G + G^T) / sqrt 2) and V
  (``random_v`` 0 identity, 1 G G^T / sqrt d, 2 and 3 +-Q^T K / (sqrt d, sqrt(d + 1) for kq 3, 1 for kq 0));
  ``noanneal`` 0: per run (``(B, d, d)`` matrices), 1: per beta, 2: one for the sweep drawn before it;
  ``regen_period`` P > 0: new matrices after the first step whose time exceeds P, 2P, ...;
- weights from beta x_i^T BF x_j: softmax (``use_softmax``) or, its default, exp(.) / N
  (``UnnormalizedAttention``) with the step divided by max(sqrt(beta) e^{beta - 1/2}, 1); values x_j @ V;
- Post-LN: LN(x + eta A) (``StochasticTransformer``), no noise;
- its clock: t += eta, checkpoint c after the first step whose time reaches times[c] (200 of them over
  [0, maxtime]; maxtime 30 with softmax, 1 without), the run stopping once t >= maxtime;
- its statistic in float64, written as its pickle (``betas_list``, ``times_list``, ``density_tensor``,
  ``cluster_tensor``, ``args``).
"""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import numpy as np
import torch

from ..core._errors import ConfigError
from ..core._validate import nonneg_float, positive_float, positive_int
from ..dynamics._norms.schemes import PostLN
from ..io._atomic import atomic_write_bytes
from . import cells
from ._files import check_shape, load_pickle
from ._phase import heads, median_clusters, pair_fraction, run_segments, span_dimension

CHECKPOINTS = 200  # the script's fixed time grid
DEFAULTS = {  # phase-diagrams.py's defaults
    "batch": 2048,
    "tokens": 32,
    "dim": 2,
    "betamin": 0.1,
    "betamax": 9.0,
    "betas": 90,
    "maxtime": 0.0,  # 0: 30 with softmax, 1 without
    "step": 0.1,
    "use_softmax": False,
    "random_kq": 0,
    "random_v": 0,
    "noanneal": 0,
    "regen_period": 0.0,
    "rawstep": False,  # without softmax: keep the step (else divided by max(sqrt(beta) e^{beta - 1/2}, 1))
    "plotdim": False,  # the statistic: the mean dimension of the tokens' span (``_phase.span_dimension``)
    "cluster_sizes": False,  # its cluster_tensor: the median cluster count (``_phase.median_clusters``)
}


def settings(**options) -> dict:
    """phase-diagrams.py's defaults overridden by ``options``; ConfigError naming a bad one."""
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise ConfigError(unknown[0], options[unknown[0]], f"one of {sorted(DEFAULTS)}")
    s = {**DEFAULTS, **options}
    for name in ("batch", "tokens", "dim", "betas"):
        s[name] = positive_int(name, s[name])
    s["step"] = positive_float("step", s["step"])
    s["maxtime"] = nonneg_float("maxtime", s["maxtime"]) or (30.0 if s["use_softmax"] else 1.0)
    s["regen_period"] = nonneg_float("regen_period", s["regen_period"])
    for name in ("use_softmax", "rawstep", "plotdim", "cluster_sizes"):
        if not isinstance(s[name], bool):
            raise ConfigError(name, s[name], "true or false")
    for name, top in (("random_kq", 3), ("random_v", 3), ("noanneal", 2)):
        if s[name] not in range(top + 1):
            raise ConfigError(name, s[name], f"an integer 0..{top}")
    return s


def draw_matrices(g: torch.Generator, s: dict) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(BF, V) ``(pp, d, d)`` float64 in the peer's order (V None for the identity)."""
    pp, d, kq = (1 if s["noanneal"] else s["batch"]), s["dim"], s["random_kq"]
    shape = (pp, d, d)

    def randn() -> torch.Tensor:
        return torch.randn(shape, generator=g, dtype=torch.float64)

    if kq == 1:
        bf, norm_v = randn() @ randn() / np.sqrt(d), np.sqrt(d)
    elif kq == 2:
        b = randn()
        bf, norm_v = (b + b.transpose(1, 2)) / (torch.eye(d) * (2 - math.sqrt(2)) + math.sqrt(2)), np.sqrt(d)
    elif kq == 3:
        b = randn()
        bf, norm_v = (b + b.transpose(1, 2)) / math.sqrt(2), np.sqrt(d + 1)
    else:
        bf, norm_v = torch.eye(d, dtype=torch.float64)[None], 1.0
    if s["random_v"] == 1:
        v = randn()
        return bf, v @ v.transpose(-2, -1) / np.sqrt(d)
    if s["random_v"] in (2, 3):
        return bf, (bf if s["random_v"] == 2 else -bf) / norm_v
    return bf, None


def eta(beta: float, s: dict) -> float:
    """The script's step: ``step``, divided by max(sqrt(beta) e^{beta - 1/2}, 1) without softmax (unless
    ``rawstep``)."""
    if s["use_softmax"] or s["rawstep"]:
        return s["step"]
    return s["step"] / max(np.sqrt(np.float64(beta)) * np.exp(np.float64(beta) - 1 / 2), 1)


def clock(h: float, s: dict) -> tuple[list[int], list[int]]:
    """The script's loop at step ``h``: the step after which each checkpoint is recorded, and the steps after which
    the matrices are redrawn."""
    times = torch.linspace(0, s["maxtime"], CHECKPOINTS, dtype=torch.float64).tolist()
    regen = s["regen_period"] if s["regen_period"] > 0 else math.inf
    t, k, record, redraws = 0.0, 0, [], []
    while True:
        t, k = t + h, k + 1
        while len(record) < len(times) and t >= times[len(record)]:
            record.append(k)
        if t >= s["maxtime"]:
            return record, redraws
        if t > regen:
            redraws.append(k)
            regen += s["regen_period"]


def run_beta(beta: torch.Tensor, g: torch.Generator, shared, s: dict) -> list[tuple[float, float]]:
    """One beta: the peer's draws, the run in segments between redraws; per checkpoint its pair fraction (or
    span dimension, ``plotdim``) and its median cluster count (0 without ``cluster_sizes``)."""
    x = torch.nn.functional.normalize(
        torch.randn(s["batch"], s["tokens"], s["dim"], generator=g, dtype=torch.float64), dim=2
    )
    mats = [shared or draw_matrices(g, s)]

    def redraw():
        if not shared:
            mats[0] = draw_matrices(g, s)

    h = float(eta(float(beta), s))
    record, redraws = clock(h, s)
    return run_segments(
        x, PostLN(), h, record, redraws, lambda: heads(beta, mats, s["use_softmax"]), redraw,
        lambda y: statistics(y, s),
    )  # fmt: skip


def statistics(y: torch.Tensor, s: dict) -> tuple[float, float]:
    """The script's ``check_stats`` in float64: (density or span dimension, median clusters or 0)."""
    f64 = torch.float64
    density = span_dimension(y, f64, True) if s["plotdim"] else pair_fraction(y, f64, sphere=True)  # Post-LN
    return density, median_clusters(y, f64, True) if s["cluster_sizes"] else 0.0


def run(seed: int = 67280421310721, beta=None, **options) -> dict:
    """phase-diagrams.py's sweep (``options``: the keys of ``DEFAULTS``; ``beta``: these betas instead of its
    grid): per cell (beta, checkpoint) the pooled fraction of pairs above 0.999."""
    s = settings(**options)
    g = torch.Generator().manual_seed(int(seed))
    grid = torch.linspace(s["betamin"], s["betamax"], s["betas"], dtype=torch.float64)
    betas = grid if beta is None else torch.tensor(beta, dtype=torch.float64)
    shared = None
    if s["noanneal"] == 2:  # the script's throwaway instance at beta = 0: its tokens, then the matrices kept
        torch.randn(s["batch"], s["tokens"], s["dim"], generator=g, dtype=torch.float64)
        shared = draw_matrices(g, s)
    with torch.no_grad():
        cells = [run_beta(b, g, shared, s) for b in betas]
    return {
        "peer": "glpr",
        "settings": s,
        "betas": betas.tolist(),
        "times": torch.linspace(0, s["maxtime"], CHECKPOINTS, dtype=torch.float64).tolist(),
        "density": [[c[0] for c in row] for row in cells],
        "cluster": [[c[1] for c in row] for row in cells],
    }


def write(result: dict, folder: Path) -> list[Path]:
    """The script's pickle: betas_list, times_list, density_tensor, cluster_tensor (zeros without cluster_sizes),
    args."""
    density = torch.tensor(result["density"], dtype=torch.float64)
    table = {
        "args": dict(result["settings"]),
        "betas_list": torch.tensor(result["betas"], dtype=torch.float64),
        "times_list": torch.tensor(result["times"], dtype=torch.float64),
        "density_tensor": density,
        "cluster_tensor": torch.tensor(result["cluster"], dtype=torch.float64),
    }
    s = result["settings"]
    name = f"glpr_d{s['dim']}_n{s['tokens']}_V{s['random_v']}_KQ{s['random_kq']}_softmax{s['use_softmax']}.pkl"
    return [atomic_write_bytes(folder / name, pickle.dumps(table))]


def compare(result: dict, path: Path) -> dict:
    """Cells of the script's ``density_tensor`` (its pickle; with ``cluster_sizes`` its ``cluster_tensor`` too)
    equal to ours: the same count."""
    table = load_pickle(path, "the script's result pickle")  # arrays and plain containers only
    if not isinstance(table, dict) or "density_tensor" not in table:
        raise ConfigError("compare", str(path), "the script's result pickle (with density_tensor)")
    keys = ("density", "cluster") if result["settings"]["cluster_sizes"] else ("density",)
    check_shape(path, table["density_tensor"], result["density"])
    ours = np.concatenate([np.ravel(result[k]) for k in keys])
    theirs = np.concatenate([torch.as_tensor(table[f"{k}_tensor"]).double().numpy().ravel() for k in keys])
    return cells(ours, theirs, 1e-12)
