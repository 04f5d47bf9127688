"""Phase diagram of synchronization (THEORY sections 2 and 5).

P(sync) = fraction of seeds whose final E_beta is below ``threshold``, over activation x d x bias std x
attention scale. The ensemble is a sweep (``sdeformer.sweeps``): the discrete chain driven by the exact
Gaussian limit field (``noise = "gaussian"``, THEORY section 3), every run's seed derived from (replicate, config
hash), all scales and seeds of one (activation, d, bias std) one batched tensor program, on the local or a Dask
executor. The kernel criterion lambda_bar = 0 is computed on a fine (d, bias std) grid for the overlay. The
architecture parts ``norm``, ``alibi``, ``mask``, ``causal``, ``cross`` (BEYOND sections 6-9; the sweep's base)
run in every cell; each cell's theorem verdict (``sync.cells``) is "not applicable" where they break the
theorem's assumptions (``sync.architecture``), and P(sync) is measured all the same.
``run_and_write`` writes ``phase.json`` (``PhaseResult.to_json()``), ``phase.npz`` (probability, final_energy,
lambda_bar) and the sweep table under ``sweep/`` (``sdeformer sweep plot OUT/sweep --x dim --y su --color
energy --below 1e-3 --where activation=relu --where attention_scale=0``); its caller draws ``FIGURE``
(``plots._checks.phase_figure``).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from .. import sweeps
from ..core._errors import ConfigError
from ..core._kernel import kernel_theory
from ..core._threads import single_threaded
from ..core._validate import fits_in_memory, positive_float, positive_int, seed as check_seed
from ..io._formats import write_json, write_npz
from ..observables import interaction_energy
from ..plots._names import FIGURES
from ._results import Result
from ._sync.architecture import DEFAULTS as PARTS, config_fields, given, model_config, part_reasons
from ._sync.cells import agreement_with_kernel, cell_grid

THRESHOLD = 1e-3  # final E_beta below this counts as synchronized
FINE = 41  # points per axis of the lambda_bar grid
FIGURE = FIGURES["theorems"]["phase"]  # the plots own the name
SEED_STRIDE = 10**6  # root seed r uses the replicate seeds r * SEED_STRIDE + k (more seeds reuse the first ones)

FULL: dict[str, Any] = dict(
    activations=("relu", "tanh", "silu"),
    dims=(4, 8, 16, 64),
    bias_stds=(0.0, 0.05, 0.1, 0.3),
    scales=(1.0, 0.0, -1.0),
    seeds=4,
    tokens=12,
    steps=200,
    horizon=10.0,
)
QUICK: dict[str, Any] = dict(
    activations=("relu", "tanh"),
    dims=(4, 16, 64),
    bias_stds=(0.0, 0.1, 0.3),
    scales=(0.0, 1.0),
    seeds=2,
    tokens=8,
    steps=60,
    horizon=8.0,
)


@dataclass(frozen=True)
class PhaseResult(Result):
    """P(sync) ``probability`` (A, D, B, S) and ``final_energy`` (A, D, B, S, seeds) over the grid, E_beta(0)
    ``initial_energy`` (A, D), ``lambda_bar`` (A, D, B), the fine lambda_bar grids (per activation,
    ``(FINE, FINE)`` over dims_fine x bias_fine), the architecture ``parts`` set, why the theorem does not apply to
    them (``not_applicable``, empty for the paper's model) and each cell's ``verdict`` (A, D, B, S)."""

    JSON_KEYS = (
        "activations", "dims", "bias_stds", "scales", "seeds", "threshold", "parts", "not_applicable", "verdict",
        "probability", "lambda_bar", "agreement", "agreement_finite_t", "wall_s",
    )  # fmt: skip
    activations: list[str]
    dims: list[int]
    bias_stds: list[float]
    scales: list[float]
    seeds: int
    tokens: int
    steps: int
    horizon: float
    threshold: float
    probability: np.ndarray
    final_energy: np.ndarray
    initial_energy: np.ndarray
    lambda_bar: np.ndarray
    dims_fine: np.ndarray
    bias_fine: np.ndarray
    lambda_bar_fine: dict[str, list[list[float]]]
    parts: dict[str, object]
    not_applicable: dict[str, str]
    verdict: np.ndarray
    wall_s: float

    @property
    def agreement(self) -> float:
        """Noise-only cells where 'P(sync) >= 1/2' matches the kernel verdict (``agreement_with_kernel``)."""
        return agreement_with_kernel(self)

    @property
    def agreement_finite_t(self) -> float:
        """The same with the finite-horizon requirement (``agreement_with_kernel(finite_time=True)``)."""
        return agreement_with_kernel(self, finite_time=True)


def settings_for(quick: bool = False, **overrides: Any) -> dict[str, Any]:
    """The QUICK or FULL grid, with the given (not None) overrides; the architecture parts only where set off
    their defaults (a default run's settings are the ones they were before the parts existed)."""
    grid = {k: v for k, v in overrides.items() if v is not None and k not in PARTS}
    return {**(QUICK if quick else FULL), **grid, **given(overrides)}


def progress_units(settings: dict[str, Any]) -> int:
    """Runs of ``phase(**settings)``: its ``progress(n)`` calls add up to this."""
    axes = ("activations", "dims", "bias_stds", "scales")
    return int(np.prod([len(settings[k]) for k in axes])) * int(settings["seeds"])


@dataclass(frozen=True)
class PhaseGrid:
    """The settings of one phase ensemble: its axes, replicates per cell, the runs' size, the root seed and the
    architecture parts (``sync.architecture``)."""

    activations: Sequence[str]
    dims: Sequence[int]
    bias_stds: Sequence[float]
    scales: Sequence[float]
    seeds: int
    tokens: int
    steps: int
    horizon: float
    beta: float = 1.0
    seed: int = 0
    norm: str = PARTS["norm"]
    alibi: float = PARTS["alibi"]
    mask: str = PARTS["mask"]
    causal: bool = PARTS["causal"]
    cross: int = PARTS["cross"]

    def parts(self) -> dict[str, object]:
        """The architecture parts set off their defaults."""
        return given({k: getattr(self, k) for k in PARTS})

    def check(self) -> None:
        """Refuse bad settings (ConfigError naming the parameter), the memory estimate included, before any work
        or folder is made."""
        acts, dims, biases, scales, seeds = self.activations, self.dims, self.bias_stds, self.scales, self.seeds
        if positive_int("seeds", seeds) < 1 or not dims or not biases or not scales or not acts:
            raise ConfigError("grid", (acts, dims, biases, scales, seeds), "every axis needs >= 1 value")
        for name, value in (("tokens", self.tokens), ("steps", self.steps)):
            positive_int(name, value)
        positive_float("horizon", self.horizon)
        positive_float("beta", self.beta)
        check_seed("seed", self.seed)
        cells, batch = len(acts) * len(dims) * len(biases) * len(scales), len(scales) * int(seeds)
        estimate = 8 * cells * int(seeds) + 4 * 6 * batch * int(self.tokens) * (max(dims) + int(self.tokens))
        fits_in_memory("seeds", seeds, estimate)  # the estimate: results + one batch
        if min(dims) < 4:
            raise ConfigError("dims", list(dims), "d >= 4 (lambda_bar < 0 needs d >= 4)")
        model_config(self.parts(), tokens=self.tokens, dim=max(dims), layers=self.steps, horizon=self.horizon)

    def spec(self) -> sweeps.Spec:
        """The ensemble as a sweep spec: the axes crossed, ``seeds`` replicates, final E_beta recorded."""
        base = {"tokens": self.tokens, "layers": self.steps, "horizon": self.horizon, "noise": "gaussian"}
        base |= config_fields(self.parts())
        axes = {"activation": self.activations, "dim": self.dims, "bias_std": self.bias_stds}
        axes["attention_scale"] = self.scales
        return sweeps.parse_spec(
            {
                "name": "phase",
                "base": {**base, "beta": self.beta},
                "axes": {
                    k: [float(v) if k in ("bias_std", "attention_scale") else v for v in vs] for k, vs in axes.items()
                },
                "seeds": {"start": int(self.seed) * SEED_STRIDE, "count": int(self.seeds)},
                "observables": ["energy"],
                "times": "final",
                "batch": len(self.scales) * int(self.seeds),
            }
        )


def check_settings(**settings: Any) -> None:
    """``PhaseGrid(...).check()`` for the grid's entries of ``settings`` (the others, e.g. ``threshold``, are not
    checked here)."""
    names = {f.name for f in fields(PhaseGrid)}
    PhaseGrid(**{k: v for k, v in settings.items() if k in names}).check()


@single_threaded
def phase(
    activations: Sequence[str] = FULL["activations"],
    dims: Sequence[int] = FULL["dims"],
    bias_stds: Sequence[float] = FULL["bias_stds"],
    scales: Sequence[float] = FULL["scales"],
    seeds: int = FULL["seeds"],
    tokens: int = FULL["tokens"],
    steps: int = FULL["steps"],
    horizon: float = FULL["horizon"],
    beta: float = 1.0,
    threshold: float = THRESHOLD,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    out: str | Path | None = None,
    executor: Any = None,
    **parts: Any,
) -> PhaseResult:
    """Simulate the grid as a sweep (see module docstring) into ``out`` (resumable; None: a temporary folder)
    on ``executor`` (default: ``sweeps.LocalExecutor``); ``progress(n)``: n more runs done; ``parts``: the
    architecture (``norm``, ``alibi``, ``mask``, ``causal``, ``cross``)."""
    grid = PhaseGrid(activations, dims, bias_stds, scales, seeds, tokens, steps, horizon, beta, seed, **parts)
    grid.check()
    start = time.perf_counter()
    spec = grid.spec()
    if out is None:
        with tempfile.TemporaryDirectory() as tmp:
            final, initial = _ensemble(spec, tmp, executor, progress)
    else:
        final, initial = _ensemble(spec, out, executor, progress)
    reasons = part_reasons(grid.parts(), tokens)
    verdict, lam = cell_grid(activations, dims, bias_stds, scales, beta, reasons)
    dims_fine = np.linspace(min(dims), max(dims), FINE)
    bias_fine = np.linspace(min(bias_stds), max(bias_stds), FINE)
    lam_fine = {
        act: [[kernel_theory(act, int(round(d)), bias_std=float(b)).lambda_bar for b in bias_fine] for d in dims_fine]
        for act in activations
    }
    return PhaseResult(
        activations=list(activations),
        dims=list(dims),
        bias_stds=list(bias_stds),
        scales=list(scales),
        seeds=int(seeds),
        tokens=tokens,
        steps=steps,
        horizon=horizon,
        threshold=threshold,
        probability=(final < threshold).mean(-1),
        final_energy=final,
        initial_energy=initial,
        lambda_bar=lam,
        dims_fine=dims_fine,
        bias_fine=bias_fine,
        lambda_bar_fine=lam_fine,
        parts=grid.parts(),
        not_applicable=reasons,
        verdict=verdict,
        wall_s=time.perf_counter() - start,
    )


AXES = ("activation", "dim", "bias_std", "attention_scale")  # the spec's axes; the table holds bias_std as su


def _ensemble(spec: sweeps.Spec, out: str | Path, executor: Any, progress: Any) -> tuple[np.ndarray, np.ndarray]:
    """Run the sweep; final E_beta ``(A, D, B, S, seeds)`` (NaN for failed runs) and mean E_beta(0) ``(A, D)``."""
    sweeps.run(spec, out, executor, progress=progress, force=True)  # out/sweep is phase's: claimed by its run.json
    df = sweeps.read(out)
    energy = df[df["status"] == "done"].set_index(["activation", "dim", "su", "attention_scale", "replicate"])
    values = {name: list(v) for group in spec.groups for name, v in group}
    shape = tuple(len(values[n]) for n in AXES) + (len(spec.seeds),)
    final = np.full(shape, np.nan)
    for index in np.ndindex(shape):
        key = tuple(values[n][i] for n, i in zip(AXES, index)) + (spec.seeds[index[-1]],)
        final[index] = energy["energy"].get(key, np.nan)
    initial = np.zeros(shape[:2])
    for run in sweeps.expand(spec):  # E_beta(0) of every run, from its initial tokens
        a, d = values["activation"].index(run.config.activation), values["dim"].index(run.config.dim)
        initial[a, d] += float(interaction_energy(run.config.initial_tokens().double(), run.config.beta))
    return final, initial / (len(spec.seeds) * shape[2] * shape[3])


def run_and_write(
    out: Path, settings: dict[str, Any], progress: Callable[[int], None] | None = None, executor: Any = None
) -> PhaseResult:
    """``phase(**settings)`` with its sweep in ``out/sweep``, then ``phase.json`` and ``phase.npz`` into ``out``."""
    result = phase(**settings, progress=progress, out=Path(out) / "sweep", executor=executor)
    write_json(Path(out) / "phase.json", result.to_json())
    write_npz(
        Path(out) / "phase.npz",
        probability=result.probability,
        final_energy=result.final_energy,
        lambda_bar=result.lambda_bar,
    )
    return result
