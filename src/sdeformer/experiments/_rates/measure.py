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
kind, x, error, slope, slope_ci, expected_slope, settings, wall_s) and ``rates_<kind>.npz`` (x, samples); its
caller draws ``RatesResult.figure`` (``plots._checks.rate_figure``). The seeds of initial tokens, noise, fields and
bootstrap derive from one root seed, every run's from the roots (``rate_runs``): the runs go in chunks of
``chunk``, one ``sweeps.Job`` each, on the local or a Dask executor, with the same numbers on either;
``run_and_write`` keeps their parts in ``out/parts``, so an interrupted measurement resumes with the chunks it lacks.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...core._errors import ConfigError
from ...core._kernel import kernel_theory
from ...core._rng import GENERATOR_BYTES, derive_seeds
from ...core._validate import dimension, fits_in_memory, positive_float, positive_int, seed as check_seed
from ...io._cache import read_cached_npz, write_cached_npz
from ...observables import bootstrap_slope, loglog_slope
from .._results import Result, read_cached_json, write_cached_json
from .runs import rate_runs

KINDS = ("depth", "width", "tokens")
# Runs per job (the numbers do not depend on it). Depth and width runs are tiny tensors whose cost is per step, not
# per run (the full depth rate: 4.4 s in one chunk of 32, 7.7 s in two of 16, 10 s in four of 8), so they stay in
# one job at the default sizes; the token runs cost in proportion to the runs (the reference cloud), so they split.
CHUNK = {"depth": 32, "width": 32, "tokens": 2}

