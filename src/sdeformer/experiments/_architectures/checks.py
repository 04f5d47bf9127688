"""The measurements and theory checks of report part ``architectures`` (BEYOND sections 7-10), one function per
part; ``experiments._architectures.report`` sizes, runs and reports them. Each check is a ``checks._record.Check``
(predicted and its source, measured, standard error, tolerance and its rule, the measured discretization bias)
with a power record: a stated wrong input (``wrong``: a wrong prediction the measurement must reject), and the
prediction moved by -+10 % and -+20 % for a deterministic check; the ALiBi crossing and the noisy graph rate
re-run their wrong models (lambda, the noise covariance x 0.8 .. 1.2), each judged with its own tolerance, their
power computed from the +-20 % models and confirmed by one re-run (``checks._power``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import torch

from ...attention._masks import MaskedAttention, graph_adjacency, spectral_gap
from ...attention._softmax import SoftmaxAttention
from ...checks._power import REPORT, Plan
from ...checks._record import SIGMAS, Check, Power
from ...core._kernel import kernel_theory
from ...core._sphere import project
from ...dynamics._discrete import StochasticTransformer
from ...dynamics._loop import SaveAt
from ...dynamics._species import TwoSpecies, species_observables
from ...metastability import cluster_energy, equal_clusters_energy, geometric_times, staircase
from ...noise._mlp import MLPNoise
from ...noise._scaled import Scaled
from ...observables import FIGURE_CLUSTER_COS, interaction_energy

F64 = torch.float64

GRAPH_RELATIVE = 0.01  # allowance of the noiseless graph rates: O(eps^2) nonlinearity and O(e^{-gap T}) transients
FIT_FROM = 0.25  # the rates are fitted over [FIT_FROM T, T] (after the faster graph modes have died out)
DECAY = {"noiseless": 16.0, "noise": 20.0}  # horizons: log-spread decay predicted over [0, T] (above float64 floor)
REFERENCE_RATE = 0.15  # a noisy rate's runs are the plan's ``runs`` up to this rate, more in proportion above it
NOISE_WRONG = "noise covariance x {0:g} (lambda_1 x {0:g})"  # the noisy graph rate's wrong models
LEVEL_RELATIVE = 2e-3  # allowance of a plateau level: the saddle is left along a perturbation of relative size ~eps^2


def wrong(check: Check, perturbation: str, value: float) -> Check:
    """``check`` with the power record of the wrong prediction ``value`` (module docstring)."""
    return replace(check, power=Power(perturbation, value, 0.0, abs(check.measured - value) > check.tolerance))


def mlp_noise(width: int, strength: float = 1.0):
    """The paper's common noise (ReLU MLP, no biases), its covariance times ``strength``; None at 0."""
    field = MLPNoise("relu", width)
    return None if strength == 0 else (field if strength == 1 else Scaled(field, strength))


# -- graph masks: consensus rate against the spectral gap (BEYOND section 8) ------------------------------------


