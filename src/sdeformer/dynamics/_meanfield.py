"""The SPDE of THEORY section 4 in Lagrangian form: conditional McKean-Vlasov particles.

Every cloud (an N-token system, a large reference cloud of M >> N particles, ...) follows the limit SDE
of section 3 with its own empirical measure in the attention drift, and all clouds are driven by the SAME
random-feature Brownian field (fixed features, replayed normals). The large cloud stands in for the SPDE
solution mu_t; W_2(mu^N_t, mu_t) then measures propagation of chaos.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from ..contracts import AttentionDrift
from ..core._rng import Seeds
from ..noise._fields import RandomFeatureField
from ..noise._replay import BrownianPath, ReplayedNoise
from ..observables import wasserstein2_sq
from ._loop import Trajectory
from ._sde import LimitSDE, make_solver


def run_clouds(
    clouds: Sequence[torch.Tensor],
    field: RandomFeatureField,
    attention: AttentionDrift | None,
    horizon: float,
    steps: int,
    seed: Seeds = 0,
    save_every: int = 1,
    scheme: str = "projected",
    progress: Callable[[int], None] | None = None,
) -> list[Trajectory]:
    """Run every cloud ``(..., N_c, d)`` (same batch shape) under the same field path; one Trajectory each."""
    batch, d = tuple(clouds[0].shape[:-2]), clouds[0].shape[-1]
    path = BrownianPath((field.features + 1, d), steps, seed, batch, clouds[0].dtype, clouds[0].device)
    out = []
    for cloud in clouds:
        sde = LimitSDE(ReplayedNoise(field, path.normals()), attention)
        out.append(make_solver(sde, steps, horizon, scheme).run(cloud, saveat=save_every, progress=progress))
    return out


def sup_w2_sq(small: Trajectory, reference: Trajectory) -> torch.Tensor:
    """sup over saved times of W_2^2(mu^N_t, mu^ref_t); trajectories ``(S, ..., N, d)``/``(S, ..., M, d)``.
    Returns ``(...)``."""
    return torch.stack([wasserstein2_sq(a, b) for a, b in zip(small.x, reference.x)]).amax(0)
