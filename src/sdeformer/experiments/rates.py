"""Convergence rates of THEORY section 5, measured on coupled runs.

- depth: E sup_l (1/N) sum_i |X_i^L(t_l) - X_i(t_l)|^2 against L (discrete model, Gaussian field, vs a
  fine SDE path with the same Brownian increments); theory: slope -1 on grid times.
- width: the same error between width m and infinite width at fixed L (Gram square-root coupling);
  theory: slope -1 for a Lipschitz activation.
- tokens: E sup_t W_2^2(mu^N_t, mu_t) against N, mu_t a large reference cloud under the same random-feature
  field (the SPDE in Lagrangian form); theory (an upper bound): r_d(N) = N^{-1/2} (d <= 4), N^{-2/d} (d > 4).
  With ``coupled=False`` the reference cloud gets Brownian normals independent of the small clouds' (same
  features): the control that shows the rate comes from the coupling (the error then stops falling with N).

``measure`` returns a ``RatesResult``; ``run_and_write`` also writes ``rates_<kind>.json`` (its ``to_json()``:
kind, x, error, slope, slope_ci, expected_slope, settings, wall_s), ``rates_<kind>.npz`` (x, samples) and
``rates_<kind>.png``. The seeds of initial tokens, noise, fields and bootstrap derive from one root seed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..attention import SoftmaxAttention
from ..coupling import depth_coupled, width_coupled
from ..diagnostics import bootstrap_slope, loglog_slope
from ..errors import ConfigError
from ..fields import GaussianField, RandomFeatureField
from ..meanfield import run_clouds, sup_w2_sq
from ..rng import derive_seeds
from ..sphere import uniform_sphere
from ..store import read_cached_npz, write_cached_npz
from .results import Result, read_cached_json, write_cached_json
from .threads import torch_threads

KINDS = ("depth", "width", "tokens")

# Defaults per kind (full scale); QUICK overrides them for the quick report and tests.
DEFAULTS: dict[str, dict[str, Any]] = {
    "depth": dict(
        runs=32, tokens=4, dim=8, activation="relu", bias_std=0.1, horizon=1.0, x=[8, 16, 32, 64, 128], fine=2048
    ),
    "width": dict(
        runs=32, tokens=4, dim=8, activation="relu", bias_std=0.1, horizon=1.0, layers=20, x=[16, 32, 64, 128, 256, 512]
    ),
    "tokens": dict(
        runs=8,
        dim=3,
        activation="relu",
        bias_std=0.1,
        horizon=1.0,
        steps=20,
        features=256,
        reference=2048,
        x=[8, 16, 32, 64, 128],
        saves=2,
        coupled=True,
    ),
}
QUICK: dict[str, dict[str, Any]] = {
    "depth": dict(runs=16, x=[4, 8, 16, 32], fine=256),
    "width": dict(runs=16, x=[16, 32, 64, 128, 256], layers=10),
    "tokens": dict(runs=4, reference=384, x=[8, 16, 32, 64], steps=5, features=128, saves=1),
}


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


@dataclass(frozen=True)
class RatesResult(Result):
    """One measured rate: error ``(len(x),)`` = mean of ``samples`` ``(len(x), R)``, its log-log slope with a 95%
    bootstrap interval, and the theory's slope (THEORY section 5)."""

    JSON_KEYS = ("kind", "x", "error", "slope", "slope_ci", "expected_slope", "settings", "wall_s")
    kind: str
    x: list[int]
    error: list[float]
    slope: float
    slope_ci: list[float]
    expected_slope: float
    samples: np.ndarray
    settings: dict[str, Any]
    wall_s: float

    def summary(self) -> str:
        """One line for the terminal."""
        lo, hi = self.slope_ci
        return (
            f"{self.kind}: slope {self.slope:.3f} (95% bootstrap [{lo:.3f}, {hi:.3f}]), "
            f"theory {self.expected_slope:.3f}, {self.wall_s:.1f} s"
        )


def progress_units(kind: str, s: dict[str, Any]) -> int:
    """How often ``measure`` calls ``progress(1)`` for ``kind`` with resolved settings ``s``."""
    return len(s["x"]) if kind == "tokens" else 1


