"""How fast each normalization scheme clusters without noise, against arXiv:2510.22026 (BEYOND section 6).

The paper's theorem on the speed of cluster collapse (read in its Lean formalization of ``thm: preln-slow``
(ii)): from a local cone, with V = I, the intra-cluster variance Var = (1/N) sum_i |theta_i - mean|^2 obeys
d Var / dt = -Theta(Var / scale(t)) with scale 1 (Post-LN), t (Pre-, Mix-, Peri-LN), 1 / alpha (nGPT) and
sqrt(t) (sqrt-scaling). Near consensus the attention is the plain mean, every deviation decays at rate
(speed), so the constant is 2 (BEYOND section 6, derived): with V = s I,

    post  Var ~ exp(-2 s t)           exponential, constant 2 s in t
    ngpt  Var ~ exp(-2 alpha t)       exponential, constant 2 alpha in t (LN(A) drops s > 0)
    pre, peri, mix (after the switch)  Var ~ t^-2   polynomial, exponent 2 (r grows like t)
    sqrt  Var ~ exp(-4 s sqrt(1 + t)) stretched, constant 4 s in sqrt(1 + t)

``clustering_check`` runs the discrete model from a local cone, fits log Var against the law's coordinate over
the window [T/10, T] and holds when the fitted constant and the fits on each half of the window are within
``TOLERANCE`` of the predicted constant (a wrong law gives unequal halves). The exponent 2 of the polynomial law
is scale-free; its constant is carried by the radius r = r_0 + c t (``radius_check``: c = s for Pre- and Mix-LN,
1 for Peri-LN), whose power is a 10 % / 20 % error of c.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..attention._softmax import SoftmaxAttention
from ..core._errors import ConfigError
from ..core._sphere import project
from ..dynamics._discrete import StochasticTransformer
from ..dynamics._loop import SaveAt
from ..dynamics._norms.schemes import NGPT, MixLN, Normalization, PeriLN, PostLN, PreLN, SqrtScaling
from ._power import deterministic

TOLERANCE = 0.03  # relative: the discretization bias (h s / 2 <= 1.3%), the 1/t term of the polynomial (< 1%)
COORDINATES = {"t": lambda t: t, "log t": np.log, "sqrt(1 + t)": lambda t: np.sqrt(1 + t)}
SAVES = 200  # saved states per run


@dataclass(frozen=True)
class Law:
    """A clustering law: ``kind`` (exponential, polynomial, stretched), ``constant`` = -d log Var / d coordinate
    and the ``coordinate`` (a key of COORDINATES); ``horizon`` and ``layers``: the run that resolves it."""

    kind: str
    constant: float
    coordinate: str
    horizon: float
    layers: int


@dataclass(frozen=True)
class ClusteringCheck:
    """One fit: the scheme, the law checked, the window, the fitted constant over it and over its two halves."""

    scheme: str
    law: Law
    window: tuple[float, float]
    measured: float
    halves: tuple[float, float]

    @property
    def holds(self) -> bool:
        c = self.law.constant
        return all(abs(m / c - 1) <= TOLERANCE for m in (self.measured, *self.halves))


def predicted_law(norm: Normalization, scale: float = 1.0) -> Law:
    """The law of ``norm`` for attention V = ``scale`` I (> 0) from a local cone (see the module docstring).
    Raises ConfigError for a scale <= 0 or a scheme without a stated law."""
    if not scale > 0:
        raise ConfigError("attention_scale", scale, "the clustering laws need an attractive V = s I, s > 0")
    if isinstance(norm, NGPT):
        return Law("exponential", 2 * norm.alpha, "t", 20 / norm.alpha, math.ceil(400 / norm.alpha))
    if isinstance(norm, PostLN):
        return Law("exponential", 2 * scale, "t", 10 / scale, 1000)
    if isinstance(norm, SqrtScaling):
        return Law("stretched", 4 * scale, "sqrt(1 + t)", 60 / scale**2, 3000)
    if isinstance(norm, (PreLN, PeriLN, MixLN)):
        return Law("polynomial", 2.0, "log t", 1000.0, 2000)
    raise ConfigError("norm", repr(norm), "no clustering law is stated for this scheme")


def intra_cluster_variance(x: torch.Tensor) -> torch.Tensor:
    """(1/N) sum_i |theta_i - mean_j theta_j|^2 of the directions, ``(..., N, d) -> (...)``."""
    theta = project(x)
    return (theta - theta.mean(-2, keepdim=True)).pow(2).sum(-1).mean(-1)


def local_cone(tokens: int, dim: int, spread: float = 0.2, seed: int = 0) -> torch.Tensor:
    """Tokens LN(e_1 + spread g_i), g_i standard Gaussian, float64 ``(N, d)``: the theorem's local start."""
    g = torch.randn(tokens, dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    g[:, 0] += 1.0 / spread
    return project(g)


def _slope(coord: np.ndarray, logvar: np.ndarray, keep: np.ndarray) -> float:
    return -float(np.polyfit(coord[keep], logvar[keep], 1)[0])


def clustering_check(
    norm: Normalization,
    law: Law | None = None,
    *,
    tokens: int = 8,
    dim: int = 6,
    beta: float = 1.0,
    scale: float = 1.0,
    seed: int = 0,
) -> ClusteringCheck:
    """Run ``norm`` without noise (softmax attention Q^T K = beta I, V = scale I) from ``local_cone`` over the
    horizon of ``law`` (default: the scheme's own, ``predicted_law``), fit -d log Var / d coordinate over
    [T/10, T] (after a Mix-LN switch: the time since it) and on each half of the window."""
    law = law or predicted_law(norm, scale)
    model = StochasticTransformer(law.layers, law.horizon, attention=SoftmaxAttention(beta, scale), norm=norm)
    traj = model.run(local_cone(tokens, dim, seed=seed), saveat=SaveAt(every=max(1, law.layers // SAVES)))
    t = traj.t.numpy() - (norm.switch if isinstance(norm, MixLN) else 0.0)
    logvar = np.log(intra_cluster_variance(traj.x).numpy())
    lo, hi = law.horizon / 10, float(t[-1])
    mid, coord = (lo + hi) / 2, COORDINATES[law.coordinate](np.maximum(t, 1e-12))
    window = (t >= lo) & (t <= hi)
    halves = (_slope(coord, logvar, window & (t <= mid)), _slope(coord, logvar, window & (t >= mid)))
    return ClusteringCheck(norm.name, law, (lo, hi), _slope(coord, logvar, window), halves)


# -- the constant of the t^-2 law: the radius (a second observable) -----------------------------------------------


def radius_slope(norm: Normalization, scale: float = 1.0, *, tokens: int = 8, dim: int = 6, beta: float = 1.0,
                 seed: int = 0) -> float:  # fmt: skip
    """The mean radius' growth rate dr/dt of a residual-stream scheme without noise, fitted over [T/10, T]
    (``predicted_law``'s run; after a Mix-LN switch, the time since it). ``r = r_0 + c t`` near consensus carries
    the constant of ``Var ~ (r_0 + c t)^-2`` that the exponent cannot see."""
    law = predicted_law(norm, scale)
    model = StochasticTransformer(law.layers, law.horizon, attention=SoftmaxAttention(beta, scale), norm=norm)
    traj = model.run(local_cone(tokens, dim, seed=seed), saveat=SaveAt(every=max(1, law.layers // SAVES)))
    t = traj.t.numpy() - (norm.switch if isinstance(norm, MixLN) else 0.0)
    r = traj.x.norm(dim=-1).mean(-1).numpy()
    keep = (t >= law.horizon / 10) & (t <= t[-1])
    return float(np.polyfit(t[keep], r[keep], 1)[0])


def radius_constant(norm: Normalization, scale: float = 1.0) -> float:
    """The predicted dr/dt near consensus: ``<theta, A>`` = s for Pre- and Mix-LN (V = s I), ``<theta, A / |A|>``
    = 1 for Peri-LN (the scale drops out). Raises ConfigError for a scheme on the sphere."""
    if isinstance(norm, (PreLN, MixLN)):
        return scale
    if isinstance(norm, PeriLN):
        return 1.0
    raise ConfigError("norm", repr(norm), "only Pre-, Peri- and Mix-LN grow a radius")


def radius_check(norm: Normalization, scale: float = 1.0) -> dict:
    """The radius growth rate against ``radius_constant`` (``TOLERANCE``, deterministic), and its power: the
    model re-run with V x (1 + size) (Pre-, Mix-LN: the constant moves with it) or, where the scale drops out
    (Peri-LN), the prediction moved by the size, both signs (``checks._power.deterministic``: catch rates 0 or 1,
    ``size_80``, ``smallest_error_caught``)."""
    predicted, measured = radius_constant(norm, scale), radius_slope(norm, scale)

    def caught(size: float) -> bool:
        if isinstance(norm, PeriLN):
            return abs(measured / (predicted * (1 + size)) - 1) > TOLERANCE
        return abs(radius_slope(norm, scale * (1 + size)) / predicted - 1) > TOLERANCE

    basis = "prediction moved (the scale drops out)" if isinstance(norm, PeriLN) else "V x (1 + size), re-run"
    catch = deterministic(caught, basis).fields()
    holds = abs(measured / predicted - 1) <= TOLERANCE and catch["size_80"] is not None
    return {"scheme": norm.name, "quantity": "radius growth rate dr/dt", "predicted": predicted,
            "measured": measured, "tolerance": TOLERANCE, **catch, "sign_only": False,
            "power_basis": basis, "holds": holds}  # fmt: skip
