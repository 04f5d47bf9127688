"""Monte Carlo check of partial noise (BEYOND section 1): the stationary E[1 - u] of two tokens, attention
off, share rho, against the quadrature of the stationary density; power: the same check on 1 - rho doubled."""

from __future__ import annotations

import torch

from ..dynamics.discrete import StochasticTransformer
from ..dynamics.sde import LimitSDE, make_solver
from ..noise.fields import GaussianField
from ..noise.mlp import MLPNoise
from ..noise.partial import PartialNoise
from . import montecarlo as mc
from . import quadrature as q
from .checks import Check, Run, measured

SOURCE = "BEYOND 1: quadrature of the stationary density p(u) ~ b^-2 exp(int 2a/b^2)"


def partial_model(solver: str, activation: str, bias_std: float, width: int, share: float) -> mc.Model:
    """Step size -> one step of the limit SDE (``solver='sde'``, exact Gaussian field) or of the discrete
    model (``'discrete'``, width-``width`` MLP drawn from its conditional law), partial noise ``share``."""
    if solver == "sde":
        field = PartialNoise(GaussianField(activation, bias_std, bias_std), share)
        return lambda dt: make_solver(LimitSDE(field), 1, dt).step
    mlp = MLPNoise(activation, width, bias_std, bias_std, sampling="conditional")
    return lambda dt: StochasticTransformer(1, dt, noise=PartialNoise(mlp, share)).step


def partial_noise_gap(
    dim: int,
    share: float,
    *,
    solver: str = "sde",
    activation: str = "relu",
    bias_std: float = 0.1,
    width: int = 64,
    h: float = 0.02,
    horizon: float = 40.0,
    burn: float = 10.0,
    paths: int = 128,
    seed: int = 0,
) -> Check:
    """Time average of 1 - u over (``burn``, ``horizon``] against the quadrature (BEYOND 1). The paths start
    from the stationary law (``quadrature.stationary_sample``), so the model of the prediction needs no
    burn-in; the burn-in lets the wrong model of the power record (1 - rho doubled, which relaxes twice as
    fast) leave that start."""
    a, b2 = q.partial_noise_coefficients(activation, dim, bias_std, bias_std, share)
    u0 = torch.from_numpy(q.stationary_sample(a, b2, paths, seed))
    run = Run(mc.two_tokens(u0, dim, paths), h, horizon, lambda: mc.TimeAverage(_gap, burn), seed)
    paired = run.coupled(partial_model(solver, activation, bias_std, width, share))
    setting = {"activation": activation, "dim": dim, "bias_std": bias_std, "share": share, "solver": solver}
    setting |= {"h": h, "burn": burn, "horizon": horizon, "paths": paths}
    check = measured(
        f"partial_{solver}",
        setting,
        "stationary_mean_one_minus_u",
        q.partial_noise_gap(activation, dim, bias_std, bias_std, share),
        SOURCE,
        paired.fine[0],
        paired.bias[0],
        extra={"activation": activation, "dim": dim, "bias_std": bias_std, "share": share},
    )
    wrong = max(0.0, 1.0 - 2.0 * (1.0 - share))
    measured_wrong = run.wrong(partial_model(solver, activation, bias_std, width, wrong))[0][0]
    return check.with_power(f"1 - rho doubled (share {wrong:g})", measured_wrong)


def _gap(x: torch.Tensor) -> torch.Tensor:
    return 1.0 - mc.pair_overlap(x)
