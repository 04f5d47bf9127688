"""The synchronization theorem, checked (THEORY section 5).

If the field is not odd, lambda_bar < 0 and the noiseless attention flow raises E_beta at most at rate eps,

    E E_beta(mu_t) <= exp((eps + lambda_bar_prime) t) E E_beta(mu_0).

``sync_check`` estimates E E_beta(t) over an ensemble of runs, from the limit SDE (Gaussian field,
projected Euler-Maruyama) and from the discrete model (the Gaussian field at infinite width, or the
width-m MLP), with a 95% band, fits the exponential rate, and compares with the bound. eps comes from
``eps.attention_eps``: certified (2 max(0, -s) for V = s I, Q^T K = beta I, sharp: proof in ``eps``) or, for
another attention, the max growth over stated adversarial starts (``eps_method`` says which). The Gaussian
field uses the exact, jitter-free ``root='eigh'``. The settings' architecture parts (``norm``, ``alibi``, ``mask``,
``causal``, ``cross``; BEYOND sections 6-9) go into both models: the attention ``architecture.attention_name``
names, built from the registry, and the scheme (the SDE then the scheme's limit, BEYOND section 6; E_beta is
that of the tokens' directions).

Verdicts (``verdict``): "not applicable", with the reasons in ``not_applicable``, where a part breaks the
theorem's assumptions (``architecture.part_reasons``: any scheme but Post-LN, ALiBi, a graph mask other than the
complete graph, the causal mask, two species) or a kernel condition fails (``architecture.kernel_reasons``: the
field is odd, lambda_bar >= 0 or eps + lambda_bar' >= 0); the energies are simulated and reported all the same;
else "fails" if, at some time where the bound *or the measurement* is above the resolution floor
(``eps.resolution_floor``), the mean minus its 95% half-width exceeds the bound (an ensemble resolved above
the floor that stays above a bound below it fails); "below resolution" if neither is resolved at the end;
"holds" otherwise. Power: where the theorem applies, the SDE ensemble is also run with the noise
covariance cut by ``power_factor`` (a named wrong model) and judged against the same bound; if that wrong
model does not fail, the setting's "holds" becomes "not resolved". The bound is loose (its rate
eps + lambda_bar' beside the measured rates in ``summary``), so only large errors can be caught.

Runs go in chunks, jobs on the local or a Dask executor (``runs.jobs``): each finished chunk is one part under
``out/parts`` (a temporary folder without ``out``), so a rerun computes only the missing chunks, and the numbers
do not depend on the executor. With ``out``, the ensembles end in ``out/energies.npz`` (t, sde, discrete and,
with a power record, power); ``run_and_write`` adds ``sync.json`` (``SyncResult.to_json()``); the caller draws
``sync.png``.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ...checks._record import Check, power_fields
from ...core._rng import derive_seeds
from ...core._sphere import uniform_sphere
from ...core._threads import single_threaded
from ...io._cache import write_cached_npz
from ...io._formats import read_npz, write_json
from ...observables import exponential_rate
from .architecture import kernel_reasons, part_reasons
from .eps import attention_eps, resolution_floor
from .result import VERDICTS, SyncPower, SyncResult
from .runs import MODELS, energy_key, jobs, sync_runs
from .settings import CHUNK, SyncSettings

RATE_FLOOR = 1e-5  # the rate fit uses times where E E_beta > RATE_FLOOR * E E_beta(0) (float32 cancellation)
Z95 = 1.959964
JACKKNIFE_GROUPS = 10  # groups of runs of a fitted rate's jackknife standard error
__all__ = ["CHUNK", "VERDICTS", "SyncResult", "SyncSettings", "progress_units", "run_and_write", "sync_check"]


def progress_units(runs: int, steps: int, chunk: int = CHUNK, power: bool = False) -> int:
    """How much ``sync_check`` advances ``progress`` in all: every step of each model (two, three with the power
    record), per chunk of runs (as each chunk's job finishes or is found done)."""
    return (3 if power else 2) * steps * -(-runs // chunk)


def settings_units(settings: SyncSettings) -> int:
    """``progress_units`` of these settings (with the power record where the theorem applies)."""
    s = settings.check()
    applies = not part_reasons(s.parts(), s.tokens) and not kernel_reasons(s.theory(), _eps(s, _model(s, None)[0])[0])
    return progress_units(s.runs, s.steps, s.chunk, applies)


def _model(s: SyncSettings, attention: Any) -> tuple[Any, Any]:
    """(the attention, the scheme or None for Post-LN) of the settings' parts (``attention`` replaces the first)."""
    from ...config import _blocks as blocks

    cfg = s.model()
    norm = blocks.norm(cfg)
    return blocks.attention(cfg) if attention is None else attention, None if norm.name == "post" else norm


def _eps(s: SyncSettings, attention: Any) -> tuple[float, str]:
    """``attention_eps``; from starts of the run's N tokens where the parts make the attention depend on the
    token positions (a mask, ALiBi, causal, two species: their patterns are built for N)."""
    return attention_eps(attention, s.dim, s.beta, tokens=s.tokens if set(s.parts()) - {"norm"} else None)


@single_threaded
def sync_check(
    settings: SyncSettings | None = None,
    *,
    out: Path | None = None,
    progress: Callable[[int], None] | None = None,
    attention: Any = None,
    executor: Any = None,
    **fields: Any,
) -> SyncResult:
    """Run the check (see module docstring) of ``settings`` (or of ``SyncSettings(**fields)``). ``width=None``
    uses the infinite-width discrete model; ``attention`` replaces the parts' attention (by default
    ``SoftmaxAttention(beta, attention_scale)``; eps then by adversarial starts). The chunks of runs are jobs on
    ``executor`` (``sweeps.LocalExecutor`` or ``DaskExecutor``; default: local); with ``out`` their parts live in
    ``out/parts``. ``progress(n)`` advances by the steps done (``progress_units``). Raises ConfigError for bad
    input."""
    from ...sweeps import run_jobs

    if settings is not None and fields:
        raise TypeError(f"sync_check: settings given, and also {sorted(fields)}")
    s = (settings if settings is not None else SyncSettings(**fields)).check()
    theory, start = s.theory(), time.perf_counter()
    attention, norm = _model(s, attention)
    x_seed, noise_seed = derive_seeds(s.seed, 2)
    x0 = uniform_sphere(s.tokens, s.dim, batch=(s.runs,), seed=x_seed, dtype=s.torch_dtype)  # (R, N, d)
    eps, eps_method = _eps(s, attention)
    reasons = part_reasons(s.parts(), s.tokens) | kernel_reasons(theory, eps)
    applies = not reasons
    todo = jobs(s, attention, x0, derive_seeds(noise_seed, 2 * s.runs), applies, sync_runs, norm)
    if out is None:
        with tempfile.TemporaryDirectory() as tmp:
            parts = run_jobs(todo, tmp, executor, progress)
    else:
        parts = run_jobs(todo, Path(out) / "parts", executor, progress)
    t = parts[0]["t"]
    names = (*MODELS, "power") if applies else MODELS
    e = {k: np.concatenate([p[k] for p in parts if k in p], 1) for k in names}  # (S, R)
    if out is not None:  # the whole ensembles
        write_cached_npz(Path(out) / "energies.npz", energy_key(s, attention), t=t, **e)
    e0 = float(e["sde"][0].mean())
    rate = eps + theory.lambda_bar_prime
    bound = e0 * np.exp(rate * t)
    mean = {k: v.mean(1) for k, v in e.items()}
    ci = {k: Z95 * v.std(1, ddof=1) / math.sqrt(s.runs) for k, v in e.items()}
    floor = resolution_floor(s.torch_dtype, s.beta)
    measured_rate = {k: exponential_rate(t, mean[k], max(RATE_FLOOR * e0, floor)) for k in e}
    verdict_by = {k: _verdict(applies, mean[k] - ci[k], bound, floor) for k in MODELS}
    power = None
    if applies:
        said = f"noise covariance cut {s.power_factor:g}x (SDE)"
        power_verdict = _verdict(True, mean["power"] - ci["power"], bound, floor)
        power = SyncPower(said, s.power_factor, mean["power"], measured_rate["power"], power_verdict)
    verdict = next(v for v in VERDICTS if v in verdict_by.values())  # the first in VERDICTS' order
    if verdict == "holds" and (power is None or not power.caught):
        verdict = "not resolved"
    return SyncResult(
        settings=s,
        lambda_bar=theory.lambda_bar,
        lambda_bar_prime=theory.lambda_bar_prime,
        lambda1=theory.lambda1,
        odd_field=theory.odd_field,
        theorem_applies=applies,
        not_applicable=reasons,
        eps=eps,
        eps_method=eps_method,
        floor=floor,
        predicted_rate=rate,
        t=t,
        energy_mean={k: mean[k] for k in MODELS},
        energy_ci={k: ci[k] for k in MODELS},
        bound=bound,
        measured_rate={k: measured_rate[k] for k in MODELS},
        measured_rate_se={k: jackknife_rate_se(t, e[k], max(RATE_FLOOR * e0, floor)) for k in MODELS},
        final_energy={k: float(mean[k][-1]) for k in MODELS},
        power=power,
        verdict=verdict,
        verdict_by=verdict_by,
        bound_holds={"holds": True, "fails": False}.get(verdict),
        wall_s=time.perf_counter() - start,
    )


def _verdict(applies: bool, low: np.ndarray, bound: np.ndarray, floor: float) -> str:
    """One of VERDICTS for the lower 95% end ``low`` ``(S,)`` of E E_beta against ``bound`` ``(S,)``: a time is
    resolved when the bound or the measurement is above the floor."""
    if not applies:
        return "not applicable"
    resolved = (bound >= floor) | (low >= floor)  # (S,)
    if np.any((low > bound * (1 + 1e-9)) & resolved):
        return "fails"
    return "holds" if bool(resolved[-1]) else "below resolution"


def run_and_write(
    out: Path,
    settings: SyncSettings | None = None,
    progress: Callable[[int], None] | None = None,
    executor: Any = None,
    **fields: Any,
) -> SyncResult:
    """``sync_check(settings)`` (or of ``fields``) on ``executor`` into ``out``: parts/ (one per chunk of runs and
    model, as they finish), energies.npz, sync.json and checks.json (``check_record`` with ``rate_errors``; the
    caller draws sync.png: ``plots._checks.energy_figure``)."""
    result = sync_check(settings, out=out, progress=progress, executor=executor, **fields)
    write_json(Path(out) / "sync.json", result.to_json())
    data = read_npz(Path(out) / "energies.npz")  # verified: its sha256 was written with it
    ensembles = {k: data[k] for k in MODELS if k in data}
    errors = rate_errors(result, ensembles)
    write_json(Path(out) / "checks.json", [check_record(result, errors["measured_rate_se"]["sde"]) | errors])
    return result


def jackknife_rate_se(t: np.ndarray, e: np.ndarray, floor: float, groups: int = JACKKNIFE_GROUPS) -> float:
    """The standard error of the fitted rate of the mean of ``e`` ``(S, R)`` (``exponential_rate`` above
    ``floor``): a jackknife over ``groups`` groups of runs."""
    parts = np.arange(e.shape[1]) % groups
    jack = np.array([exponential_rate(t, e[:, parts != g].mean(1), floor) for g in range(groups)])
    return float(np.sqrt((groups - 1) / groups * ((jack - jack.mean()) ** 2).sum()))


def rate_errors(result: SyncResult, energies: dict[str, np.ndarray]) -> dict[str, Any]:
    """Standard errors of each model's fitted rate (``jackknife_rate_se``, the fit of ``sync_check``) and of its
    final E E_beta, from the ensembles ``energies`` ``(S, R)``."""
    t, e0 = np.asarray(result.t), float(energies["sde"][0].mean())
    floor = max(RATE_FLOOR * e0, result.floor)
    rate_se = {k: jackknife_rate_se(t, e, floor) for k, e in energies.items()}
    final_se = {k: float(e[-1].std(ddof=1) / math.sqrt(e.shape[1])) for k, e in energies.items()}
    return {"measured_rate_se": rate_se, "final_energy": result.final_energy, "final_energy_se": final_se}


def check_record(result: SyncResult, rate_se: float | None = None) -> dict[str, Any]:
    """The sync check's record of ``checks.json``: an upper bound on E E_beta (THEORY section 5), one-sided and
    not tight. Its power (``checks._power``): the bound's rate moved by -+10, -+20 %, caught with the probability
    that the SDE's fitted rate (N(rate, ``rate_se``^2), the jackknife s.e.) exceeds it; a moved bound the
    measured rate stays far below is never caught (no size_80: verdict "not resolved" where the bound held,
    ``bound_verdict`` the setting's verdict as in sync.json). Its other wrong model, the noise covariance cut
    ``power_factor`` times, is named in the reason."""
    power = result.power
    reason = (
        f"a one-sided bound, not tight; its wrong model is the noise covariance cut {result.settings.power_factor:g}x "
        f"({'caught' if power is not None and power.caught else 'not caught'})"
    )
    check = Check(
        "sync", {}, "rate", result.predicted_rate, "THEORY 5", result.measured_rate["sde"], rate_se or 0.0, 0.0,
        "the bound", bound="at_most",
    )  # fmt: skip
    fields = power_fields(check) if result.theorem_applies else {"catch_rate": {}, "size_80": None}
    caught = result.theorem_applies and fields["size_80"] is not None
    return {
        "check": "synchronization_bound",
        "quantity": "E E_beta(t) against E E_beta(0) exp((eps + lambda_bar_prime) t)",
        **fields,
        "verdict": result.verdict if result.verdict != "holds" or caught else "not resolved",
        "bound_verdict": result.verdict,
        "holds": result.verdict == "holds" and caught,
        "measured_rate": result.measured_rate,
        "predicted_rate": result.predicted_rate,
        "smallest_error_caught": fields.get("smallest_error_caught"),
        "sign_only": False,
        "reason": f"{reason}; {fields.get('reason', '')}" if result.theorem_applies else "the theorem does not apply",
    }
