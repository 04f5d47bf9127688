"""Monte Carlo check of partial noise (BEYOND section 1): the stationary E[1 - u] of two tokens, attention
off, share rho, against the quadrature of the stationary density;
power: 1 - rho x 0.8, 0.9, 1.1 and 1.2, each with its own tolerance, over the seeds of the power ``Plan``."""

from __future__ import annotations

import torch

from ..dynamics._discrete import StochasticTransformer
from ..dynamics._sde import LimitSDE, make_solver
from ..noise._fields import GaussianField
from ..noise._mlp import MLPNoise
from ..noise._partial import PartialNoise
from ..theory import _montecarlo as mc, _quadrature as q
from ._power import REPORT, Plan
from ._record import Check, CheckRun, measured

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
    power: Plan = REPORT,
) -> Check:
    """Time average of 1 - u over (``burn``, ``horizon``] against the quadrature (BEYOND 1). The paths start
    from the stationary law (``quadrature.stationary_sample``), so the model of the prediction needs no
    burn-in; the burn-in lets the wrong models of the power records (1 - rho larger: faster relaxation) leave
    that start."""
    a, b2 = q.partial_noise_coefficients(activation, dim, bias_std, bias_std, share)
    u0 = torch.from_numpy(q.stationary_sample(a, b2, paths, seed))
    run = CheckRun(mc.two_tokens(u0, dim, paths), h, horizon, lambda: mc.TimeAverage(_gap, burn), seed)
    setting = {"activation": activation, "dim": dim, "bias_std": bias_std, "share": share, "solver": solver}
    setting |= {"h": h, "burn": burn, "horizon": horizon, "paths": paths}

    def judge(rho: float, k: int = 0) -> Check:
        paired = run.coupled(partial_model(solver, activation, bias_std, width, rho), k)
        return measured(
            f"partial_{solver}",
            setting,
            "stationary_mean_one_minus_u",
            q.partial_noise_gap(activation, dim, bias_std, bias_std, share),
            SOURCE,
            paired.fine[0],
            paired.bias[0],
            extra={"activation": activation, "dim": dim, "bias_std": bias_std, "share": share},
        )

    def wrong(s: float, k: int) -> Check:
        return judge(min(1.0, max(0.0, 1.0 - (1 + s) * (1.0 - share))), k)

    return judge(share).with_catch(lambda s: f"1 - rho x {1 + s:g}", wrong, power)


def _gap(x: torch.Tensor) -> torch.Tensor:
    return 1.0 - mc.pair_overlap(x)
