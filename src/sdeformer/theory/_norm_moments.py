"""The one-step moment test of BEYOND section 0 for every normalization scheme, with the radius (BEYOND 6).

For one state x ``(N, d)`` (the residual stream where the scheme has a radius), ``predicted_moments`` gives the
limit's drift and quadratic variation per unit time of the direction overlap u = <theta_i, theta_j> (BEYOND
section 0's formulas with the scheme's effective drift and covariance, ``dynamics._norms.limits.limit``) and of
the radius r_k;
``measured_moments`` estimates both from one layer of the discrete model (``StochasticTransformer.step``) at
step h over antithetic copies. As h -> 0 they agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..core._sphere import project
from ..dynamics._discrete import StochasticTransformer
from ..dynamics._norms.limits import limit
from ..dynamics._norms.schemes import Normalization
from ..noise._sources import Antithetic, BulkSource
from ._moments import PairMoments, predicted_pair_moments
from ._montecarlo import Estimate


@dataclass(frozen=True)
class Moments:
    """Drift and quadratic variation per unit time of a pair's direction overlap and of one token's radius."""

    overlap: PairMoments
    radius: PairMoments


def predicted_moments(
    norm: Normalization,
    x: torch.Tensor,
    attention: Any = None,
    field: Any = None,
    t: float = 0.0,
    pair: tuple[int, int] = (0, 1),
    token: int = 0,
) -> Moments:
    """The limit's moments at x ``(N, d)`` and time t (``limits.limit``; BEYOND sections 0 and 6)."""
    lim = limit(norm, x, attention, field, t)
    overlap = predicted_pair_moments(lim.theta, lim.cov, lim.drift, pair)
    return Moments(overlap, PairMoments(float(lim.radius_drift[token]), float(lim.radius_variation[token])))


def measured_moments(
    norm: Normalization,
    x: torch.Tensor,
    h: float,
    copies: int,
    attention: Any = None,
    field: Any = None,
    t: float = 0.0,
    seed: int = 0,
    pair: tuple[int, int] = (0, 1),
    token: int = 0,
) -> Moments:
    """Estimates of E du / h, E du^2 / h, E dr / h and E dr^2 / h from one layer at time t (the model's clock
    set to round(t / h)) of step h from x ``(N, d)``, over 2 x ``copies`` antithetic copies."""
    model = StochasticTransformer(1, h, noise=field, attention=attention, norm=norm)
    model.clock = round(t / h)
    start = x.expand((2, copies) + tuple(x.shape)).clone()  # (2, R, N, d)
    end = model.step(start, Antithetic(BulkSource.seeded(seed, (copies,))))  # (2, R, N, d)
    i, j = pair
    before, after = project(start), project(end)
    du = (after[..., i, :] * after[..., j, :]).sum(-1) - (before[..., i, :] * before[..., j, :]).sum(-1)  # (2, R)
    dr = torch.linalg.vector_norm(end[..., token, :], dim=-1) - torch.linalg.vector_norm(start[..., token, :], dim=-1)
    return Moments(
        PairMoments(Estimate.of(du / h), Estimate.of(du * du / h)),
        PairMoments(Estimate.of(dr / h), Estimate.of(dr * dr / h)),
    )
