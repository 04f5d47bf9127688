"""The synchronization theorem, checked (THEORY section 5).

If the field is not odd, lambda_bar < 0 and the noiseless attention flow raises E_beta at most at rate eps,

    E E_beta(mu_t) <= exp((eps + lambda_bar_prime) t) E E_beta(mu_0).

``sync_check`` estimates E E_beta(t) over an ensemble of runs, from the limit SDE (Gaussian field,
projected Euler-Maruyama) and from the discrete model (the Gaussian field at infinite width, or the
width-m MLP), with a 95% band, fits the exponential rate, and compares with the bound. eps is 0 for
V = I (scale 1) and V = 0 (scale 0); otherwise it is measured as the largest growth rate of E_beta along
the noiseless flow from the same initial tokens. Runs go in chunks; each finished chunk is written to
``out/energies.npz`` at once. ``run_and_write`` adds ``sync.json`` (``SyncResult.to_json()``) and ``sync.png``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..attention import SoftmaxAttention
from ..diagnostics import exponential_rate, interaction_energy
from ..discrete import StochasticTransformer
from ..errors import ConfigError
from ..fields import GaussianField
from ..kernel import kernel_theory
from ..mlp_noise import MLPNoise
from ..rng import Streams, derive_seeds
from ..sde import LimitSDE, make_solver
from ..sphere import uniform_sphere
from ..store import write_json, write_npz
from ..validate import positive_float, positive_int
from .results import Result
from .threads import single_threaded

SAVE_POINTS = 100  # energy is recorded at this many times (plus t = 0)
RATE_FLOOR = 1e-5  # the rate fit uses times where E E_beta > RATE_FLOOR * E E_beta(0) (float32 cancellation)
Z95 = 1.959964
CHUNK = 32  # runs per chunk


@dataclass(frozen=True)
class SyncResult(Result):
    """The check of one setting: the kernel constants, eps, E E_beta(t) mean and 95% half-width ``(S,)`` per model
    ('sde', 'discrete'), the bound ``(S,)`` at times ``t`` ``(S,)``, the fitted rates and the verdicts."""

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
    predicted_rate: float
    t: np.ndarray
    energy_mean: dict[str, np.ndarray]
    energy_ci: dict[str, np.ndarray]
    bound: np.ndarray
    measured_rate: dict[str, float]
    final_energy: dict[str, float]
    bound_holds: bool
    bound_holds_by: dict[str, bool]
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
            f"{self.final_energy['discrete']:.3g}, bound holds: {self.bound_holds}, theorem applies: "
            f"{self.theorem_applies}, {self.wall_s:.1f} s"
        )


def progress_units(runs: int, steps: int, chunk: int = CHUNK) -> int:
    """How often ``sync_check`` calls ``progress(1)``: every step of both models, per chunk of runs."""
    return 2 * steps * -(-runs // chunk)


def noiseless_growth_rate(x0: torch.Tensor, attention, steps: int, horizon: float, beta: float) -> float:
    """eps: max(0, largest d/dt log E_beta over steps and runs) along the noiseless attention flow."""
    model = StochasticTransformer(steps, horizon, None, attention)
    streams = Streams(0, tuple(x0.shape[:-2]), x0.device)  # the model has no noise: never drawn from
    x, e = x0, interaction_energy(x0.double(), beta)  # (R,)
    worst = 0.0
    for _ in range(steps):
        x = model.step(x, streams)
        e_new = interaction_energy(x.double(), beta)
        keep = (e > 0) & (e_new > 0)
        if keep.any():
            worst = max(worst, float((torch.log(e_new[keep] / e[keep]) / model.dt).max()))
        e = e_new
    return worst


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
) -> SyncResult:
    """Run the check (see module docstring). ``width=None`` uses the infinite-width discrete model.

    ``progress(n)`` advances by the steps done (``progress_units``). Raises ConfigError for bad input.
    """
    runs, tokens, steps, chunk = (
        positive_int(name, value)
        for name, value in (("runs", runs), ("tokens", tokens), ("steps", steps), ("chunk", chunk))
    )
    horizon = positive_float("horizon", horizon)
    if width is not None:
        width = positive_int("width", width)
    if runs < 2:
        raise ConfigError("runs", runs, "need at least 2 runs for a confidence band")
    if not math.isfinite(attention_scale):
        raise ConfigError("attention_scale", attention_scale, "must be finite")
    theory = kernel_theory(activation, dim, bias_std=bias_std, beta=beta)
    start = time.perf_counter()
    attention = SoftmaxAttention(beta, attention_scale)
    field = GaussianField(activation, bias_std, bias_std, beta=beta)
    discrete_noise = field if width is None else MLPNoise(activation, width, bias_std, bias_std)
    save_every = max(1, steps // SAVE_POINTS)
    x_seed, noise_seed = derive_seeds(seed, 2)
    x0 = uniform_sphere(tokens, dim, batch=(runs,), seed=x_seed, dtype=dtype)  # (R, N, d)
    static = attention_scale in (0.0, 1.0)  # V = I: eps = 0 (THEORY); V = 0: no noiseless flow at all
    eps = 0.0 if static else noiseless_growth_rate(x0, attention, steps, horizon, beta)
    seeds = derive_seeds(noise_seed, 2 * runs)
    energies: dict[str, list[torch.Tensor]] = {"sde": [], "discrete": []}
    t, tick = None, (None if progress is None else (lambda k: progress(1)))
    for lo in range(0, runs, chunk):
        hi = min(runs, lo + chunk)
        xc = x0[lo:hi]
        sde = make_solver(LimitSDE(field, attention), steps, horizon).solve(
            xc, seed=seeds[lo:hi], save_every=save_every, progress=tick
        )
        disc = StochasticTransformer(steps, horizon, discrete_noise, attention).run(
            xc, seed=seeds[runs + lo : runs + hi], save_every=save_every, progress=tick
        )
        t = sde.t.numpy()
        energies["sde"].append(interaction_energy(sde.x.double(), beta))  # (S, chunk)
        energies["discrete"].append(interaction_energy(disc.x.double(), beta))  # (S, chunk)
        if out is not None:  # partial ensemble, written as it finishes
            write_npz(Path(out) / "energies.npz", t=t, **{k: torch.cat(v, 1) for k, v in energies.items()})
    e = {k: torch.cat(v, 1).numpy() for k, v in energies.items()}  # (S, R)
    assert t is not None  # runs >= 2: at least one chunk ran
    e0 = float(e["sde"][0].mean())
    rate = eps + theory.lambda_bar_prime
    bound = e0 * np.exp(rate * t)
    mean = {k: v.mean(1) for k, v in e.items()}
    ci = {k: Z95 * v.std(1, ddof=1) / math.sqrt(runs) for k, v in e.items()}
    holds = {k: bool(np.all(mean[k] - ci[k] <= bound * (1 + 1e-9))) for k in e}
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
        theorem_applies=theory.synchronizes,
        eps=eps,
        predicted_rate=rate,
        t=t,
        energy_mean=mean,
        energy_ci=ci,
        bound=bound,
        measured_rate={k: exponential_rate(t, mean[k], RATE_FLOOR * e0) for k in e},
        final_energy={k: float(mean[k][-1]) for k in e},
        bound_holds=all(holds.values()),
        bound_holds_by=holds,
        wall_s=time.perf_counter() - start,
    )


def run_and_write(out: Path, progress: Callable[[int], None] | None = None, **settings: Any) -> SyncResult:
    """``sync_check(**settings)`` into ``out``: energies.npz (written per chunk), sync.json and sync.png."""
    from ..plots.checks import energy_figure

    result = sync_check(out=out, progress=progress, **settings)
    write_json(Path(out) / "sync.json", result.to_json())
    energy_figure([result], Path(out) / "sync.png")
    return result
