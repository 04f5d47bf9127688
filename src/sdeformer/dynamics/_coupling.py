"""Coupled runs (THEORY sections 3-5): the same noise drives the two things compared.

- depth: the discrete model at L layers with the Gaussian field vs a fine SDE path, both fed the same
  ``BrownianPath`` (the coarse increments are sums of the fine ones);
- width: the width-m MLP vs the Gaussian field through one shared standard normal per layer, the
  Gram-matrix square-root coupling ``G_m = Sigma_m(y)^{1/2} z``, ``G_inf = K(y)^{1/2} z``;
- tokens: see :mod:`sdeformer.dynamics._meanfield` (clouds of different size under one random-feature field).
"""

from __future__ import annotations

import torch

from ..contracts import AttentionDrift
from ..core._errors import ConfigError
from ..core._rng import Seeds, derive_seeds
from ..noise._fields import GaussianField
from ..noise._gram import GramMLPField
from ..noise._replay import BrownianPath, ReplayedNoise
from ._discrete import StochasticTransformer
from ._sde import LimitSDE, make_solver


def path_error(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """sup over saved times of (1/N) sum_i |a_i - b_i|^2. ``(S, ..., N, d) x2 -> (...)``."""
    return (a - b).pow(2).sum(-1).mean(-1).amax(0)


def depth_coupled(
    x0: torch.Tensor,
    layers: list[int],
    fine_steps: int,
    horizon: float,
    field: GaussianField,
    attention: AttentionDrift | None,
    seed: Seeds = 0,
    scheme: str = "projected",
) -> torch.Tensor:
    """Sup-in-time (grid times) error of the discrete model at each L vs a fine SDE path (THEORY section 5).

    ``x0``: (R, N, d). Returns (len(layers), R): sup_l (1/N) sum_i |X_i^L(t_l) - X_i^fine(t_l)|^2.
    Each L must divide ``fine_steps``; all use the same BrownianPath (coarse increments = sums of fine ones).
    ``seed``: an int, or one per run (see :mod:`sdeformer.core._rng`: runs [lo, hi) of a batch seeded by an int ``s``
    get ``seed_list(s, (R,))[lo:hi]``).
    """
    for L in layers:
        if int(L) < 1 or fine_steps % int(L):
            raise ConfigError("layers", L, f"must divide the fine steps {fine_steps}")
    batch = tuple(x0.shape[:-2])
    path = BrownianPath(tuple(x0.shape[-2:]), fine_steps, seed, batch, x0.dtype, x0.device)
    fine = make_solver(LimitSDE(ReplayedNoise(field, path.normals(1)), attention), fine_steps, horizon, scheme)
    ref = fine.run(x0, seed=seed)  # x: (fine_steps + 1, R, N, d)
    out = []
    for L in layers:
        r = fine_steps // int(L)
        model = StochasticTransformer(int(L), horizon, ReplayedNoise(field, path.normals(r)), attention)
        traj = model.run(x0, seed=seed)  # (L + 1, R, N, d)
        out.append(path_error(traj.x, ref.x[::r]))
    return torch.stack(out)


def width_coupled(
    x0: torch.Tensor,
    widths: list[int],
    layers: int,
    horizon: float,
    activation,
    su: float,
    sw: float,
    attention: AttentionDrift | None,
    seed: int = 0,
    seeds: tuple[Seeds, Seeds] | None = None,
) -> torch.Tensor:
    """Sup-in-layer error of the width-m model vs the infinite-width (Gaussian-field) model, same L.

    Both use the symmetric root and the same standard normals per layer (Gram-matrix square-root coupling).
    ``x0``: (R, N, d). Returns (len(widths), R). ``seeds`` = (the shared normals, any other draw of the
    width-m runs), each an int or one per run, replaces the two derived from ``seed``.
    """
    batch = tuple(x0.shape[:-2])
    path_seed, stream_seed = derive_seeds(seed, 2) if seeds is None else seeds
    path = BrownianPath(tuple(x0.shape[-2:]), layers, path_seed, batch, x0.dtype, x0.device)
    inf_field = GaussianField(activation, su, sw, root="sqrt")
    ref = StochasticTransformer(layers, horizon, ReplayedNoise(inf_field, path.normals()), attention).run(x0)
    out = []
    for m in widths:
        noise = ReplayedNoise(GramMLPField(activation, int(m), su, sw), path.normals())
        traj = StochasticTransformer(layers, horizon, noise, attention).run(x0, seed=stream_seed)
        out.append(path_error(traj.x, ref.x))
    return torch.stack(out)
