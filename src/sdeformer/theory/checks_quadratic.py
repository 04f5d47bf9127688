"""Monte Carlo checks of the random quadratic form (BEYOND section 4): P(antipodal) from angle theta_0 (the
exit through the antipodal end, arcsin scale function; at theta_0 = pi/2 a symmetry test), E<X_t, X_0> =
exp(-(n - 1) t / 2), and synchronization under forcing within Shalova's bound on the distance to the
attractor. Each with its power record (a shared bias, a time scale off by 25%, the forcing halved)."""

from __future__ import annotations

import math

import numpy as np
import torch

from ..core.sphere import uniform_sphere
from ..dynamics.discrete import StochasticTransformer
from ..noise.quadratic import QuadraticForm, forcing_rate_bound
from ..noise.scaled import Scaled
from ..observables import exponential_rate
from . import montecarlo as mc
from . import quadrature as q
from .checks import Check, Run, measured

DELTA = 0.05  # absorption criterion: a pair is decided when |u| >= 1 - DELTA
BIAS_FORCING = 1.0  # the power record of P(antipodal): a shared bias (forcing gamma) the model does not have
TIME_SCALE_ERROR = 1.25  # the power record of the autocorrelation: the noise covariance off by this factor
SAVE_EVERY = 0.25  # the forcing check's distances at these time steps
RATE_FLOOR = 1e-9  # the fitted rate uses E dist above this


def form_model(forcing: float = 0.0, factor: float = 1.0) -> mc.Model:
    """Step size -> one layer of the discrete model x <- LN(x + dQ x + gamma dW), covariance x ``factor``."""
    field = QuadraticForm(forcing)
    noise = field if factor == 1.0 else Scaled(field, factor)
    return lambda dt: StochasticTransformer(1, dt, noise=noise).step


def antipodal(
    theta_over_pi: float, dim: int, *, h: float = 0.02, horizon: float = 40.0, paths: int = 2000, seed: int = 0
) -> Check:
    """Fraction of pairs from angle theta_0 whose overlap leaves (-1 + DELTA, 1 - DELTA) through the antipodal
    end, against (arcsin(1 - DELTA) - arcsin(cos theta_0)) / (2 arcsin(1 - DELTA)) (-> theta_0 / pi as
    DELTA -> 0). At theta_0 = pi/2 the prediction 1/2 is the sign symmetry u -> -u alone: a symmetry test."""
    lo, hi = -1.0 + DELTA, 1.0 - DELTA
    u0 = math.cos(theta_over_pi * math.pi)
    run = Run(mc.two_tokens(u0, dim, paths), h, horizon, lambda: mc.Exit(lo, hi), seed)
    paired = run.coupled(form_model())
    symmetric = theta_over_pi == 0.5
    setting = {"theta0_over_pi": theta_over_pi, "dim": dim, "delta": DELTA, "h": h, "horizon": horizon}
    check = measured(
        "quadratic_form",
        setting | {"paths": paths},
        "p_antipodal",
        q.exit_probability(*q.quadratic_form_coefficients(), u0, lo, hi),
        f"BEYOND 4: scale function arcsin u, exit through -1 + {DELTA:g} before 1 - {DELTA:g}",
        paired.fine[0],
        paired.bias[0],
        extra={"role": "symmetry test" if symmetric else "law", "p_antipodal_limit": theta_over_pi},
    )
    bias = f"a shared bias (forcing gamma = {BIAS_FORCING:g})" + (", which breaks the symmetry" if symmetric else "")
    return check.with_power(bias, run.wrong(form_model(BIAS_FORCING))[0][0])


def autocorrelation(dim: int, t: float = 1.0, *, h: float = 0.01, paths: int = 4000, seed: int = 0) -> Check:
    """E<X_t, X_0> of one token (antithetic pairs) vs exp(-(n - 1) t / 2) (BEYOND 4: one token is a spherical
    Brownian motion)."""
    x0 = torch.zeros(paths, 1, dim, dtype=torch.float64)
    x0[..., 0] = 1.0
    run = Run(x0, h, t, lambda: mc.AtTimes(lambda x: x[..., 0, 0], (t,)), seed, antithetic=True)
    paired = run.coupled(form_model())
    check = measured(
        "quadratic_form",
        {"dim": dim, "t": t, "h": h, "paths": paths},
        "mean_overlap_with_start",
        math.exp(-(dim - 1) * t / 2),
        "BEYOND 4: spherical Brownian motion, exp(-(n - 1) t / 2)",
        paired.fine[0],
        paired.bias[0],
    )
    wrong = run.wrong(form_model(factor=TIME_SCALE_ERROR))[0][0]
    return check.with_power(f"time scale off by {TIME_SCALE_ERROR - 1:.0%} (covariance x {TIME_SCALE_ERROR:g})", wrong)


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


def forcing_rate(
    gamma: float, dim: int, *, h: float = 0.01, horizon: float = 6.0, paths: int = 1000, seed: int = 0
) -> Check:
    """Shalova's bound E dist(X_t, attractor) <= pi exp(-lambda t) (BEYOND 4), checked at every saved time.
    The attractor at time t is the position of a reference token started ``horizon`` earlier (uniform), whose
    own distance to it is at most pi exp(-lambda (horizon + t)): the measurement max_t E dist / (pi e^-lambda t)
    must be at most 1 within the tolerance, which adds that e^-lambda horizon. The fitted decay rate of E dist is
    recorded beside the bound lambda. Power: the same check with the forcing halved."""
    bound = forcing_rate_bound(gamma, dim)
    times = tuple(horizon + SAVE_EVERY * k for k in range(1, round(horizon / SAVE_EVERY) + 1))
    start = torch.zeros(dim, dtype=torch.float64)
    start[0] = 1.0
    x0 = torch.cat(
        [uniform_sphere(1, dim, batch=(paths,), seed=seed, dtype=torch.float64), start.expand(paths, 1, dim)], -2
    )
    run = Run(x0, h, 2 * horizon, lambda: mc.AtTimes(_distance, times), seed + 1)
    envelope = np.pi * np.exp(-bound * (np.array(times) - horizon))  # (S,)

    def ratio(est: list[mc.Estimate]) -> tuple[int, mc.Estimate]:
        k = int(np.argmax([e.mean / b for e, b in zip(est, envelope)]))
        return k, mc.Estimate(est[k].mean / envelope[k], est[k].se / envelope[k])

    paired = run.coupled(_restarted(form_model(gamma), horizon, start))
    k, worst = ratio(paired.fine)
    mean = np.array([e.mean for e in paired.fine])
    rate = -exponential_rate(np.array(times) - horizon, mean, RATE_FLOOR)
    check = measured(
        "quadratic_form_forced",
        {"gamma": gamma, "dim": dim, "h": h, "horizon": horizon, "paths": paths},
        "dist_to_attractor_over_bound",
        1.0,
        "BEYOND 4 (Shalova): E dist(X_t, attractor) <= pi exp(-lambda t), lambda = 2 gamma^2 (n - 1)/(gamma^2 + 4)",
        worst,
        mc.Estimate(paired.bias[k].mean / envelope[k], paired.bias[k].se / envelope[k]),
        bound="at_most",
        allowance=math.exp(-bound * horizon),
        allowance_rule="e^(-lambda T) (the reference token's own distance to the attractor)",
        extra={"rate_bound": bound, "measured_rate": rate, "worst_time": times[k] - horizon},
    )
    wrong, _ = run.wrong(_restarted(form_model(gamma / 2), horizon, start))
    return check.with_power("forcing gamma halved", ratio(wrong)[1])
