"""Convergence rates of THEORY section 5, measured on coupled runs.

- depth: E sup_l (1/N) sum_i |X_i^L(t_l) - X_i(t_l)|^2 against L (discrete model, Gaussian field, vs a
  fine SDE path with the same Brownian increments); theory: slope -1 on grid times.
- width: the same error between width m and infinite width at fixed L (Gram square-root coupling);
  theory: slope -1 for a Lipschitz activation.
- tokens: E sup_t W_2^2(mu^N_t, mu_t) against N, mu_t a large reference cloud under the same random-feature
  field (the SPDE in Lagrangian form); theory (an upper bound): r_d(N) = N^{-1/2} (d <= 4), N^{-2/d} (d > 4).

Each returns a dict with the keys ``kind, x, error, slope, slope_ci, expected_slope`` plus ``samples``
(len(x), R), ``settings`` and ``wall_s``.
"""

from __future__ import annotations

import functools
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import torch

from ..attention import SoftmaxAttention
from ..coupling import depth_coupled, width_coupled
from ..diagnostics import bootstrap_slope, loglog_slope
from ..errors import ConfigError
from ..meanfield import run_clouds, sup_w2_sq
from ..fields import GaussianField, RandomFeatureField
from ..sphere import uniform_sphere

KINDS = ("depth", "width", "tokens")

# Defaults per kind (full scale); QUICK overrides them for the quick report and tests.
DEFAULTS: dict[str, dict[str, Any]] = {
    "depth": dict(runs=32, tokens=4, dim=8, activation="relu", bias_std=0.1, horizon=1.0,
                  x=[8, 16, 32, 64, 128], fine=2048),
    "width": dict(runs=32, tokens=4, dim=8, activation="relu", bias_std=0.1, horizon=1.0, layers=20,
                  x=[16, 32, 64, 128, 256, 512]),
    "tokens": dict(runs=8, dim=3, activation="relu", bias_std=0.1, horizon=1.0, steps=20, features=256,
                   reference=2048, x=[8, 16, 32, 64, 128], saves=2),
}
QUICK: dict[str, dict[str, Any]] = {
    "depth": dict(runs=16, x=[4, 8, 16, 32], fine=256),
    "width": dict(runs=16, x=[16, 32, 64, 128, 256], layers=10),
    "tokens": dict(runs=4, reference=384, x=[8, 16, 32, 64], steps=5, features=128, saves=1),
}


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run a block with ``n`` intra-op threads: loops over tiny tensors (N <= 64) are many times faster on
    one thread than on a busy shared pool, where every small op pays a thread hand-off."""
    old = torch.get_num_threads()
    torch.set_num_threads(max(1, min(int(n), old)))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def single_threaded(fn: Callable) -> Callable:
    """Decorator: run ``fn`` inside ``torch_threads(1)``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with torch_threads(1):
            return fn(*args, **kwargs)

    return wrapper


def token_rate_bound(d: int) -> float:
    """Log-log slope of r_d(N) (THEORY section 5; the log factor at d = 4 is ignored)."""
    return -0.5 if d <= 4 else -2.0 / d


EXPECTED = {"depth": -1.0, "width": -1.0}


def settings_for(kind: str, quick: bool = False, **overrides: Any) -> dict[str, Any]:
    """Resolved settings for ``kind``; unknown keys or kinds raise ConfigError."""
    if kind not in KINDS:
        raise ConfigError("kind", kind, f"one of {list(KINDS)}")
    s = {**DEFAULTS[kind], **(QUICK[kind] if quick else {}), "beta": 1.0, "attention_scale": 1.0, "seed": 0}
    for key, value in overrides.items():
        if value is None:
            continue
        if key not in s:
            raise ConfigError("setting", key, f"allowed for {kind}: {sorted(s)}")
        s[key] = value
    if int(s["runs"]) < 2:
        raise ConfigError("runs", s["runs"], "need at least 2 runs for an interval")
    return s


