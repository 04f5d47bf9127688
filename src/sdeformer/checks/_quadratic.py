"""Monte Carlo checks of the random quadratic form (BEYOND section 4): P(antipodal) from angle theta_0 (the
exit through the antipodal end, arcsin scale function; at theta_0 = pi/2 a symmetry test), E<X_t, X_0> =
exp(-(n - 1) t / 2), and synchronization under forcing within Shalova's bound on the distance to the
attractor. Power (``_power.SIGNED``, each wrong model with its own tolerance, over the seeds of the power ``Plan``): a
shared bias of 10 % / 20 % of the noise scale (its sign is the direction of the bias), the covariance x 0.8 ..
1.2, the forcing x 0.8 .. 1.2 (an upper bound: only a weaker forcing can fail it)."""

from __future__ import annotations

import math

import numpy as np
import torch

from ..core._sphere import uniform_sphere
from ..dynamics._discrete import StochasticTransformer
from ..noise._quadratic import QuadraticForm, forcing_rate_bound
from ..noise._scaled import Scaled
from ..observables import exponential_rate
from ..theory import _montecarlo as mc, _quadrature as q
from ._power import REPORT, Plan
from ._record import Check, CheckRun, measured

DELTA = 0.05  # absorption criterion: a pair is decided when |u| >= 1 - DELTA
SAVE_EVERY = 0.25  # the forcing check's distances at these time steps
RATE_FLOOR = 1e-9  # the fitted rate uses E dist above this
REL_SE = 0.1  # the rate fit's times: the mean of E dist known to this relative standard error
GROUPS = 10  # jackknife groups of paths for the fitted rate's standard error


def form_model(forcing: float = 0.0, factor: float = 1.0) -> mc.Model:
    """Step size -> one layer of the discrete model x <- LN(x + dQ x + gamma dW), covariance x ``factor``."""
    field = QuadraticForm(forcing)
    noise = field if factor == 1.0 else Scaled(field, factor)
    return lambda dt: StochasticTransformer(1, dt, noise=noise).step


def antipodal(
    theta_over_pi: float,
    dim: int,
    *,
    h: float = 0.02,
    horizon: float = 40.0,
    paths: int = 2000,
    seed: int = 0,
    power: Plan = REPORT,
) -> Check:
    """Fraction of pairs from angle theta_0 whose overlap leaves (-1 + DELTA, 1 - DELTA) through the antipodal
    end, against (arcsin(1 - DELTA) - arcsin(cos theta_0)) / (2 arcsin(1 - DELTA)) (-> theta_0 / pi as
    DELTA -> 0). At theta_0 = pi/2 the prediction 1/2 is the sign symmetry u -> -u alone: a symmetry test."""
    lo, hi = -1.0 + DELTA, 1.0 - DELTA
    u0 = math.cos(theta_over_pi * math.pi)
    run = CheckRun(mc.two_tokens(u0, dim, paths), h, horizon, lambda: mc.Exit(lo, hi), seed)
    symmetric = theta_over_pi == 0.5
    setting = {"theta0_over_pi": theta_over_pi, "dim": dim, "delta": DELTA, "h": h, "horizon": horizon}

    def judge(model: mc.Model, k: int = 0) -> Check:
        paired = run.coupled(model, k)
        return measured(
            "quadratic_form",
            setting | {"paths": paths},
            "p_antipodal",
            q.exit_probability(*q.quadratic_form_coefficients(), u0, lo, hi),
            f"BEYOND 4: scale function arcsin u, exit through -1 + {DELTA:g} before 1 - {DELTA:g}",
            paired.fine[0],
            paired.bias[0],
            extra={"role": "symmetry test" if symmetric else "law", "p_antipodal_limit": theta_over_pi},
        )

    # the exit law is scale-free (a covariance factor only changes the clock): the perturbation is a shared bias,
    # whose sign is a direction of W (W -> -W: the same law), so -s is the bias |s| on its own seeds
    bias = "a shared bias (forcing gamma = {:g} x the noise)"
    return judge(form_model()).with_catch(bias.format, lambda s, k: judge(form_model(abs(s)), k), power)


def autocorrelation(
    dim: int, t: float = 1.0, *, h: float = 0.01, paths: int = 4000, seed: int = 0, power: Plan = REPORT
) -> Check:
    """E<X_t, X_0> of one token (antithetic pairs) vs exp(-(n - 1) t / 2) (BEYOND 4: one token is a spherical
    Brownian motion)."""
    x0 = torch.zeros(paths, 1, dim, dtype=torch.float64)
    x0[..., 0] = 1.0
    run = CheckRun(x0, h, t, lambda: mc.AtTimes(lambda x: x[..., 0, 0], (t,)), seed, antithetic=True)

    def judge(model: mc.Model, k: int = 0) -> Check:
        paired = run.coupled(model, k)
        return measured(
            "quadratic_form",
            {"dim": dim, "t": t, "h": h, "paths": paths},
            "mean_overlap_with_start",
            math.exp(-(dim - 1) * t / 2),
            "BEYOND 4: spherical Brownian motion, exp(-(n - 1) t / 2)",
            paired.fine[0],
            paired.bias[0],
        )

    def wrong(s: float, k: int) -> Check:
        return judge(form_model(factor=1 + s), k)

    return judge(form_model()).with_catch(lambda s: f"noise covariance x {1 + s:g}", wrong, power)


