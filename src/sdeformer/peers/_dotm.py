"""dotm (arXiv 2410.06833; HugoKoubbi/2024-transformers-dotm): dynamic metastability on the circle (BEYOND
section 10).

- ``kinetic.py``: n = 5 tokens from its fixed start ``Z0``, z <- LN(z + dt softmax(beta <z_i, z_j>) z_j),
  beta = 4, dt = 0.1, T = 400 (4001 states): sdeformer's discrete Post-LN model with softmax attention, V = I,
  no noise. Its statistic: the trajectory ``z`` ``(n, steps, d)`` (numpy's layout in the script).
- ``staircase.py``: n = 5 tokens at angles 0.5 c_k log(b0) / sqrt(b0) (c = 0, 0.5, 2, 4, 7; the script computes
  them once at b0 = 2000 and reuses them for every beta), the unnormalized attention's flow stepped by
  normalised gradient steps lr log(beta) (lr = 1e-5), its energy (1/n^2) sum e^{beta (cos - 1)} per step, for
  beta = 500, 1000, 1500, 2000, 3000, 4000. sdeformer runs it with ``peers._arclength.arclength_flow`` (the
  same path, its time as log t) and reports the saddles visited, their levels sum m_k^2 / n^2
  (``metastability.saddle_level``), the plateaus found (``metastability.plateaus`` in tau = log t / beta), the
  path length to one cluster and the final cluster count. The peer's energy turns NaN once the tokens have
  collapsed (its step divides by a zero gradient norm): ``as_published`` pads the energy the same way.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import torch

from ..attention._softmax import SoftmaxAttention
from ..core._errors import ConfigError
from ..dynamics._discrete import StochasticTransformer
from ..metastability import plateaus, saddle_level
from . import cells
from ._arclength import arclength_flow
from ._files import load_array
from ._progress import Plan, step as count_step

Z0 = [  # kinetic.py's start (n = 5, d = 2)
    [0.99806638, 0.06215705],
    [0.97712061, 0.21268594],
    [-0.24578194, 0.96932515],
    [-0.97354734, 0.2284854],
    [-0.99892629, -0.04632772],
]
BETAS = (500.0, 1000.0, 1500.0, 2000.0, 3000.0, 4000.0)
START_BETA, START_C = 2000.0, (0.0, 0.5, 2.0, 4.0, 7.0)
PEER_LR, PEER_ITER = 1e-5, 1_000_000
KINETIC = {"beta": 4.0, "horizon": 400.0, "dt": 0.1}  # kinetic.py's run: 4000 steps
PATH_BOUND = 0.8  # the staircase's path to one cluster from its start (0.475 - 0.735 measured, beta 2 - 9000)


def staircase_start() -> torch.Tensor:
    """staircase.py's start, ``(5, 2)`` float64 unit tokens."""
    g = math.log(START_BETA) / math.sqrt(START_BETA)
    angles = torch.tensor([0.5 * ((c * g) % math.pi) for c in START_C], dtype=torch.float64)
    return torch.stack([angles.cos(), angles.sin()], -1)


def kinetic(beta: float = 4.0, horizon: float = KINETIC["horizon"], dt: float = KINETIC["dt"]) -> np.ndarray:
    """kinetic.py's trajectory ``(n, steps + 1, d)``."""
    layers = round(horizon / dt)
    if not math.isclose(layers * dt, horizon):
        raise ConfigError("dt", dt, f"a divisor of the horizon {horizon:g}")
    model = StochasticTransformer(layers, horizon, None, SoftmaxAttention(beta))
    with torch.inference_mode():  # no autograd bookkeeping: a quarter of a small layer's cost
        # a batch of one (equal to the unbatched run bit for bit): a (1, n, d) state needs no views a layer
        x = model.run(torch.tensor(Z0, dtype=torch.float64).unsqueeze(0), progress=count_step).x[:, 0]  # (S, n, d)
    return x.transpose(0, 1).numpy()


def staircase(beta: float, ds: float = 1e-3, merge: float = 1e-2) -> dict:
    """One beta of staircase.py, by arclength: saddles, levels, plateaus, path length, clusters."""
    r = arclength_flow(staircase_start(), beta, ds=ds, merge=merge, progress=count_step)
    sizes = []
    for x in r.states:  # the saddles visited, in order (cluster sizes of each saved state)
        s = tuple(sorted(np.unique((x @ x.T > 1 - merge * merge / 2).numpy(), axis=0).sum(1).tolist(), reverse=True))
        if not sizes or sizes[-1] != s:
            sizes.append(s)
    tau, energy = r.log_t[1:] / beta, r.energy[1:]  # (S - 1,): after the start (t = 0)
    keep = np.r_[True, np.diff(tau) > 0]  # times that advanced in float64
    found = plateaus(tau[keep], energy[keep], beta, scale="linear") if keep.sum() >= 3 else []
    return {
        "beta": beta,
        "saddles": [list(s) for s in sizes],
        "levels": [saddle_level(s) for s in sizes],
        "plateau_levels": [p.level for p in found],
        "plateau_tau": [[p.tau_start, p.tau_end] for p in found],
        "log_t_end": float(r.log_t[-1]),
        "path_length": r.steps * ds,
        "final_clusters": int(r.clusters[-1]),
        "done": r.done,
        "steps": r.steps,
    }


