"""Part two of the reproduce report: "The theorems, checked" (THEORY sections 2-5).

``run(out, quick, executor=...)`` runs the rate measurements (depth, width, tokens), the synchronization check
in three settings (plus noise-only variants), the Lyapunov exponents and the phase diagram through their
``run_and_write`` (the same files as the commands, under ``out``) and returns their ``TheoremResults``;
``sections(results)`` turns them into report Sections whose captions state what the theory predicts and what was
measured, with the figures that ``plots._checks.theorem_figures`` draws (the reproduction draws them). The rates,
sync and phase checks run their pieces on ``executor`` (a ``sweeps.LocalExecutor`` or ``DaskExecutor``; None:
local), with the same numbers on either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checks._power import describe
from ..io._report import Figure, Section, Table
from ..plots._names import FIGURES, SYNC_PANELS
from . import _lyapunov as lyapunov, _phase as phase
from ._rates import measure as rates
from ._sync import check as sync

# (activation, bias std, attention scale): the theorem applies / ReLU without bias / tanh without bias
SYNC_SETTINGS = [
    ("relu", 0.1, 1.0),
    ("relu", 0.0, 1.0),
    ("tanh", 0.0, 1.0),
    ("relu", 0.1, 0.0),
    ("relu", 0.0, 0.0),
    ("tanh", 0.0, 0.0),
]
SYNC_FULL: dict[str, Any] = dict(dim=64, runs=32, tokens=32, steps=500, horizon=10.0)
SYNC_QUICK: dict[str, Any] = dict(dim=64, runs=8, tokens=8, steps=60, horizon=5.0)
PLOT_NAMES = FIGURES["theorems"]
SYNC_FIGURES = SYNC_PANELS  # the two sync figures (the plots own them): attention on, then the noise-only settings


@dataclass(frozen=True)
class TheoremResults:
    """The results of part two: one ``RatesResult`` per kind, one ``SyncResult`` per ``SYNC_SETTINGS`` entry, the
    Lyapunov rows, the phase diagram, and the settings of the sync runs and the wall time."""

    rates: tuple[rates.RatesResult, ...]
    sync: tuple[sync.SyncResult, ...]
    lyapunov: lyapunov.LyapunovResult
    phase: phase.PhaseResult
    sync_settings: dict[str, Any]
    wall_s: float


def _sync_power(r: sync.SyncResult) -> str:
    """The sync record's power in words (``checks._power.describe``) and its reason."""
    record = sync.check_record(r, r.measured_rate_se.get("sde"))
    return f"{describe(record)}: {record['reason']}; {r.power_text}"


def _tick(progress: Callable[[int], None] | None) -> None:
    if progress is not None:
        progress(1)


def _rates_section(results: tuple[rates.RatesResult, ...]) -> Section:
    rows = [
        [r.kind, r.slope, f"[{r.slope_ci[0]:.3f}, {r.slope_ci[1]:.3f}]", r.expected_slope, r.wall_s] for r in results
    ]
    captions = {
        "depth": "Discrete model (infinite width, Gaussian field) at L layers against a fine SDE path driven by "
        "the same Brownian increments; theory: mean-square error ~ 1/L on grid times (slope -1).",
        "width": "Width-m MLP against the infinite-width model, coupled through one shared standard normal per "
        "layer (Gram square-root coupling); theory: ~ 1/m for a Lipschitz activation (slope -1).",
        "tokens": "N-token systems against a large reference cloud under the same random-feature field (the SPDE "
        "in Lagrangian form); theory: an upper bound r_d(N) (slope -1/2 for d = 3); a steeper measured "
        "slope is allowed.",
    }
    figures = [
        Figure(
            Path(r.figure),
            f"{captions[r.kind]} Measured slope {r.slope:.2f} "
            f"(95% bootstrap [{r.slope_ci[0]:.2f}, {r.slope_ci[1]:.2f}]).",
        )
        for r in results
    ]
    return Section(
        "The theorems, checked: convergence rates (THEORY section 5)",
        [
            "Each error is an ensemble mean over independent coupled runs (float64); slopes are "
            "least-squares fits in log-log, intervals resample runs."
        ],
        [
            Table(
                ["kind", "measured slope", "95% interval", "theory slope", "wall s"],
                rows,
                "Measured log-log slopes against theory",
                from_runs=True,
                exact={"theory slope": "closed form (THEORY section 5)", "wall s": "a timing, not a result"},
                uncertainty={"measured slope": "95% interval"},
            )
        ],
        figures,
    )


