"""`sdeformer spde` and the report's SPDE section (THEORY section 4; docs/spde.md).

``run_spde(settings, out)``: one run of the density solver on the circle or the 2-sphere (with a coupled cloud of
N particles on the same noise path) into a resumable, locked run folder tied to its settings (``io._claims``):
``spde.npz`` (per saved time: coefficients, degree energies, tail, resolved, E_beta, mass, min density, the
density on a figure grid; the cloud's coefficients, weak distances and up to KEEP_POINTS tokens) and, last,
``spde.json`` (the ``SpdeRun``), each with its sha256: a finished run is read back verified, a damaged one redone.
``run_and_write(out, quick)`` runs the report's checks (``experiments._spde.study``) into ``out`` and returns the
``SpdeReport``; ``sections(report)`` its section. The callers draw the figures (``plots._spde``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...checks._spde.chaos import w2_check
from ...checks._spde.chaos_large import large_check
from ...checks._spde.chaos_sphere import sphere_check
from ...checks._spde.coupled import record
from ...checks._spde.covariance import covariance_records
from ...checks._spde.sliced_sphere import sliced_check
from ...core._rng import Streams
from ...io._claims import claim_run_folder
from ...io._damage import recover
from ...io._formats import read_json, read_npz, write_json, write_npz
from ...io._lock import folder_lock
from ...io._report import Section
from ...spde._diagnostics import (
    density_map,
    energy_beta,
    low_mode_distance,
    min_density,
    negative_sobolev,
    resolution,
    tail_share,
)
from ...spde._initial import sample_vmf, von_mises_fisher
from .._results import Result, cached_stage
from . import study as study
from .settings import SpdeSettings
from .tables import study_code

KEEP_POINTS = 400  # tokens of the cloud kept per saved time (for the figures)


@dataclass(frozen=True)
class SpdeRun(Result):
    """The summary of one run (``spde.json``); ``arrays``: the contents of ``spde.npz`` (not in the JSON)."""

    JSON_KEYS = ("settings", "solver", "noise", "mass_drift", "min_density", "energy", "resolution", "distance_low")
    JSON_KEYS += ("distance_h1", "wall_s")

    settings: dict[str, Any]
    solver: str
    noise: dict[str, Any]
    mass_drift: float
    min_density: float
    energy: tuple[float, float]
    resolution: dict[str, Any]
    distance_low: float | None
    distance_h1: float | None
    wall_s: float
    arrays: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def summary(self) -> str:
        res = self.resolution["first_unresolved_time"]
        text = (
            f"d = {self.settings['dim']}, {self.settings['modes']} modes: mass drift {self.mass_drift:.1e}, "
            f"min density {self.min_density:.3g} x uniform, E_beta {self.energy[0]:.4g} -> {self.energy[1]:.4g}, "
            + ("resolved throughout" if res is None else f"below resolution from t = {res:.3g}")
        )
        if self.distance_low is not None:
            text += f"; cloud-density distance (first 8 modes, resolved times) <= {self.distance_low:.3g}"
        return text


def claim(settings: SpdeSettings, out: Path, force: bool = False) -> bool:
    """Tie ``out`` to ``settings`` (``io._claims.claim_run_folder``): True when it already belongs to them."""
    return claim_run_folder(out, {"command": "spde", **asdict(settings)}, force=force)


def run_spde(
    settings: SpdeSettings, out: Path | None = None, progress: Callable[[int], None] | None = None, force: bool = False
) -> SpdeRun:
    """Run ``settings`` (into ``out`` if given, holding its writer's lock; reads back a finished run of the same
    settings, verified, and recomputes a damaged one); ``progress(1)`` after each step. Raises ConfigError for a
    folder holding other settings (unless ``force``) or written by another process now."""
    if out is None:
        return _compute(settings, None, progress)
    with folder_lock(out, "spde run"):
        held = finished(settings, out) if claim(settings, out, force) else None
        return held if held is not None else _compute(settings, out, progress)


def finished(settings: SpdeSettings, out: Path) -> SpdeRun | None:
    """The finished run of ``settings`` in ``out``, read verified; None when it is missing, of other settings
    or damaged (a damaged file is moved into ``out/damaged/`` with one line: the caller recomputes it)."""
    data = recover(out / "spde.json", read_json)
    if not isinstance(data, dict) or data.get("settings") != asdict(settings) or set(SpdeRun.JSON_KEYS) - set(data):
        return None
    arrays = recover(out / "spde.npz", read_npz)
    return None if arrays is None else SpdeRun(**{k: data[k] for k in SpdeRun.JSON_KEYS}, arrays=arrays)


def _compute(settings: SpdeSettings, out: Path | None, progress: Callable[[int], None] | None) -> SpdeRun:
    """Run ``settings`` and write it into ``out`` (``spde.npz`` then ``spde.json``, each with its sha256)."""
    began = time.perf_counter()
    solver = settings.solver()
    basis = solver.basis
    c0 = von_mises_fisher(basis, settings.concentration)
    clouds = []
    if settings.particles:
        clouds = [sample_vmf(settings.dim, settings.particles, settings.concentration, Streams(settings.seed + 1, ()))]
    steps = [k for k in range(1, settings.steps + 1) if k % settings.save_every == 0 or k == settings.steps]
    tick = None if progress is None else (lambda _k: progress(1))
    rec = record(solver, c0, clouds, settings.seed, steps, keep=KEEP_POINTS, progress=tick)
    tail = tail_share(basis, rec.density).numpy()
    verdict = resolution(rec.t, tail, settings.tol, rec.every, solver.dt if solver.saturated else None)
    axes, values = density_map(basis, rec.density)
    arrays: dict[str, Any] = {
        "t": rec.t,
        "coefficients": rec.density.numpy(),
        "degree_energy": basis.energy(rec.density).numpy(),
        "tail": tail,
        "resolved": verdict.resolved,
        "energy": energy_beta(basis, rec.density, settings.beta).numpy(),
        "mass": basis.mass(rec.density).numpy(),
        "min_density": min_density(basis, rec.density).numpy(),
        "density": values,
        **{f"axis{i}": a for i, a in enumerate(axes)},
    }
    low = h1 = None
    if clouds:
        cloud = rec.clouds[0]
        arrays.update(
            cloud_coefficients=cloud.numpy(),
            points=rec.points[0].numpy(),
            distance_low=low_mode_distance(basis, rec.density, cloud).numpy(),
            distance_h1=negative_sobolev(basis, rec.density, cloud).numpy(),
        )
        low = float(np.max(arrays["distance_low"][verdict.resolved]))
        h1 = float(np.max(arrays["distance_h1"][verdict.resolved]))
    run = SpdeRun(
        asdict(settings),
        repr(solver),
        solver.field.summary(),
        float(np.abs(arrays["mass"] - 1).max()),
        float(arrays["min_density"].min()),
        (float(arrays["energy"][0]), float(arrays["energy"][-1])),
        verdict.to_json(),
        low,
        h1,
        time.perf_counter() - began,
        arrays,
    )
    if out is not None:
        write_npz(out / "spde.npz", checksum=True, **arrays)
        write_json(out / "spde.json", run, checksum=True)  # last: its presence marks a finished run
    return run


# the report's two showcase runs: clusters forming under softmax attention (beta = 5) while the noise synchronizes
SHOWCASE = {
    2: SpdeSettings(2, modes=128, noise_modes=6, noise_scale=0.3, beta=5.0, steps=400, horizon=4.0, particles=2000),
    3: SpdeSettings(3, modes=16, noise_modes=2, noise_scale=0.3, beta=5.0, steps=100, horizon=2.0, particles=1000),
}


@dataclass(frozen=True)
class SpdeReport(Result):
    """The report's SPDE checks (``experiments._spde.study``): rate tables, dominant modes, Monte Carlo moments, error
    against N, a resolution example, and the two showcase runs drawn by ``plots._spde``."""

    rates: list[dict[str, Any]]
    dominant: list[dict[str, Any]]
    moments: list[dict[str, Any]]
    convergence: list[dict[str, Any]]
    resolution: dict[str, Any]
    showcase: dict[str, str]
    quick: bool
    chaos: dict[str, Any] = field(default_factory=dict)  # ``checks.w2_check``: ``w2`` rows, fitted ``slope``
    sphere: dict[str, Any] = field(default_factory=dict)  # ``checks._spde.chaos_sphere.sphere_check``: the same on S^2
    covariance: list[dict[str, Any]] = field(default_factory=list)  # ``checks._spde.covariance`` check records
    sliced: dict[str, Any] = field(default_factory=dict)  # ``checks._spde.sliced_sphere.sliced_check``: S^2 to N = 10^5
    large: dict[str, Any] = field(default_factory=dict)  # ``checks._spde.chaos_large.large_check``: S^1 to N = 10^6


def run_and_write(out: Path, quick: bool = False, seed: int = 0) -> SpdeReport:
    """Run the checks into ``out`` (``spde_report.json``, ``checks.json``, ``convergence_d*.npz``, the showcase
    run folders); each check is a part in ``out/parts`` (``results.cached_stage``), reused by a rerun with the
    same ``quick``, ``seed`` and code (``study_code``), as the showcase runs are (``run_spde``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    showcase = {}
    for dim, settings in SHOWCASE.items():
        name = f"run_d{dim}"
        steps = settings.steps // 2 if quick else settings.steps
        run_spde(SpdeSettings(**{**asdict(settings), "seed": seed, "steps": steps}), out / name)
        showcase[f"d{dim}"] = name
    key = {"quick": quick, "seed": seed, "code": study_code()}
    stage = partial(cached_stage, out / "parts", key)  # each check a part: a finished folder reruns in seconds
    figures = [out / f"convergence_d{dim}.npz" for dim in (2, 3)]
    report = SpdeReport(
        stage("rates", lambda: study.rate_rows(quick)),
        stage("dominant", lambda: study.dominant_rows(quick)),
        stage("moments", lambda: study.moment_rows(quick, seed)),
        stage("convergence", lambda: study.convergence_rows(out, quick, seed), needs=figures),
        stage("resolution", lambda: study.resolution_example(seed)),
        showcase,
        quick,
        stage("w2", lambda: w2_check(quick, seed)),
        stage("w2_sphere", lambda: sphere_check(quick, seed)),
        stage("covariance", lambda: covariance_records(quick, seed)),
        stage("w2_sphere_sliced", lambda: sliced_check(quick, seed)),
        stage("w2_large", lambda: large_check(quick, seed)),
    )
    write_json(out / "checks.json", study.check_records(report))
    write_json(out / "spde_report.json", report)
    return report


def sections(report: SpdeReport) -> list[Section]:
    """The report section: tables of rates, dominant modes, moments and slopes; the figures of ``plots._spde``."""
    return [study.section(report)]
