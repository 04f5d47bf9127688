"""Measurements of report part 3 (BEYOND.md): partial noise with attention on, the four noise models side by
side at matched strength, and their (beta, d) phase diagrams. Pure functions: settings -> dict of numbers."""

from __future__ import annotations

import math

import numpy as np
import torch

from ...attention.softmax import SoftmaxAttention
from ...core.kernel import kernel_theory
from ...core.sphere import uniform_sphere
from ...dynamics.discrete import StochasticTransformer
from ...dynamics.sde import LimitSDE, make_solver
from ...noise.fields import GaussianField
from ...noise.heads import ResampledHeads
from ...noise.mlp import MLPNoise
from ...noise.partial import PartialNoise
from ...noise.quadratic import QuadraticForm
from ...noise.scaled import Scaled
from ...noise.sources import BulkSource
from ...noise.value import ValueNoise
from ...observables import (
    antipodal_pairs,
    cluster_count,
    interaction_energy,
    loglog_slope,
    one_cluster,
    pairwise_cosines,
)
from ...theory.montecarlo import run_steps

ACTIVATIONS = (("relu", 0.1), ("silu", 0.0))  # lambda_bar < 0 and > 0 at d = 16 (non-odd fields)
CLUSTER_COS = 0.99  # all-pairs / connected-components threshold for 'one cluster'
MODELS = ("mlp", "value", "quadratic", "heads")


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
                    acc["clusters"] = acc["clusters"] + cluster_count(x, CLUSTER_COS).double()
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


def side_by_side(
    *,
    dim: int = 16,
    tokens: int = 16,
    beta: float = 1.0,
    horizon: float = 30.0,
    layers: int = 300,
    paths: int = 16,
    every: int = 10,
    seed: int = 0,
) -> dict:
    """E_beta(t), P(one cluster) and the fraction of antipodal pairs of the four noise models with softmax
    attention (Q^T K = beta I, V = I), the same initial tokens and the same matched noise strength."""
    x0 = uniform_sphere(tokens, dim, batch=(paths,), seed=seed, dtype=torch.float64)
    out = {"dim": dim, "tokens": tokens, "beta": beta, "horizon": horizon, "layers": layers, "paths": paths}
    for name in MODELS:
        model = StochasticTransformer(
            layers, horizon, noise=noise_model(name, dim, beta), attention=SoftmaxAttention(beta)
        )
        t, e, one, anti = [0.0], [float(interaction_energy(x0, beta).mean())], [0.0], [0.0]

        def observe(k: int, x: torch.Tensor) -> None:
            if k % every == 0:
                t.append(k * model.dt)
                e.append(float(interaction_energy(x, beta).mean()))
                one.append(float(one_cluster(x, CLUSTER_COS).double().mean()))
                anti.append(float(antipodal_pairs(x, CLUSTER_COS).mean()))

        run_steps(model.step, x0, layers, BulkSource.seeded(seed + 1, (paths,)), observe)
        out[name] = {"t": t, "energy": e, "p_one_cluster": one, "antipodal_pairs": anti}
    return out


def phase_diagram(
    *,
    betas=(0.5, 1.0, 2.0, 4.0),
    dims=(4, 8, 16),
    tokens: int = 16,
    horizon: float = 20.0,
    layers: int = 200,
    paths: int = 8,
    seed: int = 0,
) -> dict:
    """P(one cluster) and the fraction of antipodal pairs at the horizon, per noise model over (beta, d)."""
    out = {"betas": list(betas), "dims": list(dims), "tokens": tokens, "horizon": horizon, "paths": paths}
    for name in MODELS:
        one, anti = np.zeros((len(dims), len(betas))), np.zeros((len(dims), len(betas)))
        for i, d in enumerate(dims):
            x0 = uniform_sphere(tokens, d, batch=(paths,), seed=seed, dtype=torch.float64)
            for j, beta in enumerate(betas):
                model = StochasticTransformer(
                    layers, horizon, noise=noise_model(name, d, beta), attention=SoftmaxAttention(beta)
                )
                x = run_steps(model.step, x0, layers, BulkSource.seeded(seed + 1, (paths,)))
                one[i, j] = float(one_cluster(x, CLUSTER_COS).double().mean())
                anti[i, j] = float(antipodal_pairs(x, CLUSTER_COS).mean())
        out[name] = {"p_one_cluster": one.tolist(), "antipodal_pairs": anti.tolist()}
    return out