def sync_folder(act: str, sigma: float, scale: float) -> str:
    """The folder of one sync setting under part two's folder."""
    return f"sync_{act}_{sigma:g}_{scale:+g}"


def _run_sync(out: Path, quick: bool, progress, executor: Any = None) -> tuple[sync.SyncResult, ...]:
    cfg = SYNC_QUICK if quick else SYNC_FULL
    results = []
    for act, sigma, scale in SYNC_SETTINGS:
        settings: dict[str, Any] = dict(activation=act, bias_std=sigma, attention_scale=scale, **cfg)
        results.append(sync.run_and_write(out / sync_folder(act, sigma, scale), executor=executor, **settings))
        _tick(progress)
    return tuple(results)


def _sync_section(results: tuple[sync.SyncResult, ...], cfg: dict[str, Any]) -> Section:
    rows = [
        [
            r.label,
            r.lambda_bar,
            r.lambda_bar_prime,
            r.eps,
            r.eps_method.split(":")[0],
            r.predicted_rate,
            r.measured_rate["sde"],
            r.measured_rate_se.get("sde", "-"),
            r.measured_rate["discrete"],
            r.measured_rate_se.get("discrete", "-"),
            r.final_energy["sde"],
            float(r.energy_ci["sde"][-1]),
            r.floor,
            r.verdict,
            _sync_power(r) if r.theorem_applies else "not applicable",
        ]
        for r in results
    ]
    cols = [
        "setting",
        "lambda_bar",
        "lambda_bar'",
        "eps",
        "eps from",
        "bound rate",
        "rate SDE",
        "s.e. SDE",
        "rate discrete",
        "s.e. discrete",
        "E E_beta(T) SDE",
        "95% half-width",
        "floor",
        "verdict",
        "power",
    ]
    n = f"{cfg['runs']} runs of N = {cfg['tokens']}, d = {cfg['dim']}, {cfg['steps']} steps, T = {cfg['horizon']:g}"
    return Section(
        "The theorems, checked: synchronization by noise (THEORY section 5)",
        [
            f"Ensembles of {n}: E E_beta(t) from the limit SDE (Gaussian field) and the discrete model (infinite "
            "width), with 95% bands, against exp((eps + lambda_bar') t) E E_beta(0). ReLU with sigma = 0.1 "
            "satisfies the theorem's hypotheses (lambda_bar < 0); ReLU without bias has lambda_bar = 1/d > 0 and "
            "tanh without bias gives an odd field: the theorem says nothing there. With attractive attention "
            "(s = +1) attention alone clusters the tokens, so the noise-only rows (s = 0) isolate what the noise does. "
            "eps is certified: 2 max(0, -s) for V = s I, Q^T K = beta I (THEORY section 5.1, sharp). Verdicts: "
            "'not applicable' unless the field is not odd, lambda_bar < 0 and eps + lambda_bar' < 0; 'fails' if "
            "the lower 95% end exceeds the bound where the bound is above the resolution floor (the smallest "
            "E_beta the run's dtype resolves); 'below resolution' if the bound ends below that floor; 'not "
            "resolved' if the bound held but also held for the power record's wrong model (the SDE with its "
            "noise covariance cut, column 'power'); else 'holds'."
        ],
        [
            Table(
                cols,
                rows,
                "Predicted bound rate against measured exponential rates (s.e.: jackknife over groups of runs)",
                from_runs=True,
                exact={c: "closed form (THEORY section 2)" for c in ("lambda_bar", "lambda_bar'", "bound rate")}
                | {"eps": "certified (THEORY section 5.1)", "floor": "the dtype's resolution"},
                uncertainty={
                    "rate SDE": "s.e. SDE",
                    "rate discrete": "s.e. discrete",
                    "E E_beta(T) SDE": "95% half-width",
                },  # fmt: skip
            )
        ],
        [
            Figure(
                Path(PLOT_NAMES["sync_attention"]),
                "Attention on (s = +1). Theory: the bound (dashed) where it applies; "
                "measured: the ensemble energies and their fitted rates in the legend.",
            ),
            Figure(
                Path(PLOT_NAMES["sync_noise_only"]),
                "Attention off (s = 0): synchronization by noise alone. Theory: decay "
                "at least at rate lambda_bar' for ReLU sigma = 0.1; no decay guaranteed for ReLU/tanh without bias "
                "(tanh: odd field, antipodal pairs persist, E_beta stays positive).",
            ),
        ],
    )