def measure(kind: str, quick: bool = False, progress: Callable[[int], None] | None = None,
            **overrides: Any) -> dict[str, Any]:
    """Measure the ``kind`` rate (see module docstring)."""
    s = settings_for(kind, quick, **overrides)
    start = time.perf_counter()
    attention = SoftmaxAttention(float(s["beta"]), float(s["attention_scale"]))
    x = [int(v) for v in s["x"]]
    with torch_threads(1 if kind != "tokens" else torch.get_num_threads()):
        samples, expected = _samples(kind, s, x, attention, progress)
    samples = samples.double().cpu().numpy()  # (len(x), R)
    error = samples.mean(1)
    return {
        "kind": kind, "x": x, "error": error.tolist(), "slope": loglog_slope(x, error),
        "slope_ci": list(bootstrap_slope(x, samples, seed=s["seed"])), "expected_slope": expected,
        "samples": samples.tolist(), "settings": s, "wall_s": time.perf_counter() - start,
    }


def _samples(kind: str, s: dict, x: list[int], attention, progress) -> tuple[torch.Tensor, float]:
    if kind == "tokens":
        samples = _tokens(s, x, attention, progress)
        expected = token_rate_bound(int(s["dim"]))
    else:
        x0 = uniform_sphere(s["tokens"], s["dim"], batch=(s["runs"],), seed=s["seed"] + 7, dtype=torch.float64)
        if kind == "depth":
            field = GaussianField(s["activation"], s["bias_std"], s["bias_std"])
            samples = depth_coupled(x0, x, int(s["fine"]), s["horizon"], field, attention, seed=s["seed"])
        else:
            samples = width_coupled(x0, x, int(s["layers"]), s["horizon"], s["activation"], s["bias_std"],
                                    s["bias_std"], attention, seed=s["seed"])
        expected = EXPECTED[kind]
    return samples, expected


def _tokens(s: dict, sizes: list[int], attention, progress) -> torch.Tensor:
    """sup_t W_2^2 between N-token clouds and the reference cloud, all under one random-feature field."""
    R, d = int(s["runs"]), int(s["dim"])
    if max(sizes) * 4 > int(s["reference"]):
        raise ConfigError("reference", s["reference"], f"must be at least 4x the largest N ({max(sizes)})")
    field = RandomFeatureField(s["activation"], int(s["features"]), d, s["bias_std"], s["bias_std"],
                               seed=s["seed"] + 11, batch=(R,), dtype=torch.float64)
    clouds = [uniform_sphere(n, d, batch=(R,), seed=s["seed"] * 1000 + n, dtype=torch.float64) for n in sizes]
    ref = uniform_sphere(int(s["reference"]), d, batch=(R,), seed=s["seed"] * 1000 + 999, dtype=torch.float64)
    save_every = max(1, int(s["steps"]) // max(1, int(s["saves"])))
    trajs = run_clouds([ref, *clouds], field, attention, s["horizon"], int(s["steps"]), seed=s["seed"],
                       save_every=save_every)
    out = []
    for traj in trajs[1:]:
        out.append(sup_w2_sq(traj, trajs[0]))  # (R,)
        if progress is not None:
            progress(1)
    return torch.stack(out)


def summary_line(result: dict[str, Any]) -> str:
    lo, hi = result["slope_ci"]
    return (f"{result['kind']}: slope {result['slope']:.3f} (95% bootstrap [{lo:.3f}, {hi:.3f}]), "
            f"theory {result['expected_slope']:.3f}, {result['wall_s']:.1f} s")


def public(result: dict[str, Any]) -> dict[str, Any]:
    """The JSON object of ``sdeformer rates --json`` (the required keys plus settings and wall time)."""
    keys = ("kind", "x", "error", "slope", "slope_ci", "expected_slope", "settings", "wall_s")
    return {k: result[k] for k in keys}