# Defaults per kind (full scale); QUICK overrides them for the quick report and tests.
# what the depth and width measurements share (the coupled runs of THEORY section 5 at N = 4, d = 8)
_COUPLED: dict[str, Any] = dict(runs=32, tokens=4, dim=8, activation="relu", bias_std=0.1, horizon=1.0)
DEFAULTS: dict[str, dict[str, Any]] = {
    "depth": {**_COUPLED, "x": [8, 16, 32, 64, 128], "fine": 2048, "chunk": CHUNK["depth"]},
    "width": {**_COUPLED, "layers": 20, "x": [16, 32, 64, 128, 256, 512], "chunk": CHUNK["width"]},
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
        chunk=CHUNK["tokens"],
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
    """Resolved settings for ``kind``; unknown keys or kinds and settings that cannot be measured raise
    ConfigError."""
    if kind not in KINDS:
        raise ConfigError("kind", kind, f"one of {list(KINDS)}")
    s = {**DEFAULTS[kind], **(QUICK[kind] if quick else {}), "beta": 1.0, "attention_scale": 1.0, "seed": 0}
    for key, value in overrides.items():
        if value is None:
            continue
        if key not in s:
            raise ConfigError("setting", key, f"allowed for {kind}: {sorted(s)}")
        s[key] = value
    _check(kind, s)
    return s


def _check(kind: str, s: dict[str, Any]) -> None:
    """ConfigError for resolved settings ``s`` that cannot be measured (cheap: before any run starts)."""
    if positive_int("runs", s["runs"]) < 2:
        raise ConfigError("runs", s["runs"], "need at least 2 runs for an interval")
    positive_int("chunk", s["chunk"])
    check_seed("seed", s["seed"])
    positive_float("horizon", s["horizon"])
    x = [positive_int("x", v) for v in s["x"]]
    if len(x) < 2:
        raise ConfigError("x", s["x"], "at least two values for a slope")
    kernel_theory(s["activation"], dimension("dim", s["dim"]), bias_std=s["bias_std"])  # activation, d, bias std
    if kind == "depth":
        for L in x:
            if positive_int("fine", s["fine"]) % L:
                raise ConfigError("layers", L, f"must divide the fine steps {s['fine']}")
    if kind == "tokens" and max(x) * 4 > positive_int("reference", s["reference"]):
        raise ConfigError("reference", s["reference"], f"must be at least 4x the largest N ({max(x)})")
    fits_in_memory("runs/x/dim", (s["runs"], max(x), s["dim"]), memory_estimate(kind, s))


def memory_estimate(kind: str, s: dict[str, Any]) -> int:
    """Bytes of a measurement at its peak, before anything runs: the samples and a generator per run, and one
    chunk of C runs at once as float64 temporaries of its largest tensors: 4 of the tokens (C, N, d); at width m 2
    of the hidden layer and draws (C, m, N + d) (20 MB measured for C = 4, m = 2 10^5, 153 MB estimated); for the
    token rate 4 of the clouds and the reference under the features (C, M + sum N, features + d) and of one cost
    matrix (C, N, M) per saved time."""
    runs, x, d = int(s["runs"]), [int(v) for v in s["x"]], int(s["dim"])
    chunk = min(runs, int(s["chunk"]))
    if kind == "tokens":
        m, f = int(s["reference"]), int(s["features"])
        live = 4 * chunk * ((m + sum(x)) * (f + d) + max(x) * m * int(s["saves"]))
    else:
        n = int(s["tokens"])
        live = 4 * chunk * n * d + (2 * chunk * max(x) * (n + d) if kind == "width" else 0)
    return runs * (GENERATOR_BYTES + 8 * len(x)) + 8 * live


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

    @property
    def figure(self) -> str:
        """The file name of its figure beside its JSON."""
        return f"rates_{self.kind}.png"

    def summary(self) -> str:
        """One line for the terminal."""
        lo, hi = self.slope_ci
        return (
            f"{self.kind}: slope {self.slope:.3f} (95% bootstrap [{lo:.3f}, {hi:.3f}]), "
            f"theory {self.expected_slope:.3f}, {self.wall_s:.1f} s"
        )


def progress_units(kind: str, s: dict[str, Any]) -> int:
    """How much ``measure`` advances ``progress`` in all for ``kind`` with resolved settings ``s``: one per run
    (as each chunk of runs finishes or is found done)."""
    return int(s["runs"])


def measure(
    kind: str,
    quick: bool = False,
    progress: Callable[[int], None] | None = None,
    executor: Any = None,
    parts: Path | None = None,
    **overrides: Any,
) -> RatesResult:
    """Measure the ``kind`` rate (see module docstring): the chunks of runs are jobs (``rate_runs``) on
    ``executor`` (``sweeps.LocalExecutor`` or ``DaskExecutor``; default: local), their parts in ``parts`` (a rerun
    computes only the missing chunks; None: a temporary folder)."""
    from ...sweeps import Job, run_jobs

    s = settings_for(kind, quick, **overrides)
    start = time.perf_counter()
    x = [int(v) for v in s["x"]]
    runs, chunk = int(s["runs"]), int(s["chunk"])
    jobs = []
    for lo in range(0, runs, chunk):
        hi = min(runs, lo + chunk)
        key = {"check": "rates", "kind": kind, **s, "lo": lo, "hi": hi}  # every setting the errors depend on
        jobs.append(Job(rate_runs, {"kind": kind, "settings": s, "lo": lo, "hi": hi}, key, units=hi - lo))
    if parts is None:
        with tempfile.TemporaryDirectory() as tmp:
            done = run_jobs(jobs, tmp, executor, progress)
    else:
        done = run_jobs(jobs, parts, executor, progress)
    samples = np.concatenate([part["samples"] for part in done], 1)  # (len(x), R)
    error = samples.mean(1)  # (len(x),)
    boot_seed = derive_seeds(int(s["seed"]), 3)[2]
    return RatesResult(
        kind=kind,
        x=x,
        error=error.tolist(),
        slope=loglog_slope(x, error),
        slope_ci=list(bootstrap_slope(x, samples, seed=boot_seed)),
        expected_slope=token_rate_bound(int(s["dim"])) if kind == "tokens" else EXPECTED[kind],
        samples=samples,
        settings=s,
        wall_s=time.perf_counter() - start,
    )


def run_and_write(
    out: Path,
    kind: str,
    quick: bool = False,
    progress: Callable[[int], None] | None = None,
    executor: Any = None,
    **overrides: Any,
) -> RatesResult:
    """``measure`` on ``executor`` with its parts in ``out/parts``, then write ``rates_<kind>.json``, ``.npz`` (x,
    samples) into ``out``. A finished check of the same settings is read back, not rerun."""
    key = {"check": "rates", "kind": kind, "quick": quick, **overrides}
    cached, arrays = read_cached_json(Path(out) / f"rates_{kind}.json", key), None
    if cached is not None:
        arrays = read_cached_npz(Path(out) / f"rates_{kind}.npz", key)
    if cached is not None and arrays is not None:  # the same check finished earlier: reuse it
        fields = {k: cached[k] for k in RatesResult.JSON_KEYS}
        return RatesResult(**fields, samples=arrays["samples"])
    result = measure(kind, quick, progress, executor, Path(out) / "parts", **overrides)
    write_cached_npz(Path(out) / f"rates_{kind}.npz", key, x=np.array(result.x), samples=result.samples)
    write_cached_json(Path(out) / f"rates_{kind}.json", key, result)
    return result
