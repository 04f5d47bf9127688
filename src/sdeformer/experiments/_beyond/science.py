"""Measurements of report part 3 (BEYOND.md): partial noise with attention on (BEYOND 1's open question), the
four noise models side by side at matched strength, and their (beta, d) phase diagrams. Pure functions:
settings -> dict of numbers.

Clusters of the partial-noise measurement are counted width-aware (``width_aware_clusters``):
with rho < 1 the tokens never merge and sit in caps of a stationary width, so a fixed cosine threshold (cos >
0.999) counts the tokens of one cap as separate clusters; the count cuts the minimum spanning tree of the
tokens only at edges much longer than its median edge (the spacing inside a cap).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ...attention._softmax import SoftmaxAttention
from ...core._kernel import kernel_theory
from ...core._sphere import uniform_sphere
from ...dynamics._discrete import StochasticTransformer
from ...dynamics._sde import LimitSDE, make_solver
from ...noise._fields import GaussianField
from ...noise._heads import ResampledHeads
from ...noise._mlp import MLPNoise
from ...noise._partial import PartialNoise
from ...noise._quadratic import QuadraticForm
from ...noise._scaled import Scaled
from ...noise._sources import BulkSource
from ...noise._value import ValueNoise
from ...observables import (
    FIGURE_CLUSTER_COS,
    antipodal_pairs,
    cosine_matrix,
    interaction_energy,
    loglog_slope,
    one_cluster,
    pairwise_cosines,
)
from ...theory._montecarlo import run_steps

ACTIVATIONS = (("relu", 0.1), ("silu", 0.0))  # lambda_bar < 0 and > 0 at d = 16 (non-odd fields)
MODELS = ("mlp", "value", "quadratic", "heads")
GAP_FACTOR = 4.0  # a spanning-tree edge this many times its median edge separates two clusters
GAP_CAP = 0.5  # an edge with 1 - cos above this (60 degrees) always does
GAP_FLOOR = 1e-6  # one below this (merged tokens, up to rounding) never does
CLUSTER_RULE = (
    f"clusters = 1 + the edges of the tokens' minimum spanning tree (in 1 - cos) longer than {GAP_FACTOR:g} x its "
    f"median edge (at least {GAP_FLOOR:g}, at most {GAP_CAP:g})"
)


def spanning_tree_edges(x: torch.Tensor) -> torch.Tensor:
    """The N - 1 edge lengths 1 - cos of the minimum spanning tree of the tokens (Prim), ``(..., N, d) ->
    (..., N - 1)``."""
    dist = 1.0 - cosine_matrix(x)  # (..., N, N)
    n = dist.shape[-1]
    inside = torch.zeros(dist.shape[:-1], dtype=torch.bool, device=x.device)  # (..., N)
    inside[..., 0] = True
    best, edges = dist[..., 0, :].clone(), []  # (..., N): distance of each token to the tree
    for _ in range(n - 1):
        length, j = best.masked_fill(inside, torch.inf).min(-1)  # (...)
        edges.append(length)
        inside.scatter_(-1, j.unsqueeze(-1), True)
        best = torch.minimum(best, dist.gather(-2, j[..., None, None].expand(*j.shape, 1, n)).squeeze(-2))
    return torch.stack(edges, -1)


def width_aware_clusters(x: torch.Tensor) -> torch.Tensor:
    """Clusters whose separation is large against their own width (CLUSTER_RULE), ``(..., N, d) -> (...)``."""
    edges = spanning_tree_edges(x)  # (..., N - 1)
    cut = (GAP_FACTOR * edges.median(-1, keepdim=True).values).clamp(GAP_FLOOR, GAP_CAP)  # (..., 1)
    return 1 + (edges > cut).sum(-1)


@dataclass(frozen=True)
class Ensemble:
    """The runs of a side-by-side or phase measurement: ``paths`` runs of ``tokens`` uniform tokens, ``layers``
    layers to ``horizon``; starts from ``seed``, noise from ``seed + 1``."""

    tokens: int = 16
    horizon: float = 30.0
    layers: int = 300
    paths: int = 16
    seed: int = 0

    def start(self, dim: int) -> torch.Tensor:
        return uniform_sphere(self.tokens, dim, batch=(self.paths,), seed=self.seed, dtype=torch.float64)

    def run(self, name: str, dim: int, beta: float, observe=None) -> tuple[StochasticTransformer, torch.Tensor]:
        """The model ``name`` with softmax attention at ``beta``, and its final state from ``start(dim)``."""
        model = StochasticTransformer(
            self.layers, self.horizon, noise=noise_model(name, dim, beta), attention=SoftmaxAttention(beta)
        )
        source = BulkSource.seeded(self.seed + 1, (self.paths,))
        return model, run_steps(model.step, self.start(dim), self.layers, source, observe)


def partial_width(
    *,
    dim: int = 16,
    tokens: int = 16,
    betas=(0.5, 1.0, 4.0),
    shares=(0.9, 0.99, 0.999, 1.0),
    horizon: float = 30.0,
    h: float = 0.05,
    paths: int = 8,
    seed: int = 0,
) -> dict:
    """Stationary cluster width (mean 1 - cos over pairs, time-averaged over the last third) of the limit SDE
    with partial MLP noise (exact Gaussian field) and softmax attention, against 1 - rho, per activation and
    beta; log-log slopes over rho < 1; at rho = 1 the final width (full synchronization decays to 0)."""
    steps, x0 = (
        round(horizon / h),
        uniform_sphere(tokens, dim, batch=(len(betas), paths), seed=seed, dtype=torch.float64),
    )
    beta_t = torch.tensor(betas, dtype=torch.float64).unsqueeze(-1)  # (B, 1): broadcast over paths
    rows = []
    for act, bias in ACTIVATIONS:
        lam = kernel_theory(act, dim, su=bias, sw=bias).lambda_bar
        for share in shares:
            field = PartialNoise(GaussianField(act, bias, bias), share)
            solver = make_solver(LimitSDE(field, SoftmaxAttention(beta=beta_t)), steps, horizon)
            acc = {"width": 0.0, "energy": 0.0, "clusters": 0.0, "count": 0}

            def observe(k: int, x: torch.Tensor) -> None:
                if k > 2 * steps // 3 and k % 5 == 0:
                    acc["width"] = acc["width"] + (1 - pairwise_cosines(x)).mean(-1)  # (B, R)
                    acc["energy"] = acc["energy"] + interaction_energy(x, 1.0)
                    acc["clusters"] = acc["clusters"] + width_aware_clusters(x).double()
                    acc["count"] += 1

            final = run_steps(solver.step, x0, steps, BulkSource.seeded(seed + 1, (len(betas), paths)), observe)
            n = acc["count"]
            for b, beta in enumerate(betas):
                w = acc["width"][b] / n
                rows.append(
                    {
                        "activation": act,
                        "bias_std": bias,
                        "lambda_bar": lam,
                        "beta": beta,
                        "share": share,
                        "width": float(w.mean()),
                        "width_se": float(w.std() / math.sqrt(paths)),
                        "energy": float((acc["energy"][b] / n).mean()),
                        "clusters": float((acc["clusters"][b] / n).mean()),
                        "clusters_se": float((acc["clusters"][b] / n).std() / math.sqrt(paths)),
                        "final_width": float((1 - pairwise_cosines(final[b])).mean()),
                    }
                )
    slopes = {}
    for act, _ in ACTIVATIONS:
        for beta in betas:
            pts = [
                (1 - r["share"], r["width"])
                for r in rows
                if r["activation"] == act and r["beta"] == beta and r["share"] < 1
            ]
            slopes[f"{act}/beta={beta}"] = loglog_slope(*zip(*pts)) if len(pts) > 1 else float("nan")
    return {
        "dim": dim,
        "tokens": tokens,
        "horizon": horizon,
        "h": h,
        "paths": paths,
        "rows": rows,
        "loglog_slope": slopes,
    }


def noise_model(name: str, dim: int, beta: float, *, activation: str = "relu", bias_std: float = 0.1):
    """The four noise models at matched strength tr(P C_ii)/(d - 1) = kappa(1) of the MLP noise (matched at
    coinciding tokens, where |y_i| = 1 for the attention-averaged models)."""
    k = kernel_theory(activation, dim, su=bias_std, sw=bias_std).kappa1
    if name == "mlp":
        return MLPNoise(activation, 256, bias_std, bias_std, sampling="conditional")
    if name == "value":
        return ValueNoise(beta, sigma=math.sqrt(k * dim))
    if name == "quadratic":
        return Scaled(QuadraticForm(), k)
    return ResampledHeads(1, beta, sv=math.sqrt(k))


def side_by_side(ens: Ensemble, *, dim: int = 16, beta: float = 1.0, every: int = 10) -> dict:
    """E_beta(t), P(one cluster) and the fraction of antipodal pairs of the four noise models with softmax
    attention (Q^T K = beta I, V = I), the same initial tokens and the same matched noise strength."""
    x0 = ens.start(dim)
    out = {"dim": dim, "tokens": ens.tokens, "beta": beta, "horizon": ens.horizon, "layers": ens.layers}
    out["paths"] = ens.paths
    for name in MODELS:
        t, e, one, anti = [0.0], [float(interaction_energy(x0, beta).mean())], [0.0], [0.0]

        def observe(k: int, x: torch.Tensor) -> None:
            if k % every == 0:
                t.append(k * ens.horizon / ens.layers)
                e.append(float(interaction_energy(x, beta).mean()))
                one.append(float(one_cluster(x, FIGURE_CLUSTER_COS).double().mean()))
                anti.append(float(antipodal_pairs(x, FIGURE_CLUSTER_COS).mean()))

        ens.run(name, dim, beta, observe)
        out[name] = {"t": t, "energy": e, "p_one_cluster": one, "antipodal_pairs": anti}
    return out


def phase_diagram(ens: Ensemble, *, betas=(0.5, 1.0, 2.0, 4.0), dims=(4, 8, 16)) -> dict:
    """P(one cluster) and the fraction of antipodal pairs at the horizon, per noise model over (beta, d)."""
    out = {"betas": list(betas), "dims": list(dims), "tokens": ens.tokens, "horizon": ens.horizon}
    out["paths"] = ens.paths
    for name in MODELS:
        one, anti = np.zeros((len(dims), len(betas))), np.zeros((len(dims), len(betas)))
        for i, d in enumerate(dims):
            for j, beta in enumerate(betas):
                x = ens.run(name, d, beta)[1]
                one[i, j] = float(one_cluster(x, FIGURE_CLUSTER_COS).double().mean())
                anti[i, j] = float(antipodal_pairs(x, FIGURE_CLUSTER_COS).mean())
        out[name] = {"p_one_cluster": one.tolist(), "antipodal_pairs": anti.tolist()}
    return out