def run(part: str = "staircase", beta=None, as_published: bool = False, ds: float = 1e-3) -> dict:
    """``part``: "staircase" (at ``beta``, default the script's six) or "kinetic" (beta default 4)."""
    if part == "kinetic":
        z = kinetic(4.0 if beta is None else float(np.atleast_1d(beta)[0]))
        return {"peer": "dotm", "part": part, "z": z.tolist(), "final_clusters": _clusters(z[:, -1])}
    if part != "staircase":
        raise ConfigError("part", part, "kinetic or staircase")
    rows = [staircase(float(b), ds) for b in np.atleast_1d(BETAS if beta is None else beta)]
    out = {"peer": "dotm", "part": part, "as_published": as_published, "runs": rows}
    if as_published:  # the peer's energy per step lr log(beta) of path, NaN after the collapse
        for row in rows:
            steps = math.ceil(row["path_length"] / (PEER_LR * math.log(row["beta"])))
            row["peer_nan_after"] = min(steps, PEER_ITER)
    return out


def plan(part: str = "staircase", beta=None, ds: float = 1e-3, **_options) -> Plan:
    """The run's size (``peers._progress.Plan``): kinetic.py's 4000 steps (memory: a torch tensor per saved state,
    the trajectory and its nested list of Python floats: 5.3 MB measured), or per beta of the staircase at most
    ``PATH_BOUND / ds`` arclength steps (it ends when the tokens merge)."""
    if part == "kinetic":
        b = KINETIC["beta"] if beta is None else float(np.atleast_1d(beta)[0])
        steps = round(KINETIC["horizon"] / KINETIC["dt"])
        memory = (steps + 1) * (600 + len(Z0) * (2 * (2 * 8 + 32) + 72))  # a tensor per state; 2 floats, a list
        return Plan((steps,), lambda n: kinetic(b, n * KINETIC["dt"]), memory, ("part", part))
    if part != "staircase":
        raise ConfigError("part", part, "kinetic or staircase")
    betas = [float(b) for b in np.atleast_1d(BETAS if beta is None else beta)]
    bound = math.ceil(PATH_BOUND / ds)
    memory = 2048 * bound  # a tensor per saved state, its log time, energy and count (1.2 MB measured, 3 betas)
    top = max(betas)

    def trial(n: int) -> None:
        arclength_flow(staircase_start(), top, ds=ds, max_steps=n)

    return Plan((bound,) * len(betas), trial, memory, ("beta", betas), exact=False)


def _clusters(x: np.ndarray, threshold: float = 0.999) -> int:
    return int(np.unique(x @ x.T > threshold, axis=0).shape[0])


def write(result: dict, folder: Path) -> list[Path]:
    """kinetic: ``z.npy`` (the script's array); staircase: ``staircase.csv`` (one row per beta)."""
    if result["part"] == "kinetic":
        path = folder / "z.npy"
        np.save(path, np.asarray(result["z"]))
        return [path]
    path = folder / "staircase.csv"
    lines = ["beta,saddles,final_clusters,path_length,log_t_end"]
    for r in result["runs"]:
        saddles = " ".join("-".join(map(str, s)) for s in r["saddles"])
        lines.append(f"{r['beta']:g},{saddles},{r['final_clusters']},{r['path_length']:.6f},{r['log_t_end']:.6f}")
    path.write_text("\n".join(lines) + "\n")
    return [path]


def compare(result: dict, path: Path) -> dict:
    """kinetic: cells of the peer's saved ``z`` (.npy) equal within 1e-6. staircase: the peer's energies per
    beta (its printed output, ``python staircase.py > out.txt``, or a JSON {"E": {beta: [...]}}): per beta, the
    final finite energy (1: one cluster) and the ratio of the path lengths to the collapse (the peer's steps
    before NaN times lr log(beta), over ours), each within 0.05 of 1 (the merge distance shortens our path by a
    few percent)."""
    if result["part"] == "kinetic":
        return cells(result["z"], load_array(path, "the peer's z saved by np.save"), 1e-6)
    peer = _peer_energies(path)
    ours, theirs, lengths = [], [], []
    for r in result["runs"]:
        e = np.asarray(peer.get(f"{r['beta']:g}", peer.get(str(int(r["beta"])), [])), float)
        if e.size == 0:
            raise ConfigError("compare", str(path), f"no energies for beta = {r['beta']:g}")
        last = int(np.argmax(np.isnan(e))) if np.isnan(e).any() else e.size
        lengths.append(last * PEER_LR * math.log(r["beta"]))
        ours += [1.0, 1.0]
        theirs += [float(e[last - 1]), lengths[-1] / r["path_length"]]  # final energy, path length ratio
    out = cells(ours, theirs, 0.05)
    out["peer_path_length"] = lengths
    return out


def _peer_energies(path: Path) -> dict[str, list[float]]:
    """The staircase script's energy list per beta: from a JSON {"E": {beta: [...]}}, or from what the script
    prints (``print(theta0)``, a numpy array without commas, then ``print(E)`` once per beta of ``BETAS`` in
    order: a Python list on one line, its floats bare or as ``np.float64(...)``, NaN as ``nan``)."""
    import json

    text = path.read_text()
    try:
        return json.loads(text)["E"]
    except (ValueError, KeyError, TypeError):
        pass
    lists = [line.strip() for line in text.splitlines() if line.startswith("[") and "," in line]
    if len(lists) != len(BETAS):
        raise ConfigError("compare", str(path), f"the script's printed energies, one list per beta {BETAS}")
    numbers = [re.findall(r"nan|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", x.replace("np.float64", "")) for x in lists]
    return {f"{b:g}": [float(v) for v in row] for b, row in zip(BETAS, numbers)}
