"""The generic one-step moment test of any noise model (BEYOND section 0).

For the layer x_i <- LN(x_i + h D_i(X) + xi_i), with C_ij = E[xi_i xi_j^T] / h, the overlap u = <x_i, x_j> of a
pair moves in one step by du with

    E du / h   -> <P_i D_i, x_j> + <x_i, P_j D_j> - (1/2)(tr(P_i C_ii) + tr(P_j C_jj)) u + tr(P_i C_ij P_j)
                  - <P_i C_ii x_i, x_j> - <x_i, P_j C_jj x_j>
    E du^2 / h -> (P_i x_j)^T C_ii (P_i x_j) + (P_j x_i)^T C_jj (P_j x_i) + 2 (P_i x_j)^T C_ij (P_j x_i)

as h -> 0 (the last drift terms, from the second-order expansion of LN, vanish when P_x C_ii x = 0, as for
every model of BEYOND.md). ``predicted_pair_moments`` evaluates the right-hand sides; ``measured_pair_moments``
estimates the left-hand sides from one step of the discrete chain over many antithetic copies.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..contracts import RandomSource
from ..noise._sources import Antithetic, BulkSource
from ._montecarlo import Estimate, Step, pair_overlap


@dataclass(frozen=True)
class PairMoments:
    """Drift and quadratic variation of u per unit time (predicted), or their estimates (measured)."""

    drift: float | Estimate
    variation: float | Estimate


def _proj(x: torch.Tensor) -> torch.Tensor:
    """P_x = I - x x^T, ``(..., d) -> (..., d, d)``."""
    return torch.eye(x.shape[-1], dtype=x.dtype, device=x.device) - x.unsqueeze(-1) * x.unsqueeze(-2)


def predicted_pair_moments(
    x: torch.Tensor, cov: torch.Tensor, drift: torch.Tensor | None = None, pair: tuple[int, int] = (0, 1)
) -> PairMoments:
    """BEYOND 0's drift and quadratic variation of u = <x_i, x_j> for one state. x ``(N, d)`` unit tokens,
    cov = C ``(N, N, d, d)`` per unit time, drift = D ``(N, d)`` (None: no attention)."""
    i, j = pair
    xi, xj = x[i], x[j]  # (d,)
    pi, pj = _proj(xi), _proj(xj)  # (d, d)
    cii, cjj, cij = cov[i, i], cov[j, j], cov[i, j]  # (d, d)
    u = xi @ xj
    a = -0.5 * (torch.trace(pi @ cii) + torch.trace(pj @ cjj)) * u + torch.trace(pi @ cij @ pj)
    a = a - (pi @ cii @ xi) @ xj - xi @ (pj @ cjj @ xj)
    if drift is not None:
        a = a + (pi @ drift[i]) @ xj + xi @ (pj @ drift[j])
    vi, vj = pi @ xj, pj @ xi  # (d,)
    b2 = vi @ cii @ vi + vj @ cjj @ vj + 2 * vi @ cij @ vj
    return PairMoments(float(a), float(b2))


def measured_pair_moments(
    step: Step, x: torch.Tensor, h: float, copies: int, seed: int = 0, pair: tuple[int, int] = (0, 1)
) -> PairMoments:
    """One step of ``step`` (step size h) from x ``(N, d)`` for 2 x ``copies`` antithetic copies: estimates of
    E du / h and E du^2 / h with standard errors over the antithetic pairs."""
    source: RandomSource = Antithetic(BulkSource.seeded(seed, (copies,)))
    start = x.expand((2, copies) + tuple(x.shape))  # (2, R, N, d)
    end = step(start.clone(), source)  # (2, R, N, d)
    i, j = pair
    du = pair_overlap(end[..., [i, j], :]) - pair_overlap(start[..., [i, j], :])  # (2, R)
    return PairMoments(Estimate.of(du.mean(0) / h), Estimate.of((du * du).mean(0) / h))