def measure(
    kind: str, quick: bool = False, progress: Callable[[int], None] | None = None, **overrides: Any
) -> RatesResult:
    """Measure the ``kind`` rate (see module docstring)."""
    s = settings_for(kind, quick, **overrides)
    start = time.perf_counter()
    attention = SoftmaxAttention(float(s["beta"]), float(s["attention_scale"]))
    x = [int(v) for v in s["x"]]
    x_seed, noise_seed, boot_seed = derive_seeds(int(s["seed"]), 3)
    with torch_threads(1 if kind != "tokens" else torch.get_num_threads()):
        samples, expected = _samples(kind, s, x, attention, (x_seed, noise_seed), progress)
    samples = samples.double().cpu().numpy()  # (len(x), R)
    error = samples.mean(1)  # (len(x),)
    return RatesResult(
        kind=kind,
        x=x,
        error=error.tolist(),
        slope=loglog_slope(x, error),
        slope_ci=list(bootstrap_slope(x, samples, seed=boot_seed)),
        expected_slope=expected,
        samples=samples,
        settings=s,
        wall_s=time.perf_counter() - start,
    )


def run_and_write(
    out: Path, kind: str, quick: bool = False, progress: Callable[[int], None] | None = None, **overrides: Any
) -> RatesResult:
    """``measure``, then write ``rates_<kind>.json``, ``.npz`` (x, samples) and ``.png`` into ``out``."""
    from ..plots.checks import rate_figure

    key = {"check": "rates", "kind": kind, "quick": quick, **overrides}
    cached, arrays = read_cached_json(Path(out) / f"rates_{kind}.json", key), None
    if cached is not None:
        arrays = read_cached_npz(Path(out) / f"rates_{kind}.npz", key)
    if cached is not None and arrays is not None:  # the same check finished earlier: reuse it
        fields = {k: cached[k] for k in RatesResult.JSON_KEYS}
        return RatesResult(**fields, samples=arrays["samples"])
    result = measure(kind, quick, progress, **overrides)
    write_cached_npz(Path(out) / f"rates_{kind}.npz", key, x=np.array(result.x), samples=result.samples)
    write_cached_json(Path(out) / f"rates_{kind}.json", key, result)
    rate_figure(result, Path(out) / f"rates_{kind}.png")
    return result


def _samples(
    kind: str, s: dict, x: list[int], attention, seeds: tuple[int, int], progress
) -> tuple[torch.Tensor, float]:
    """Errors ``(len(x), R)`` and the theory's slope; ``seeds`` = (initial tokens, noise)."""
    x_seed, noise_seed = seeds
    if kind == "tokens":
        return _tokens(s, x, attention, seeds, progress), token_rate_bound(int(s["dim"]))
    x0 = uniform_sphere(s["tokens"], s["dim"], batch=(s["runs"],), seed=x_seed, dtype=torch.float64)  # (R, N, d)
    if kind == "depth":
        field = GaussianField(s["activation"], s["bias_std"], s["bias_std"])
        samples = depth_coupled(x0, x, int(s["fine"]), s["horizon"], field, attention, seed=noise_seed)
    else:
        samples = width_coupled(
            x0,
            x,
            int(s["layers"]),
            s["horizon"],
            s["activation"],
            s["bias_std"],
            s["bias_std"],
            attention,
            seed=noise_seed,
        )
    if progress is not None:
        progress(1)
    return samples, EXPECTED[kind]


def _tokens(s: dict, sizes: list[int], attention, seeds: tuple[int, int], progress) -> torch.Tensor:
    """sup_t W_2^2 between N-token clouds and the reference cloud, all under one random-feature field."""
    R, d = int(s["runs"]), int(s["dim"])
    if max(sizes) * 4 > int(s["reference"]):
        raise ConfigError("reference", s["reference"], f"must be at least 4x the largest N ({max(sizes)})")
    x_seed, noise_seed = seeds
    field_seed, ref_seed, *cloud_seeds = derive_seeds(x_seed, 2 + len(sizes))
    field = RandomFeatureField(
        s["activation"],
        int(s["features"]),
        d,
        s["bias_std"],
        s["bias_std"],
        seed=field_seed,
        batch=(R,),
        dtype=torch.float64,
    )
    clouds = [uniform_sphere(n, d, batch=(R,), seed=cs, dtype=torch.float64) for n, cs in zip(sizes, cloud_seeds)]
    ref = uniform_sphere(int(s["reference"]), d, batch=(R,), seed=ref_seed, dtype=torch.float64)  # (R, M, d)
    save_every = max(1, int(s["steps"]) // max(1, int(s["saves"])))
    ref_noise = noise_seed if s["coupled"] else derive_seeds(noise_seed, 1)[0]  # same path, or independent

    def run(group: list[torch.Tensor], seed: int) -> list:
        return run_clouds(group, field, attention, s["horizon"], int(s["steps"]), seed=seed, save_every=save_every)

    [reference] = run([ref], ref_noise)
    out = []
    for traj in run(clouds, noise_seed):
        out.append(sup_w2_sq(traj, reference))  # (R,)
        if progress is not None:
            progress(1)
    return torch.stack(out)
