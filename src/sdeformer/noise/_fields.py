"""The limit Brownian field W(t, x) of THEORY section 3, drawn at the token positions.

``GaussianField`` (exact Gaussian law at the tokens, covariance kappa(<x_i, x_j>)), ``RandomFeatureField``
(M fixed random features, evaluable at any set of points); ``noise._gram.GramMLPField`` (the width-m MLP drawn through
its Gram matrix, for the width coupling). Each splits a draw into ``apply(y, dt, z, source)``, deterministic
given the standard normals ``z``, and ``increment`` (which draws ``z`` from the source): a
``contracts.Replayable`` and a ``NoiseField``. The first two are ``LimitField``s of the SDE.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import torch

from ..contracts import RandomSource
from ..core._activations import Activation, get_activation
from ..core._errors import ConfigError
from ..core._kernel import KernelTheory, kernel_theory
from ..core._rng import Seeds, Streams
from ..core._validate import dimension, nonneg_float, positive_int
from ._covariance import IsotropicKernel
from ._roots import arccos_kappa, eigh_root, first_copies, psd_sqrt

# These fields split a draw into ``apply(y, dt, z, source)``, deterministic given the standard normals ``z``
# ``(..., *normal_shape(y))``, and ``increment`` (which draws ``z`` from the source). Feeding the same ``z``
# (``BrownianPath`` + ``ReplayedNoise``) couples runs: coarse and fine depth, finite and infinite width,
# small and large clouds. ``variance(y)`` is the field's variance k(y, y) at each token, ``(..., N, 1)`` or a
# scalar tensor: the SDE's Ito correction is ``-(d-1)/2 variance(y) y``.

KAPPA_TABLE_POINTS = 2049  # uniform grid on [-1, 1] for interpolating quadrature kernels
# added to K's diagonal, relative to kappa(1): (float32 input, float64 input). In float32, K carries errors
# ~1e-7 kappa(1); the jitter (independent noise of that relative size) sits at float32 token resolution.
CHOLESKY_JITTER = (1e-6, 1e-10)
FACTOR_BLOCK = 1 << 17  # Gram entries per block of runs in GaussianField.factor (docs/benchmarks.md)


def check_bias_stds(su: object, sw: object) -> None:
    nonneg_float("su", su, "bias std")
    nonneg_float("sw", sw, "bias std")


def _std(value: float | torch.Tensor) -> float | torch.Tensor:
    """A bias std as a float, or the tensor itself when it requires a gradient (training through the field)."""
    return value if isinstance(value, torch.Tensor) and value.requires_grad else float(value)


class FromNormals(ABC):
    """A field drawn from standard normals z ``(..., *normal_shape(y))``: ``increment`` draws z from the source
    and calls ``apply`` (THEORY section 3: replaying z couples runs)."""

    @abstractmethod
    def normal_shape(self, y: torch.Tensor) -> tuple[int, ...]: ...

    @abstractmethod
    def apply(self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource) -> torch.Tensor: ...

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        """A fresh field increment at the tokens. ``(..., N, d) -> (..., N, d)``."""
        return self.apply(y, dt, source.randn(self.normal_shape(y), y.dtype), source)


class LimitFromNormals(FromNormals):
    """A ``FromNormals`` field of the limit SDE: also the variance k(y, y) and both at once."""

    @abstractmethod
    def variance(self, y: torch.Tensor) -> torch.Tensor: ...

    @abstractmethod
    def apply_and_variance(
        self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]: ...

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A fresh increment and the variance at the same points (the Euler-Maruyama step needs both)."""
        return self.apply_and_variance(y, dt, source.randn(self.normal_shape(y), y.dtype), source)


