"""The NNGP kernel kappa and the constants built from it (THEORY section 2).

For t in [-1, 1], with S ~ N(0, u^2 + sU^2), D ~ N(0, v^2), u = sqrt((1+t)/(2d)), v = sqrt((1-t)/(2d)):

    kappa(t) = E[act(S + D) act(S - D)] + sW^2

(the two pre-activations u X + v Y + sU Z and u X - v Y + sU Z of THEORY, with S = u X + sU Z and D = v Y).
ReLU and leaky ReLU use the arc-cosine closed form; every other activation uses 2-D Gauss-Hermite quadrature in (S, D),
which is exact in D at t = 1 and converges spectrally for smooth activations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
import torch

from ._activations import Activation, TensorFn, get_activation
from ._errors import ConfigError
from ._validate import bias_stds, dimension, nonneg_float, positive_float

QUADRATURE_NODES = 96  # Gauss-Hermite nodes per axis; 96^2 evaluations per t
GRID_POINTS = 1001  # u-grid for inf F on [-1, 1), refined by a bounded minimisation


@lru_cache(maxsize=8)
def _hermite(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Probabilists' Gauss-Hermite nodes and weights normalised to a N(0, 1) expectation (float64)."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return torch.from_numpy(x), torch.from_numpy(w / math.sqrt(2 * math.pi))


BIAS_STD_MAX = 1e6  # sU^2, sW^2 and e^beta must stay finite in float64
BETA_MAX = 700.0


def _check(dim: int, su: float, sw: float, beta: float, names: tuple[str, str] = ("su", "sw")) -> None:
    dimension("dim", dim)
    for name, value in zip(names, (su, sw), strict=True):
        if nonneg_float(name, value, "bias std") > BIAS_STD_MAX:
            raise ConfigError(name, value, f"bias std must be <= {BIAS_STD_MAX:g}")
    if positive_float("beta", beta, "inverse temperature") > BETA_MAX:
        raise ConfigError("beta", beta, f"inverse temperature must be <= {BETA_MAX:g} (e^beta overflows)")


@dataclass(frozen=True)
class KernelTheory:
    """kappa and its constants for one (activation, d, sU, sW, beta). THEORY section 2.

    Attributes (computed on first use): kappa1, dkappa1, lambda1, lambda_bar, lambda_bar_prime,
    odd_field, synchronizes. Methods: kappa(t), F(u).
    """

    activation: Activation
    dim: int
    su: float = 0.0
    sw: float = 0.0
    beta: float = 1.0
    nodes: int = field(default=QUADRATURE_NODES, repr=False)

    def __post_init__(self) -> None:
        _check(self.dim, self.su, self.sw, self.beta)

    # -- kappa --------------------------------------------------------------------------------------
    def kappa(self, t: torch.Tensor | float) -> torch.Tensor:
        """kappa(t) for t in [-1, 1] (any shape, float64 result). Closed form for relu/leaky_relu, else quadrature.

        For act(z) = max(z, a z): act = a z + (1-a) relu(z), and with c = t/d + sU^2 the covariance of the
        two pre-activations, E[act(A) act(B)] = a c + (1-a)^2 * (arc-cosine kernel of relu).
        """
        t = torch.as_tensor(t, dtype=torch.float64).clamp(-1.0, 1.0)
        a = self.activation.leak
        if a is None:
            return self.kappa_quadrature(t)
        var = 1.0 / self.dim + self.su**2  # variance of each pre-activation
        cov = t / self.dim + self.su**2  # covariance of the two pre-activations
        theta = torch.arccos((cov / var).clamp(-1.0, 1.0))
        relu = var / (2 * math.pi) * (torch.sin(theta) + (math.pi - theta) * torch.cos(theta))
        return a * cov + (1 - a) ** 2 * relu + self.sw**2

    def kappa_quadrature(self, t: torch.Tensor | float, chunk: int = 256) -> torch.Tensor:
        """kappa(t) by 2-D Gauss-Hermite quadrature for any activation (float64, shape of t)."""
        t = torch.as_tensor(t, dtype=torch.float64).clamp(-1.0, 1.0)
        x, w = _hermite(self.nodes)  # (n,), (n,)
        flat = t.reshape(-1)
        out = []
        for block in flat.split(chunk):
            s_std = torch.sqrt((1 + block) / (2 * self.dim) + self.su**2)[:, None, None]  # (b, 1, 1)
            d_std = torch.sqrt((1 - block) / (2 * self.dim))[:, None, None]  # (b, 1, 1)
            s = s_std * x[None, :, None]  # (b, n, 1)
            dd = d_std * x[None, None, :]  # (b, 1, n)
            f = self.activation(s + dd) * self.activation(s - dd)  # (b, n, n)
            out.append(torch.einsum("bij,i,j->b", f, w, w))
        return (torch.cat(out) + self.sw**2).reshape(t.shape)

    def _gauss_1d(self, fn) -> float:
        x, w = _hermite(self.nodes)
        z = math.sqrt(1.0 / self.dim + self.su**2) * x
        return float((fn(z) * w).sum())

    # -- constants ----------------------------------------------------------------------------------
    @cached_property
    def kappa1(self) -> float:
        """kappa(1) = E[act(Z)^2] + sW^2, Z ~ N(0, 1/d + sU^2)."""
        a = self.activation.leak
        if a is not None:
            return (1 + a * a) / 2 * (1.0 / self.dim + self.su**2) + self.sw**2
        return self._gauss_1d(lambda z: self.activation(z) ** 2) + self.sw**2

    @cached_property
    def dkappa1(self) -> float:
        """kappa'(1) = (1/d) E[act'(Z)^2] (a single factor 1/d; THEORY misprint note)."""
        a = self.activation.leak
        if a is not None:
            return (1 + a * a) / 2 / self.dim
        return self._gauss_1d(lambda z: self.activation.deriv(z) ** 2) / self.dim

    @cached_property
    def lambda1(self) -> float:
        """Top Lyapunov exponent of the noise-only flow: (d-3)/2 kappa'(1) - (d-1)/2 kappa(1)."""
        d = self.dim
        return (d - 3) / 2 * self.dkappa1 - (d - 1) / 2 * self.kappa1

    @cached_property
    def lambda_bar(self) -> float:
        """Coercivity constant (d-1) kappa'(1) - (d-3) kappa(1); synchronization needs < 0."""
        d = self.dim
        return (d - 1) * self.dkappa1 - (d - 3) * self.kappa1

    def F(self, u: torch.Tensor | float) -> torch.Tensor:
        """F(u) = beta e^{beta u} G(u) / (e^beta - e^{beta u}) on [-1, 1); the limit -lambda_bar at u = 1."""
        u = torch.as_tensor(u, dtype=torch.float64)
        b, d, k1 = self.beta, self.dim, self.kappa1
        ku = self.kappa(u)
        g = ku * (d - 2 + u**2 - b * u * (1 - u**2)) + k1 * (b * (1 - u**2) - (d - 1) * u)
        # e^b - e^{bu} = e^{bu} expm1(b (1 - u)): stable near u = 1
        f = b * g / torch.expm1(b * (1 - u))
        return torch.where(u >= 1.0, torch.full_like(u, -self.lambda_bar), f)

    @cached_property
    def F_grid(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(u, F(u)) on GRID_POINTS points of [-1, 1], the last point being the limit u = 1."""
        u = torch.linspace(-1.0, 1.0, GRID_POINTS, dtype=torch.float64)
        return u, self.F(u)

    @cached_property
    def lambda_bar_prime(self) -> float:
        """Energy-decay rate of the synchronization theorem: -inf_{u in [-1, 1)} F(u).

        The infimum is found on a uniform grid (including the limit u -> 1, where F -> -lambda_bar),
        then refined by a bounded scalar minimisation around the best grid point.
        """
        from scipy.optimize import minimize_scalar

        u, f = self.F_grid
        k = int(torch.argmin(f))
        best = float(f[k])
        lo, hi = float(u[max(k - 1, 0)]), float(u[min(k + 1, len(u) - 1)])
        if hi > lo:
            res = minimize_scalar(
                lambda s: float(self.F(min(s, 1.0))), bounds=(lo, hi), method="bounded", options={"xatol": 1e-10}
            )
            best = min(best, float(res.fun))  # pyright: ignore[reportAttributeAccessIssue]
        return -best

    @property
    def odd_field(self) -> bool:
        """The noise field is odd (G(-x) = -G(x)) when act is odd and sU = sW = 0 (THEORY section 2)."""
        return self.activation.odd and self.su == 0.0 and self.sw == 0.0

    @property
    def synchronizes(self) -> bool:
        """The theorem's verdict: the field is not odd and lambda_bar < 0."""
        return (not self.odd_field) and self.lambda_bar < 0

    def summary(self) -> dict:
        """Plain-JSON dictionary of the constants (the `sdeformer kernel --json` object)."""
        return {
            "activation": self.activation.name,
            "dim": self.dim,
            "su": self.su,
            "sw": self.sw,
            "beta": self.beta,
            "kappa1": self.kappa1,
            "dkappa1": self.dkappa1,
            "lambda1": self.lambda1,
            "lambda_bar": self.lambda_bar,
            "lambda_bar_prime": self.lambda_bar_prime,
            "odd_field": self.odd_field,
            "synchronizes": self.synchronizes,
        }


def kernel_theory(
    activation: str | Activation | TensorFn = "relu",
    dim: int = 64,
    *,
    bias_std: float | None = None,
    su: float | None = None,
    sw: float | None = None,
    beta: float = 1.0,
    **act_params: float,
) -> KernelTheory:
    """The kernel theory of one MLP noise law. ``bias_std`` sets sU = sW; or give ``su`` and ``sw``.

    Raises ConfigError for an unknown activation, d < 2, a negative bias std or beta <= 0, and when
    ``bias_std`` is given together with ``su``/``sw``.
    """
    su, sw = bias_stds(bias_std, su, sw)
    names = ("bias_std", "bias_std") if bias_std is not None else ("su", "sw")
    _check(dim, 0.0 if su is None else su, 0.0 if sw is None else sw, beta, names)  # before the conversions below
    return KernelTheory(
        get_activation(activation, **act_params), int(dim), float(su or 0.0), float(sw or 0.0), float(beta)
    )
