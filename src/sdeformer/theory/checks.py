"""The Monte Carlo theory checks of BEYOND.md as functions, shared by the tests and the ``beyond`` experiment.

Each returns a ``Check``: predicted value, measured Monte Carlo mean with its standard error, the step bias
measured by halving the step (|m_h - m_{h/2}|, zero when not measured) and whether |measured - predicted| <=
3 s.e. + bias + allowance (or, for a bound, measured >= predicted - that slack). The measured value reported
is the one at the finer step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..dynamics.discrete import StochasticTransformer
from ..dynamics.sde import LimitSDE, make_solver
from ..noise.fields import GaussianField
from ..noise.mlp import MLPNoise
from ..noise.partial import PartialNoise
from ..noise.sources import BulkSource
from . import montecarlo as mc
from . import quadrature as q

SIGMAS = 3.0  # a check holds within this many standard errors plus the measured step bias


@dataclass(frozen=True)
class Check:
    """One theory check: model, its setting, the quantity, predicted vs measured (+ s.e., step bias)."""

    model: str
    setting: dict
    quantity: str
    predicted: float
    measured: float
    standard_error: float
    step_bias: float = 0.0
    extra: dict = field(default_factory=dict)
    bound: str = "equal"  # "equal": |measured - predicted| small; "at_least": predicted is a lower bound
    allowance: float = 0.0  # a stated model error of the prediction (e.g. O(1/d)), added to the slack

    @property
    def holds(self) -> bool:
        slack = SIGMAS * self.standard_error + self.step_bias + self.allowance
        if self.bound == "at_least":
            return self.measured >= self.predicted - slack
        return abs(self.measured - self.predicted) <= slack

    def record(self) -> dict:
        """The JSON record of ``checks.json`` (keys: model, setting, quantity, predicted, measured,
        standard_error, step_bias, bound, allowance, holds)."""
        out = asdict(self)
        out.pop("extra")
        return {**out, **self.extra, "holds": self.holds}


def halved(measure, h: float) -> tuple[mc.Estimate, float]:
    """The estimate at h/2 and the step bias |m_h - m_{h/2}|."""
    coarse, fine = measure(h), measure(h / 2)
    return fine, abs(coarse.mean - fine.mean)


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
    halve: bool = True,
) -> Check:
    """Stationary E[1 - u] of two tokens, attention off, rho = ``share`` (BEYOND 1): the limit SDE
    (``solver='sde'``, exact Gaussian field) or the discrete model (``'discrete'``, width-``width`` MLP drawn
    from its conditional law) against the quadrature. Paths start at the predicted stationary overlap."""
    predicted = q.partial_noise_gap(activation, dim, bias_std, bias_std, share)
    x0 = mc.two_tokens(1.0 - predicted, dim, paths)

    def measure(step_size: float) -> mc.Estimate:
        steps = round(horizon / step_size)
        if solver == "sde":
            field_ = PartialNoise(GaussianField(activation, bias_std, bias_std), share)
            step = make_solver(LimitSDE(field_), steps, horizon).step
        else:
            mlp = MLPNoise(activation, width, bias_std, bias_std, sampling="conditional")
            step = StochasticTransformer(steps, horizon, noise=PartialNoise(mlp, share)).step
        return mc.stationary_average(step, x0, steps, round(burn / step_size), BulkSource.seeded(seed, (paths,)))

    est, bias = halved(measure, h) if halve else (measure(h), 0.0)
    setting = {
        "activation": activation,
        "dim": dim,
        "bias_std": bias_std,
        "share": share,
        "solver": solver,
        "h": h,
        "horizon": horizon,
        "paths": paths,
    }
    extra = {"activation": activation, "dim": dim, "bias_std": bias_std, "share": share}
    return Check(f"partial_{solver}", setting, "stationary_mean_one_minus_u", predicted, est.mean, est.se, bias, extra)