def _lyapunov_section(rows: tuple[lyapunov.LyapunovRow, ...]) -> Section:
    table = Table(
        ["setting", "measured", "95% half-width", "lambda_1"],
        [[r.label, r.measured, r.ci, r.lambda1] for r in rows],
        "Top Lyapunov exponent of the noise-only flow",
        from_runs=True,
        exact={"lambda_1": "closed form (THEORY section 2)"},
        uncertainty={"measured": "95% half-width"},
    )
    return Section(
        "The theorems, checked: Lyapunov exponents (THEORY section 2)",
        [
            "Two tokens at distance 1e-4 follow the noise-only SDE; their separation is renormalised "
            "every step and the exponent is the mean log growth per unit time."
        ],
        [table],
        [
            Figure(
                Path(lyapunov.FIGURE),
                "Theory: measured = lambda_1 (dashed diagonal); measured: points with 95% intervals.",
            )
        ],
    )


def _phase_section(r: phase.PhaseResult) -> Section:
    return Section(
        "The theorems, checked: phase diagram of synchronization (THEORY sections 2, 5)",
        [
            f"P(final E_beta < {r.threshold:g}) over {r.seeds} seeds per cell, N = {r.tokens}, "
            f"T = {r.horizon:g}, discrete chain driven by the exact Gaussian limit field (a sweep). "
            "Noise-only cells (s = 0) where 'P >= 1/2' matches the "
            f"kernel verdict (lambda_bar < 0, field not odd): {r.agreement:.0%}; adding the finite-"
            f"horizon requirement lambda_bar T < log(threshold / E_beta(0)): {r.agreement_finite_t:.0%}."
        ],
        [],
        [
            Figure(
                Path(phase.FIGURE),
                "Theory: synchronization by noise where lambda_bar < 0, the hatched region above and to the right "
                "of the red lambda_bar = 0 curve (larger d and bias), except for odd fields (tanh without bias). "
                "Measured: "
                "heat map of P(sync); with attractive attention (s = +1) tokens also cluster "
                "where lambda_bar > 0, since the attention itself contracts.",
            )
        ],
    )


def run(
    out: Path, quick: bool = False, progress: Callable[[int], None] | None = None, executor: Any = None
) -> TheoremResults:
    """Run all theorem checks into ``out`` (their JSON and .npz files). The rates, sync and phase checks run their
    jobs on ``executor`` (None: ``sweeps.LocalExecutor``).

    ``progress(n)`` advances once per finished unit (3 rates + 6 sync settings + Lyapunov + phase = 11).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    measured = []
    for kind in rates.KINDS:
        measured.append(rates.run_and_write(out, kind, quick, executor=executor))
        _tick(progress)
    synced = _run_sync(out, quick, progress, executor)
    exponents = lyapunov.run_and_write(out, quick=quick)
    _tick(progress)
    diagram = phase.run_and_write(out, phase.settings_for(quick), executor=executor)
    _tick(progress)
    cfg = SYNC_QUICK if quick else SYNC_FULL
    return TheoremResults(tuple(measured), synced, exponents, diagram, cfg, time.perf_counter() - start)


def sections(results: TheoremResults) -> list[Section]:
    """The report sections of part two (figure paths relative to its folder)."""
    parts = [
        _rates_section(results.rates),
        _sync_section(results.sync, results.sync_settings),
        _lyapunov_section(results.lyapunov.rows),
        _phase_section(results.phase),
    ]
    parts[-1].paragraphs.append(f"The theorem checks took {results.wall_s:.0f} s.")
    return parts


UNITS = 11  # progress units of ``run`` (for the caller's progress bar)