def _restarted(model: mc.Model, at: float, start: torch.Tensor) -> mc.Model:
    """``model`` whose token 1 is put at ``start`` ``(d,)`` at time ``at`` (after the step that reaches it)."""

    def make(dt: float) -> mc.Step:
        step, count, restart = model(dt), [0], round(at / dt)

        def run(x: torch.Tensor, source) -> torch.Tensor:
            count[0] += 1
            x = step(x, source)
            if count[0] == restart:
                x = x.clone()
                x[..., 1, :] = start.to(x)
            return x

        return run

    return make


def _distance(x: torch.Tensor) -> torch.Tensor:
    """Geodesic distance of tokens 0 and 1, ``(..., 2, d) -> (...)``."""
    chord = torch.linalg.vector_norm(x[..., 0, :] - x[..., 1, :], dim=-1)
    return 2 * torch.arcsin((chord / 2).clamp(max=1.0))


def _fitted_rate(values: torch.Tensor, times: np.ndarray) -> float:
    """Decay rate of E dist: minus the least-squares slope of log of the path mean ``(K, R) -> ()``."""
    return -exponential_rate(times, values.double().mean(-1).numpy(), RATE_FLOOR)


def _rate_estimates(paired, times: np.ndarray) -> tuple[mc.Estimate, mc.Estimate]:
    """The fitted rate at h/2 and the step bias rate_h - rate_(h/2), each with its jackknife standard error
    over ``GROUPS`` groups of paths (coupled: the same groups on h and h/2). The fit uses the saved times up to
    the first whose mean has a relative standard error above ``REL_SE`` (later, a few slow paths carry it)."""
    fine, coarse = paired.fine_stat.values(), paired.coarse_stat.values()  # (K, R)
    rel = fine.std(-1) / fine.shape[-1] ** 0.5 / fine.mean(-1).clamp(min=RATE_FLOOR)
    upto = max(3, int(torch.cumprod((rel <= REL_SE).int(), 0).sum()))
    fine, coarse, times = fine[:upto], coarse[:upto], times[:upto]
    groups = torch.arange(fine.shape[-1]) % GROUPS
    full = np.array([_fitted_rate(fine, times), _fitted_rate(coarse, times) - _fitted_rate(fine, times)])
    leave = []
    for g in range(GROUPS):
        f, c = fine[:, groups != g], coarse[:, groups != g]
        leave.append([_fitted_rate(f, times), _fitted_rate(c, times) - _fitted_rate(f, times)])
    jack = np.array(leave)  # (G, 2)
    se = np.sqrt((GROUPS - 1) / GROUPS * ((jack - jack.mean(0)) ** 2).sum(0))
    return mc.Estimate(float(full[0]), float(se[0])), mc.Estimate(float(full[1]), float(se[1]))


def forcing_rate(
    gamma: float,
    dim: int,
    *,
    h: float = 0.01,
    horizon: float = 6.0,
    paths: int = 1000,
    seed: int = 0,
    power: Plan = REPORT,
) -> Check:
    """Shalova's bound E dist(X_t, attractor) <= pi exp(-lambda t) (BEYOND 4), decided on the rate: the fitted
    decay rate of E dist over the saved times (with its jackknife standard error and coupled step bias) must be
    at least lambda within the tolerance (quantity: lambda - fitted rate, at most 0). The attractor at time t
    is the position of a reference token started ``horizon`` earlier (uniform). The largest E dist / (pi e^-lambda
    t) is recorded beside it. Power: the forcing x 0.8 .. 1.2, each with its own tolerance (a stronger forcing
    cannot fail an upper bound: ``sides`` (1,))."""
    bound = forcing_rate_bound(gamma, dim)
    times = tuple(horizon + SAVE_EVERY * k for k in range(1, round(horizon / SAVE_EVERY) + 1))
    elapsed = np.array(times) - horizon
    start = torch.zeros(dim, dtype=torch.float64)
    start[0] = 1.0
    x0 = torch.cat(
        [uniform_sphere(1, dim, batch=(paths,), seed=seed, dtype=torch.float64), start.expand(paths, 1, dim)], -2
    )
    run = CheckRun(x0, h, 2 * horizon, lambda: mc.AtTimes(_distance, times), seed + 1)
    envelope = np.pi * np.exp(-bound * elapsed)  # (S,)

    def judge(g: float, k: int = 0) -> Check:
        paired = run.coupled(_restarted(form_model(g), horizon, start), k)
        rate, bias = _rate_estimates(paired, elapsed)
        worst = max(e.mean / b for e, b in zip(paired.fine, envelope))
        return measured(
            "quadratic_form_forced",
            {"gamma": gamma, "dim": dim, "h": h, "horizon": horizon, "paths": paths},
            "rate_bound_minus_fitted_rate",
            0.0,
            "BEYOND 4 (Shalova): E dist(X_t, attractor) <= pi exp(-lambda t), lambda = 2 gamma^2 (n - 1)/(gamma^2 + 4)",
            mc.Estimate(bound - rate.mean, rate.se),
            mc.Estimate(-bias.mean, bias.se),
            bound="at_most",
            extra={"rate_bound": bound, "measured_rate": rate.mean, "measured_rate_se": rate.se, "max_ratio": worst},
        )

    def wrong(s: float, k: int) -> Check:  # s > 0: a weaker forcing, the side that can fail the bound
        return judge(gamma * (1 - s), k)

    return judge(gamma).with_catch(lambda s: f"forcing gamma x {1 - s:g}", wrong, power, sides=(1,))