class GaussianField(LimitFromNormals, IsotropicKernel):
    """The exact Gaussian Brownian field at the token positions (THEORY section 3).

    ``dW(y) = sqrt(dt) R(y) z`` with ``R R^T = K(y) = kappa(<y_i, y_j>)`` ``(..., N, N)`` and z ``(..., N, d)``
    i.i.d. standard normal: exact in law at those points, O(N^3) per step. ``root='cholesky'`` (default;
    ``jitter * kappa(1)``, default CHOLESKY_JITTER, is added to the diagonal; the symmetric root replaces a
    factor that fails), ``root='sqrt'`` (symmetric root, the Gram-matrix coupling of the width limit) or
    ``root='eigh'`` (``field_roots.eigh_root`` in float64: exact, rank-revealing, no jitter noise; coinciding
    tokens get identical increments, so synchronized tokens stay synchronized).
    Raises ConfigError for an unknown activation or root, or a negative bias std.
    """

    def __init__(
        self,
        activation="relu",
        su: float = 0.0,
        sw: float = 0.0,
        *,
        root: str = "cholesky",
        jitter: float | None = None,
        beta: float = 1.0,
    ):
        if root not in ("cholesky", "sqrt", "eigh"):
            raise ConfigError("root", root, "one of ['cholesky', 'sqrt', 'eigh']")
        if jitter is not None:
            nonneg_float("jitter", jitter)
        check_bias_stds(su, sw)
        for name, std in (("su", su), ("sw", sw)):
            if isinstance(std, torch.Tensor) and std.requires_grad:
                raise ConfigError(name, "requires_grad", "GaussianField's kernel tables take no gradient: use "
                                  "RandomFeatureField (its stds are differentiable)")  # fmt: skip
        self.activation: Activation = get_activation(activation)
        self.su, self.sw, self.beta, self.root_kind, self.jitter = float(su), float(sw), float(beta), root, jitter
        self._theories: dict[int, KernelTheory] = {}
        self._tables: dict[int, torch.Tensor] = {}

    @classmethod
    def from_config(cls, p) -> GaussianField:
        """The limit field of a config's MLP kernel (``registry.Params``)."""
        return cls(p.activation, p.su, p.sw, beta=p.beta)

    def kernel(self, x: torch.Tensor) -> torch.Tensor:
        return self.covariance(x)

    def theory(self, d: int):
        """The KernelTheory (THEORY section 2) of this field in dimension ``d`` (cached)."""
        if d not in self._theories:
            self._theories[d] = kernel_theory(self.activation, d, su=self.su, sw=self.sw, beta=self.beta)
        return self._theories[d]

    def kappa(self, t: torch.Tensor, d: int) -> torch.Tensor:
        """kappa(t) in dimension ``d``, computed in the dtype and on the device of ``t`` (THEORY section 2):
        the arc-cosine closed form for the ReLU/leaky-ReLU family, else linear interpolation of a
        KAPPA_TABLE_POINTS table of the quadrature kernel (error below 1e-6 kappa(1))."""
        th = self.theory(d)
        if th.activation.leak is not None:
            return arccos_kappa(t, th)
        if d not in self._tables:
            self._tables[d] = th.kappa(torch.linspace(-1.0, 1.0, KAPPA_TABLE_POINTS, dtype=torch.float64))
        table = self._tables[d].to(t)  # (P,)
        pos = t.clamp(-1.0, 1.0).add_(1.0).mul_((KAPPA_TABLE_POINTS - 1) / 2.0)  # in [0, P-1]
        i = pos.long().clamp_(max=KAPPA_TABLE_POINTS - 2)  # truncation = floor for pos >= 0
        return torch.lerp(table[i], table[i + 1], pos.sub_(i))

    def covariance(self, y: torch.Tensor) -> torch.Tensor:
        """K(y) = kappa(<y_i, y_j>) of the directions y / |y| (the field is extended off the sphere as
        constant along rays, which keeps K a valid covariance), ``(..., N, d) -> (..., N, N)``."""
        u = y / torch.linalg.vector_norm(y, dim=-1, keepdim=True)  # (..., N, d)
        return self.kappa(u @ u.transpose(-1, -2), y.shape[-1])

    def factor(self, y: torch.Tensor) -> torch.Tensor:
        """A root R with R R^T = K(y) (plus jitter for Cholesky, clipped for eigh), ``(..., N, N)``; computed over
        blocks of runs of at most FACTOR_BLOCK Gram entries, so that K and its float64 copy stay in cache."""
        n, runs = y.shape[-2], math.prod(y.shape[:-2])
        per_block = max(1, FACTOR_BLOCK // (n * n))
        if runs <= per_block:
            return self._factor(y)
        blocks = y.reshape(runs, n, y.shape[-1]).split(per_block)
        return torch.cat([self._factor(b) for b in blocks]).reshape(y.shape[:-2] + (n, n))

    def _factor(self, y: torch.Tensor) -> torch.Tensor:
        if self.root_kind == "sqrt":
            return psd_sqrt(self.covariance(y))
        if self.root_kind == "eigh":
            return eigh_root(self.covariance(y).to(torch.float64)).to(y.dtype)
        k = self.covariance(y).to(torch.float64)  # (..., N, N); factored in float64 (K ~ rank 1 at sync)
        jitter = self.jitter if self.jitter is not None else CHOLESKY_JITTER[y.dtype == torch.float64]
        k.diagonal(dim1=-2, dim2=-1).add_(jitter * self.theory(y.shape[-1]).kappa1)  # k is a fresh tensor
        chol, info = torch.linalg.cholesky_ex(k)  # batched over the whole ensemble
        failed = info > 0  # (...)
        if bool(failed.any()):  # symmetric root where Cholesky failed
            chol = torch.where(failed[..., None, None], psd_sqrt(k), chol)
        return chol.to(y.dtype)

    def normal_shape(self, y: torch.Tensor) -> tuple[int, ...]:
        return tuple(y.shape[-2:])

    def apply(self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """sqrt(dt) R(y) z. ``y``, ``z``: (..., N, d) -> (..., N, d); with the eigh root, coinciding tokens get
        bit-identical increments (``roots.first_copies``)."""
        out = math.sqrt(dt) * (self.factor(y) @ z)  # (..., N, d)
        copies = first_copies(y) if self.root_kind == "eigh" else None
        return out if copies is None else out.gather(-2, copies.unsqueeze(-1).expand_as(out))

    def apply_and_variance(
        self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(``apply(y, dt, z)``, ``variance(y)``): the field has no work to share between them."""
        return self.apply(y, dt, z, source), self.variance(y)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        """kappa(1) (a scalar tensor)."""
        return torch.tensor(self.theory(y.shape[-1]).kappa1, dtype=y.dtype, device=y.device)


class RandomFeatureField(LimitFromNormals, IsotropicKernel):
    """Random-feature Brownian field with M fixed features (THEORY section 3):

        dW(x) = sqrt(dt) [ M^{-1/2} z_{1..M}^T act(d^{-1/2} U x + bU) + sW z_0 ],  U ~ N(0,1), bU ~ N(0, sU^2)

    with (U, bU) drawn once (per batch element of ``batch``, from ``seed``) and z ``(..., M+1, d)`` fresh
    normals each step. Its covariance (1/M) phi(x).phi(y) + sW^2 tends to kappa(<x, y>) as M grows; it is
    evaluable at any set of points (in blocks of at most ``chunk_elements`` features over the whole batch, phi
    evaluated once per block for both the increment and the variance: 10^5 particles fit in memory), which couples
    clouds of different sizes. Raises ConfigError for M < 1, d < 2 or a negative bias std.
    """

    def __init__(
        self,
        activation="relu",
        features: int = 1024,
        dim: int = 3,
        su: float = 0.0,
        sw: float = 0.0,
        *,
        seed: Seeds = 0,
        batch: tuple[int, ...] = (),
        dtype: torch.dtype = torch.float32,
        device: str | torch.device = "cpu",
        chunk_elements: int = 1 << 18,
    ):
        features, dim = positive_int("features", features), dimension("dim", dim)
        check_bias_stds(su, sw)
        self.activation: Activation = get_activation(activation)
        self.features, self.dim, self.su, self.sw = features, dim, _std(su), _std(sw)
        source = Streams(seed, tuple(batch), device)
        self.U = source.randn((self.features, self.dim), dtype)  # (*batch, M, d)
        self.bU_normal = source.randn((self.features,), dtype)  # (*batch, M); the bias is su times it
        self.chunk_elements = max(1, int(chunk_elements))

    def phi(self, y: torch.Tensor) -> torch.Tensor:
        """Features act(d^{-1/2} U y + bU), ``(..., N, d) -> (..., N, M)``."""
        bias = (self.bU_normal * self.su).to(y)  # (*batch, M), formed here: a gradient reaches su from every step
        pre = (y @ self.U.transpose(-1, -2).to(y)).mul_(1.0 / math.sqrt(self.dim)).add_(bias.unsqueeze(-2))
        return self.activation(pre)  # (..., N, M)

    def kernel(self, x: torch.Tensor) -> torch.Tensor:
        return self.covariance(x, x)

    def covariance(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """(1/M) phi(x).phi(y) + sW^2, ``(..., N, d), (..., N', d) -> (..., N, N')``."""
        px = self.phi(x)  # (..., N, M)
        py = px if y is x else self.phi(y)  # (..., N', M)
        return px @ py.transpose(-1, -2) / self.features + self.sw**2

    def normal_shape(self, y: torch.Tensor) -> tuple[int, ...]:
        return (self.features + 1, y.shape[-1])

    def apply(self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """The increment at the points y ``(..., N, d)`` given normals z ``(..., M+1, d)``."""
        inc, _ = self._evaluate(y, dt, z, variance=False)
        assert inc is not None
        return inc

    def apply_and_variance(
        self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(``apply(y, dt, z)``, ``variance(y)``) from one evaluation of phi per chunk."""
        inc, var = self._evaluate(y, dt, z, variance=True)
        assert inc is not None and var is not None
        return inc, var

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        """k(y, y) = |phi(y)|^2 / M + sW^2, ``(..., N, 1)``."""
        _, var = self._evaluate(y, 0.0, None, variance=True)
        assert var is not None
        return var

    def _evaluate(
        self, y: torch.Tensor, dt: float, z: torch.Tensor | None, variance: bool
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(increment or None, variance or None), phi computed once per block of points; a block holds at most
        ``chunk_elements`` features over the whole batch, so 10^5 particles (or a batch of clouds) fit."""
        rows = max(1, self.chunk_elements // (self.features * max(1, math.prod(y.shape[:-2]))))
        zf = None if z is None else z[..., : self.features, :] / math.sqrt(self.features)  # (..., M, d)
        incs, vars_ = [], []
        for block in y.split(rows, dim=-2):
            phi = self.phi(block)  # (..., n, M)
            if zf is not None:
                incs.append(phi @ zf)  # (..., n, d)
            if variance:
                vars_.append(phi.pow(2).mean(-1, keepdim=True))  # (..., n, 1)
        inc = var = None
        if z is not None:
            z0 = z[..., self.features :, :] * self.sw  # (..., 1, d)
            inc = (torch.cat(incs, dim=-2) if len(incs) > 1 else incs[0]).add_(z0).mul_(math.sqrt(dt))
        if variance:
            var = (torch.cat(vars_, dim=-2) if len(vars_) > 1 else vars_[0]).add_(self.sw**2)
        return inc, var
