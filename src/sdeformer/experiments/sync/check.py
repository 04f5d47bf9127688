"""The synchronization theorem, checked (THEORY section 5).

If the field is not odd, lambda_bar < 0 and the noiseless attention flow raises E_beta at most at rate eps,

    E E_beta(mu_t) <= exp((eps + lambda_bar_prime) t) E E_beta(mu_0).

``sync_check`` estimates E E_beta(t) over an ensemble of runs, from the limit SDE (Gaussian field,
projected Euler-Maruyama) and from the discrete model (the Gaussian field at infinite width, or the
width-m MLP), with a 95% band, fits the exponential rate, and compares with the bound. eps comes from
``sync_eps.attention_eps``: certified (4 max(0, -s) for V = s I, Q^T K = beta I) or, for another attention,
the max growth over stated adversarial starts (``eps_method`` says which). The Gaussian field uses the exact,
jitter-free ``root='eigh'``. The verdict is "not applicable" unless the field is not odd, lambda_bar < 0 and
eps + lambda_bar' < 0; else "fails" if the mean minus its 95% half-width exceeds the bound where the bound is
above the resolution floor (``sync_eps.resolution_floor``), "below resolution" if the bound ends below the
floor, "holds" otherwise. Runs go in chunks, one ``sweeps.Job`` each (``sync_runs``), on the local or a Dask
executor: each finished chunk is one part under ``out/parts`` (a temporary folder without ``out``), so a rerun
computes only the missing chunks, and the numbers do not depend on the executor. With ``out``, the whole ensemble
ends in ``out/energies.npz`` (t, sde, discrete); ``run_and_write`` adds ``sync.json`` (``SyncResult.to_json()``)
and ``sync.png``.
"""

from __future__ import annotations

import hashlib
import math
import pickle
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...attention.softmax import SoftmaxAttention
from ...core.errors import ConfigError
from ...core.kernel import kernel_theory
from ...core.rng import derive_seeds
from ...core.sphere import uniform_sphere
from ...core.validate import positive_float, positive_int
from ...core.validate import seed as check_seed
from ...dynamics.discrete import StochasticTransformer
from ...dynamics.sde import LimitSDE, make_solver
from ...io.store import write_cached_npz, write_json
from ...noise.fields import GaussianField
from ...noise.mlp import MLPNoise
from ...observables import exponential_rate
from ..results import Result
from ..threads import single_threaded, torch_threads
from .eps import attention_eps, resolution_floor, stable_energy

SAVE_POINTS = 100  # energy is recorded at this many times (plus t = 0)
RATE_FLOOR = 1e-5  # the rate fit uses times where E E_beta > RATE_FLOOR * E E_beta(0) (float32 cancellation)
Z95 = 1.959964
CHUNK = 32  # runs per chunk
VERDICTS = ("not applicable", "fails", "below resolution", "holds")  # the setting's verdict: first of its models'


@dataclass(frozen=True)
class SyncResult(Result):
    """The check of one setting: the kernel constants, eps and how it was obtained, E E_beta(t) mean and 95%
    half-width ``(S,)`` per model ('sde', 'discrete'), the bound ``(S,)`` at times ``t`` ``(S,)``, the resolution
    floor, the fitted rates and the verdicts (VERDICTS; ``bound_holds`` is None unless "holds" or "fails")."""

    activation: str
    dim: int
    bias_std: float
    beta: float
    attention_scale: float
    runs: int
    tokens: int
    steps: int
    horizon: float
    width: int | str
    seed: int
    lambda_bar: float
    lambda_bar_prime: float
    lambda1: float
    odd_field: bool
    theorem_applies: bool
    eps: float
    eps_method: str
    dtype: str
    floor: float
    predicted_rate: float
    t: np.ndarray
    energy_mean: dict[str, np.ndarray]
    energy_ci: dict[str, np.ndarray]
    bound: np.ndarray
    measured_rate: dict[str, float]
    final_energy: dict[str, float]
    verdict: str
    verdict_by: dict[str, str]
    bound_holds: bool | None
    wall_s: float

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "label": self.label}

    @property
    def label(self) -> str:
        """Short setting label, e.g. 'relu d=64 sigma=0.1 s=+1'."""
        return f"{self.activation} d={self.dim} sigma={self.bias_std:g} s={self.attention_scale:+g}"

    def summary(self) -> str:
        """One line for the terminal."""
        return (
            f"{self.label}: lambda_bar {self.lambda_bar:.4f}, bound rate eps+lambda_bar' = "
            f"{self.predicted_rate:.4f}, measured rate SDE {self.measured_rate['sde']:.4f} / discrete "
            f"{self.measured_rate['discrete']:.4f}, E E_beta(T) SDE {self.final_energy['sde']:.3g} / discrete "
            f"{self.final_energy['discrete']:.3g}, eps {self.eps:g} ({self.eps_method.split(':')[0]}), floor "
            f"{self.floor:.2g}, verdict: {self.verdict}, {self.wall_s:.1f} s"
        )