def consensus_rate(mask: str, tokens: int, dim: int, dt: float, horizon: float, runs: int, noise=None, seed=0):
    """Decay rate of the mean log spread sqrt(mean |x_i - x_j|^2) of masked attention from a tight cluster
    (eps = 1e-3) displaced along one tangent direction, fitted over [FIT_FROM horizon, horizon]: (mean rate, its
    s.e. over runs). One direction (rank one in space): for an isotropic noise the log length of one tangent
    vector drifts at lambda_1 from the start, while the spread of a cluster displaced in every direction
    approaches that drift only as the noise aligns the directions, which biases a short fit window."""
    layers = round(horizon / dt)
    model = StochasticTransformer(layers, layers * dt, noise=noise, attention=MaskedAttention(0.25, mask=mask))
    gen = torch.Generator().manual_seed(seed)
    centre, direction = torch.eye(dim, dtype=F64)[:2]
    x0 = project(centre + 1e-3 * torch.randn(runs, tokens, 1, generator=gen, dtype=F64) * direction)  # (R, N, d)
    traj = model.run(x0, [seed * 7919 + r for r in range(runs)], max(1, layers // 100))
    gaps = traj.x[..., :, None, :] - traj.x[..., None, :, :]  # (S, R, N, N, d)
    spread = 0.5 * gaps.pow(2).sum(-1).mean((-1, -2)).log().numpy()  # (S, R): log spread
    t = traj.t.numpy()
    late = t >= FIT_FROM * t[-1]
    rates = [-np.polyfit(t[late], spread[late, r], 1)[0] for r in range(runs)]
    return float(np.mean(rates)), float(np.std(rates, ddof=1) / math.sqrt(runs)) if runs > 1 else 0.0


def discrete_gap_rate(gap: float, dt: float) -> float:
    """The linearized discrete model's rate: LN(x + h D) contracts the Laplacian mode by 1 - h gap / (1 + h)."""
    return -math.log(1 - dt * gap / (1 + dt)) / dt


def noisy_runs(runs: int, rate: float) -> int:
    """Runs of a noisy rate: ``runs`` at ``REFERENCE_RATE``, more in proportion above it. The horizon is DECAY /
    rate and a fitted rate's variance ~ 1 / (runs horizon), so every graph's rate gets about the same s.e."""
    return math.ceil(runs * max(1.0, rate / REFERENCE_RATE))


def _noisy_rate_check(mask, gap, setting, tokens, dim, dt, runs, width, lyap, strength, seed) -> Check:
    """The consensus rate with the common noise of covariance x ``strength``, by independent runs at h and h/2
    (its own tolerance: 3 s.e. of the measurement and of the step bias combined + |step bias|), against the
    prediction gap rate - lambda_1 of the unscaled noise. (The runs are not coupled on one Brownian path: the
    width-m MLP is nonlinear in its normals, and feeding the coarse step the fine steps' summed draws leaves
    the two fitted rates nearly uncorrelated, docs/beyond.md section 8.)"""
    noisy = [discrete_gap_rate(gap, h) - lyap for h in (dt, dt / 2)]
    field, count = mlp_noise(width, strength), noisy_runs(runs, noisy[1])
    found = [consensus_rate(mask, tokens, dim, h, DECAY["noise"] / p, count, field, seed) for h, p in
             zip((dt, dt / 2), noisy)]  # fmt: skip
    bias, bias_se = (found[0][0] - noisy[0]) - (found[1][0] - noisy[1]), math.hypot(found[0][1], found[1][1])
    return Check(
        model="graph+noise", setting={**setting, "dt": dt / 2, "noise": "mlp", "width": width, "runs": count},
        quantity="consensus rate", predicted=noisy[1], source="discrete gap rate - lambda_1 (THEORY 2)",
        measured=found[1][0], standard_error=found[1][1],
        tolerance=SIGMAS * math.hypot(found[1][1], bias_se) + abs(bias),
        tolerance_rule="3 s.e. (measurement and step bias combined) + |(m - p)_h - (m - p)_(h/2)| (independent "
        "runs at h and h/2)", step_bias=bias, step_bias_se=bias_se, extra={"lambda_1": lyap},
    )  # fmt: skip


def graph_checks(
    masks: Sequence[str], tokens: int, dim: int, dt: float, runs: int, width: int, seed=0, power: Plan = REPORT
) -> list[Check]:
    """For each graph: the noiseless rate against the discrete spectral-gap rate (wrong input: the continuum
    rate, the gap itself; deterministic, so the prediction moved by 10 % and 20 % is its power), and with the
    paper's common noise (ReLU MLP) against gap rate - lambda_1, the noise's top Lyapunov exponent (THEORY
    section 2), with the step bias from halving h; its power: the noise covariance (so lambda_1) x 0.8 .. 1.2,
    each re-run as the model under test with its own tolerance (``Check.with_catch``, the power ``Plan``);
    ``runs`` noisy runs at rates up to ``REFERENCE_RATE``, more above (``noisy_runs``)."""
    lyap = kernel_theory("relu", dim).lambda1
    out = []
    for mask in masks:
        gap = spectral_gap(graph_adjacency(mask, tokens))
        pred = discrete_gap_rate(gap, dt)
        rate, _ = consensus_rate(mask, tokens, dim, dt, DECAY["noiseless"] / pred, 1, seed=seed)
        setting = {"mask": mask, "tokens": tokens, "dim": dim, "dt": dt, "gap": gap}
        check = Check(
            model="graph", setting=setting, quantity="consensus rate", predicted=pred,
            source="-log(1 - h gap / (1 + h)) / h, gap of I - D^-1 A (self loops)", measured=rate,
            standard_error=0.0, tolerance=GRAPH_RELATIVE * pred,
            tolerance_rule="1% (O(eps^2) nonlinearity, e^{-(gap_3 - gap_2) T} transient; deterministic run)",
        )  # fmt: skip
        out.append(wrong(check, "the continuum rate gap (h -> 0)", gap))
        args = (mask, gap, setting, tokens, dim, dt, runs, width, lyap)
        right = _noisy_rate_check(*args, 1.0, seed)
        out.append(right.with_catch(lambda s: NOISE_WRONG.format(1 + s), _wrong_rate(args, seed), power))
    return out


def _wrong_rate(args: tuple, seed: int):
    """(size, k) -> the noisy rate check with the covariance x (1 + size) on the k-th seed."""
    return lambda s, k: _noisy_rate_check(*args, 1.0 + s, seed + k)  # pyright: ignore[reportCallIssue]


# -- metastability: the energy staircase (BEYOND section 10) ----------------------------------------------------


def hierarchical_start(tokens: int, eps: Sequence[float]) -> torch.Tensor:
    """Tokens at equal spacing on the circle, token j moved by sum_l eps_l (-1)^(j // 2^l): a start that visits
    the saddles of N, N/2, N/4, ... equal clusters at equal spacing in turn. ``(N, 2)``."""
    j = np.arange(tokens)
    theta = 2 * math.pi * j / tokens + sum(e * (-1.0) ** (j // 2**level) for level, e in enumerate(eps))
    return torch.tensor(np.stack([np.cos(theta), np.sin(theta)], -1))


def staircase_runs(beta, tokens, dt, horizon, strengths, seeds, width=64, eps=(0.02, 3e-3, 1e-4), points=300):
    """Runs of softmax attention from ``hierarchical_start`` with common noise of each strength, energies at
    geometric times: {strength: (times (S,), energies (R, S), plateaus per run)}."""
    layers = round(horizon / dt)
    times = geometric_times(dt, layers * dt, points)
    x0 = hierarchical_start(tokens, eps).expand(len(seeds), tokens, 2)
    out = {}
    for c in strengths:
        model = StochasticTransformer(layers, layers * dt, noise=mlp_noise(width, c), attention=SoftmaxAttention(beta))
        traj = model.run(x0, list(seeds), SaveAt(times=times))
        x, t = traj.x[1:], traj.t[1:].numpy()  # (S, R, N, 2)
        energy = interaction_energy(x, beta).numpy().T  # (R, S)
        out[c] = (t, energy, [staircase(t, energy[r], x[:, r], beta) for r in range(len(seeds))])
    return out


def level_checks(plateaus, beta: float, tokens: int) -> list[Check]:
    """Each plateau of a noiseless run at a saddle of k equal clusters against E_k (closed form); wrong input:
    the k clusters side by side at the spacing 2 pi / N of the tokens instead of 2 pi / k."""
    out = []
    for p in plateaus:
        if p.clusters > 1 and len(set(p.sizes)) == 1:
            pred = equal_clusters_energy(p.clusters, beta)
            setting = {"beta": beta, "tokens": tokens, "clusters": p.clusters, "tau": [p.tau_start, p.tau_end]}
            check = Check(
                model="metastability", setting=setting, quantity="plateau level", predicted=pred,
                source="E_k of k equal clusters at equal spacing", measured=p.level, standard_error=0.0,
                tolerance=LEVEL_RELATIVE * equal_clusters_energy(tokens, beta),
                tolerance_rule="0.2% of E_N (the saddle is left along a perturbation of relative size eps^2)",
            )  # fmt: skip
            side = cluster_energy([tokens // p.clusters] * p.clusters, _side_by_side(p.clusters, tokens), beta)
            out.append(wrong(check, "clusters side by side at spacing 2 pi / N", side))
    return out


def _side_by_side(k: int, tokens: int) -> torch.Tensor:
    """k unit points at consecutive multiples of 2 pi / N ``(k, 2)``."""
    angle = 2 * math.pi * torch.arange(k, dtype=F64) / tokens
    return torch.stack([angle.cos(), angle.sin()], -1)


def _visiting(found: list, sizes: tuple[int, ...]) -> np.ndarray:
    """Durations at the saddle ``sizes`` of the runs that visit it (their closed plateaus there summed)."""
    visits = [ps for ps in found if any(p.sizes == sizes for p in ps)]
    return np.array([sum(p.duration for p in ps if p.sizes == sizes and not p.open) for ps in visits])


def plateau_durations(runs: dict, sizes: tuple[int, ...]) -> dict:
    """Per noise strength: the time each run that visits the saddle with cluster ``sizes`` spends there (runs
    that skip it are left out of the mean and counted by ``visits``), the mean and 95% interval over them."""
    out = {}
    for c, (_, _, found) in runs.items():
        d = _visiting(found, sizes)
        half = 1.96 * d.std(ddof=1) / math.sqrt(d.size) if d.size > 1 else float("nan")
        mean = float(d.mean()) if d.size else float("nan")
        out[c] = {"mean": mean, "ci": float(half), "visits": int(d.size), "runs": len(found)}
    return out


def duration_exponent(runs: dict, sizes: tuple[int, ...]) -> dict:
    """The duration law ``mean duration ~ c^slope`` over the strengths c > 0 whose visiting runs all left the
    saddle (BEYOND section 10): ``_duration_exponent`` of ``_visiting``."""
    kept = {float(c): d for c, (_, _, found) in runs.items() if c > 0 and (d := _visiting(found, sizes)).size > 1}
    return _duration_exponent({c: d for c, d in kept.items() if np.all(d > 0)})


def _duration_exponent(durations: dict[float, np.ndarray], resamples: int = 1000) -> dict:
    """Slope of log mean duration against log strength, with its bootstrap 95% interval (nan below 2 points)."""
    if len(durations) < 2:
        return {"slope": float("nan"), "ci": [float("nan"), float("nan")], "strengths": sorted(durations)}
    x = np.log(np.array(sorted(durations)))
    rng = np.random.default_rng(0)
    means = np.stack([rng.choice(durations[c], (resamples, durations[c].size)).mean(-1) for c in sorted(durations)])
    slopes = np.polyfit(x, np.log(means), 1)[0]  # (resamples,)
    fit = float(np.polyfit(x, np.log([durations[c].mean() for c in sorted(durations)]), 1)[0])
    return {"slope": fit, "ci": np.quantile(slopes, [0.025, 0.975]).tolist(), "strengths": sorted(durations)}


# -- two species (BEYOND section 9) -----------------------------------------------------------------------------


def species_runs(nx, ny, dim, beta, layers, horizon, width, seeds) -> dict:
    """Encoder-decoder runs without noise, with shared and with own common noise: ``species_observables``
    averaged over seeds at every saved layer, per mode, with their standard errors (``<name>_se``)."""
    gen = torch.Generator().manual_seed(seeds[0])
    x0 = project(torch.randn(len(seeds), nx, dim, generator=gen, dtype=F64))
    y0 = project(torch.randn(len(seeds), ny, dim, generator=gen, dtype=F64))
    out = {}
    for label, noise, mode in (("none", None, "shared"), ("shared", mlp_noise(width), "shared"),
                               ("own", mlp_noise(width), "own")):  # fmt: skip
        model = TwoSpecies(layers, horizon, noise=noise, mode=mode, beta=beta)
        traj = model.run(x0, y0, list(seeds), max(1, layers // 50))
        obs = species_observables(traj.x[0], traj.x[1], beta, FIGURE_CLUSTER_COS)
        se = {f"{k}_se": (v.double().std(-1) / math.sqrt(len(seeds))).tolist() for k, v in obs.items()}
        out[label] = {"t": traj.t.tolist(), **{k: v.double().mean(-1).tolist() for k, v in obs.items()}, **se}
    return out