def progress_units(runs: int, steps: int, chunk: int = CHUNK) -> int:
    """How much ``sync_check`` advances ``progress`` in all: every step of both models, per chunk of runs
    (``2 * steps`` as each chunk's job finishes or is found done)."""
    return 2 * steps * -(-runs // chunk)


def check_settings(
    activation: str = "relu",
    dim: int = 64,
    bias_std: float = 0.1,
    beta: float = 1.0,
    attention_scale: float = 1.0,
    runs: int = 64,
    tokens: int = 64,
    steps: int = 2000,
    horizon: float = 10.0,
    width: int | None = None,
    seed: int = 0,
    chunk: int = CHUNK,
    **_: Any,
) -> None:
    """The input checks of ``sync_check`` alone (cheap: before a command claims its folder). Raises ConfigError."""
    for name, value in (("runs", runs), ("tokens", tokens), ("steps", steps), ("chunk", chunk)):
        positive_int(name, value)
    positive_float("horizon", horizon)
    if width is not None:
        positive_int("width", width)
    if runs < 2:
        raise ConfigError("runs", runs, "need at least 2 runs for a confidence band")
    if tokens < 2:
        raise ConfigError("tokens", tokens, "need at least 2 tokens (E_beta of one token is 0: no rate to measure)")
    if not math.isfinite(attention_scale):
        raise ConfigError("attention_scale", attention_scale, "must be finite")
    check_seed("seed", seed)
    kernel_theory(activation, dim, bias_std=bias_std, beta=beta)


def sync_runs(
    model: str,
    activation: str,
    bias_std: float,
    beta: float,
    attention: Any,
    width: int | None,
    steps: int,
    horizon: float,
    x0: torch.Tensor,
    seeds: list[int],
) -> dict[str, np.ndarray]:
    """One chunk of runs of one model (a ``sweeps.Job``): from the starts ``x0`` ``(C, N, d)``, the limit SDE
    (``model='sde'``) or the discrete model (``'discrete'``) with ``seeds`` (one per run); returns t ``(S,)`` and
    E_beta ``(S, C)`` under the model's name. One torch thread (tiny tensors)."""
    with torch_threads(1):
        field = GaussianField(activation, bias_std, bias_std, beta=beta, root="eigh")
        save_every = max(1, steps // SAVE_POINTS)
        if model == "sde":
            traj = make_solver(LimitSDE(field, attention), steps, horizon).run(x0, seed=seeds, saveat=save_every)
        else:
            noise = field if width is None else MLPNoise(activation, width, bias_std, bias_std)
            traj = StochasticTransformer(steps, horizon, noise, attention).run(x0, seed=seeds, saveat=save_every)
        return {"t": traj.t.numpy(), model: stable_energy(traj.x, beta).numpy()}  # (S,), (S, C)


def _attention_digest(attention: Any) -> str | None:
    """A digest of the attention's state (its matrices: a long tensor's repr elides entries); None if it does
    not pickle."""
    try:
        return hashlib.sha256(pickle.dumps(attention)).hexdigest()[:16]
    except Exception:  # an object that does not pickle: its repr alone keys the cache
        return None


@single_threaded
def sync_check(
    activation: str = "relu",
    dim: int = 64,
    bias_std: float = 0.1,
    beta: float = 1.0,
    attention_scale: float = 1.0,
    runs: int = 64,
    tokens: int = 64,
    steps: int = 2000,
    horizon: float = 10.0,
    width: int | None = None,
    seed: int = 0,
    chunk: int = CHUNK,
    out: Path | None = None,
    dtype: torch.dtype = torch.float32,
    progress: Callable[[int], None] | None = None,
    attention: Any = None,
    executor: Any = None,
) -> SyncResult:
    """Run the check (see module docstring). ``width=None`` uses the infinite-width discrete model;
    ``attention`` replaces ``SoftmaxAttention(beta, attention_scale)`` (eps then by adversarial starts). The chunks
    of runs are jobs on ``executor`` (``sweeps.LocalExecutor`` or ``DaskExecutor``; default: local); with ``out``
    their parts live in ``out/parts`` (a rerun computes only the missing ones).

    ``progress(n)`` advances by the steps done (``progress_units``). Raises ConfigError for bad input.
    """
    from ...sweeps import Job, run_jobs

    check_settings(activation, dim, bias_std, beta, attention_scale, runs, tokens, steps, horizon, width, seed, chunk)
    runs, tokens, steps, chunk = int(runs), int(tokens), int(steps), int(chunk)
    horizon = float(horizon)
    theory = kernel_theory(activation, dim, bias_std=bias_std, beta=beta)
    start = time.perf_counter()
    attention = SoftmaxAttention(beta, attention_scale) if attention is None else attention
    x_seed, noise_seed = derive_seeds(seed, 2)
    x0 = uniform_sphere(tokens, dim, batch=(runs,), seed=x_seed, dtype=dtype)  # (R, N, d)
    eps, eps_method = attention_eps(attention, dim, beta)
    seeds = derive_seeds(noise_seed, 2 * runs)  # runs' SDE seeds, then their discrete model's
    key = {  # every setting a chunk's energies depend on (the chunk size does not: its bounds lo, hi do)
        "check": "sync",
        "activation": activation,
        "dim": dim,
        "bias_std": bias_std,
        "beta": beta,
        "attention_scale": attention_scale,
        "attention": repr(attention),
        "attention_state": _attention_digest(attention),
        "runs": runs,
        "tokens": tokens,
        "steps": steps,
        "horizon": horizon,
        "width": width,
        "seed": seed,
        "dtype": str(dtype),
    }
    common = dict(
        activation=activation,
        bias_std=bias_std,
        beta=beta,
        attention=attention,
        width=width,
        steps=steps,
        horizon=horizon,
    )
    jobs = []  # per chunk of runs, one job per model (the two run side by side on two workers)
    for lo in range(0, runs, chunk):
        hi = min(runs, lo + chunk)
        xc = x0[lo:hi].clone()  # a copy: a slice would take the whole ensemble's storage to a worker
        for model, first in (("sde", 0), ("discrete", runs)):  # the runs' SDE seeds, then their discrete ones
            kwargs = {**common, "model": model, "x0": xc, "seeds": seeds[first + lo : first + hi]}
            jobs.append(Job(sync_runs, kwargs, {**key, "lo": lo, "hi": hi, "model": model}, units=steps))
    if out is None:
        with tempfile.TemporaryDirectory() as tmp:
            parts = run_jobs(jobs, tmp, executor, progress)
    else:
        parts = run_jobs(jobs, Path(out) / "parts", executor, progress)
    t = parts[0]["t"]
    e = {k: np.concatenate([p[k] for p in parts if k in p], 1) for k in ("sde", "discrete")}  # (S, R)
    if out is not None:  # the whole ensemble
        write_cached_npz(Path(out) / "energies.npz", key, t=t, **e)
    e0 = float(e["sde"][0].mean())
    rate = eps + theory.lambda_bar_prime
    bound = e0 * np.exp(rate * t)
    mean = {k: v.mean(1) for k, v in e.items()}
    ci = {k: Z95 * v.std(1, ddof=1) / math.sqrt(runs) for k, v in e.items()}
    floor = resolution_floor(dtype, beta)
    applies = theory.synchronizes and rate < 0  # not odd, lambda_bar < 0, eps + lambda_bar' < 0
    verdict_by = {k: _verdict(applies, mean[k] - ci[k], bound, floor) for k in e}
    verdict = next(v for v in VERDICTS if v in verdict_by.values())  # the first in VERDICTS' order
    return SyncResult(
        activation=theory.activation.name,
        dim=dim,
        bias_std=bias_std,
        beta=beta,
        attention_scale=attention_scale,
        runs=runs,
        tokens=tokens,
        steps=steps,
        horizon=horizon,
        width="inf" if width is None else width,
        seed=seed,
        lambda_bar=theory.lambda_bar,
        lambda_bar_prime=theory.lambda_bar_prime,
        lambda1=theory.lambda1,
        odd_field=theory.odd_field,
        theorem_applies=applies,
        eps=eps,
        eps_method=eps_method,
        dtype=str(dtype).removeprefix("torch."),
        floor=floor,
        predicted_rate=rate,
        t=t,
        energy_mean=mean,
        energy_ci=ci,
        bound=bound,
        measured_rate={k: exponential_rate(t, mean[k], max(RATE_FLOOR * e0, floor)) for k in e},
        final_energy={k: float(mean[k][-1]) for k in e},
        verdict=verdict,
        verdict_by=verdict_by,
        bound_holds={"holds": True, "fails": False}.get(verdict),
        wall_s=time.perf_counter() - start,
    )


def _verdict(applies: bool, low: np.ndarray, bound: np.ndarray, floor: float) -> str:
    """One of VERDICTS for the lower 95% end ``low`` ``(S,)`` of E E_beta against ``bound`` ``(S,)``."""
    if not applies:
        return "not applicable"
    resolved = bound >= floor  # (S,)
    if np.any((low > bound * (1 + 1e-9)) & resolved):
        return "fails"
    return "holds" if bool(resolved[-1]) else "below resolution"


def run_and_write(
    out: Path, progress: Callable[[int], None] | None = None, executor: Any = None, **settings: Any
) -> SyncResult:
    """``sync_check(**settings)`` on ``executor`` into ``out``: parts/ (one per chunk of runs, as they finish),
    energies.npz, sync.json and sync.png."""
    from ...plots.checks import energy_figure

    result = sync_check(out=out, progress=progress, executor=executor, **settings)
    write_json(Path(out) / "sync.json", result.to_json())
    energy_figure([result], Path(out) / "sync.png")
    return result
