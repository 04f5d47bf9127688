"""The density solver of the common-noise SPDE (THEORY section 4; docs/spde.md sections 1-5):

    d mu + div(P_x Attn(mu, .) mu) dt + sum_k div(P_x sigma_k mu) dB^k = (kappa(1)/2) Laplace_S mu dt

on the circle (Fourier) and the 2-sphere (spherical harmonics), with the same B^k as a particle cloud.

Time scheme: the Lagrangian push-forward of the density by one step of the particle scheme. Each step, the
density rho (coefficients ``(..., P)``, degree <= L) is sampled on a quadrature grid (points y_j, weights w_j),
every grid point takes one step of the limit SDE's scheme (``dynamics._sde.make_solver``, projected
Euler-Maruyama of the Ito SDE by default) with the step's Brownian coefficients z and the attention of rho, and
the new coefficients are those of sum_j w_j rho(y_j) delta_{T(y_j)}, cut at degree L:

    c_k(t + dt) = sum_j w_j rho(y_j) conj(B_k(T(y_j))).

So the density is advanced by exactly the map that advances the particles (``LimitSDE`` with a ``ReplayedNoise``
of the same ``fields.SpectralField`` and the same z): it is the conditional law, given the noise, of the
particle scheme, whose Ito correction it inherits; the Laplacian of the SPDE is never added (it is the
Ito-Stratonovich correction of the transport noise, docs/spde.md section 5). Weak order 1. Mass (c_0) is
conserved to round-off (the quadrature integrates rho exactly); positivity holds for the push-forward and is
lost only through the cut at degree L, which ``diagnostics`` reports.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import torch

from ..contracts import AttentionDrift, RandomSource
from ..core._errors import ConfigError
from ..core._rng import Seeds, Streams
from ..core._validate import memory_size, positive_float, positive_int
from ..dynamics._loop import SaveAt, Trajectory, as_saveat, integrate
from ..dynamics._sde import LimitSDE
from ..dynamics._step_guard import check_step
from ..noise._replay import ReplayedNoise
from ..registry import SOLVERS
from . import _budget as budget
from ._attention import KernelAttention, MeasureAttention
from ._fields import SpectralField
from ._harmonics import Harmonics, harmonics

ATTENTIONS = ("softmax", "usa", "off")
QUADRATURE_FACTOR = 4  # grid exact to degree 4 (L + M) + 8: the push-forward integrand carries the noise's modes


def default_quadrature(modes: int, noise_modes: int) -> int:
    """The grid's exact degree: 4 (L + M) + 8 (docs/spde.md section 1: doubling it changes c by < 1e-12)."""
    return QUADRATURE_FACTOR * (modes + noise_modes) + 8


class DensitySolver:
    """The SPDE on S^{d-1} (d = 2, 3) at resolution ``modes`` (degree L) for ``steps`` steps to ``horizon``.

    ``field``: the noise (``fields.mlp_noise``; its dimension is the solver's); ``attention``: softmax, usa or
    off, with Q^T K = ``beta`` I and V = ``scale`` I; ``scheme``: a ``registry.SOLVERS`` name; ``quadrature``:
    the grid's exact degree (default ``default_quadrature``); ``max_memory``: bytes or "8G" (None: the memory
    available now). ``run(c0, seed, saveat, particles=...)`` is the one verb. Raises ConfigError for a bad choice
    or number, beta above ``budget.BETA_MAX``, a run whose memory estimate (``budget.density_bytes``) exceeds the
    limit, and NaN or zero-mass coefficients. A step outside the scheme's range (``dynamics._step_guard``:
    (d-1) k dt > 1 or dt beta |s| > 1) warns and sets ``saturated``: the run is then reported below resolution."""

    def __init__(
        self,
        field: SpectralField,
        modes: int,
        steps: int,
        horizon: float,
        *,
        attention: str = "softmax",
        beta: float = 1.0,
        scale: float = 1.0,
        scheme: str = "projected",
        quadrature: int | None = None,
        max_memory: float | str | None = None,
    ):
        if attention not in ATTENTIONS:
            raise ConfigError("attention", attention, f"one of {list(ATTENTIONS)} for the density solver")
        self.scheme_class = SOLVERS.check(SOLVERS[scheme])  # what make_solver(sde, 1, dt, scheme) builds
        self.field, self.scheme = field, scheme
        self.steps, self.horizon = positive_int("steps", steps), positive_float("horizon", horizon)
        self.max_memory = None if max_memory is None else memory_size("max_memory", max_memory)
        self.quadrature = None if quadrature is None else positive_int("quadrature", quadrature)
        self.check_memory(positive_int("modes", modes), 1, ())  # before any table is built
        self.basis: Harmonics = harmonics(field.basis.dim, modes)
        exact = default_quadrature(modes, field.modes) if quadrature is None else quadrature
        self.grid, self.weights = self.basis.quadrature(exact)  # (J, d), (J,)
        on = attention != "off"
        dim = self.basis.dim
        self.attention = KernelAttention(dim, beta, scale, attention, degree=modes + 1) if on else None
        self.saturated = check_step(dim, field.k, self.dt, self.attention)  # outside the scheme's range: warned
        self._tables: dict[Any, tuple[Any, ...]] = {}

    def check_memory(self, modes: int, batch: int, particles: tuple[int, ...], saved: int = 1) -> float:
        """The estimate of ``budget.density_bytes`` for this grid, ``batch`` runs, clouds of ``particles``
        tokens (all kept at ``saved`` times); ConfigError above ``max_memory`` (None: the memory available)."""
        dim, tokens = self.field.basis.dim, sum(particles)
        parts = budget.density_bytes(
            dim,
            modes,
            self.field.modes,
            saved=saved,
            steps=self.steps,
            particles=tokens,
            batch=batch,
            quadrature=self.quadrature,
            kept=tokens,
        )
        return budget.check_memory(parts, self.max_memory)

    @functools.cached_property
    def particle_attention(self) -> KernelAttention | None:
        """The clouds' attention: the same softmax or USA, its series cut where F_l / F_0 < 1e-17 (exact)."""
        att = self.attention
        return None if att is None else KernelAttention(self.dim, att.beta, att.scale, att.kind)

    @property
    def dt(self) -> float:
        return self.horizon / self.steps

    @property
    def dim(self) -> int:
        return self.basis.dim

    def __repr__(self) -> str:
        kind = "off" if self.attention is None else self.attention.kind
        return (
            f"DensitySolver(dim={self.dim}, modes={self.basis.degree}, grid={self.grid.shape[0]}, "
            f"noise_modes={self.field.modes}, attention={kind}, steps={self.steps}, horizon={self.horizon})"
        )

    def grid_on(self, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, Any, Any]:
        """(points, weights, the basis' and the attention's ``prepare(points)``) in the real dtype and on the
        device of ``like`` (computed once per dtype and device)."""
        real = like.real.dtype if like.is_complex() else like.dtype
        key = (real, like.device)
        if key not in self._tables:
            pts, w = self.grid.to(real).to(like.device), self.weights.to(real).to(like.device)
            att = None if self.attention is None else self.attention.harmonics.prepare(pts)
            self._tables[key] = (pts, w, self.basis.prepare(pts), att)
        return self._tables[key]

    def map_points(
        self, x: torch.Tensor, attention: AttentionDrift | None, z: torch.Tensor, source: RandomSource
    ) -> torch.Tensor:
        """One step of the particle scheme for points x ``(..., n, d)`` with the Brownian coefficients z and
        the given attention drift (None: off): ``LimitSDE`` and the scheme of ``make_solver``, unchanged."""
        sde = LimitSDE(ReplayedNoise(self.field, (z,)), attention)
        scheme = self.scheme_class(sde, 1, self.dt)
        scheme.step_checked = True  # checked once for the run (``saturated``)
        return scheme.step(x, source)

    def step(self, state: Any, source: RandomSource) -> Any:
        """One step of the density (``(..., P)`` coefficients) or of ``(coefficients, cloud, ...)``, every
        cloud ``(..., N_i, d)`` driven by the same B^k (its own attention through ``particle_attention``)."""
        coupled = isinstance(state, tuple)
        c = state[0] if coupled else state
        pts, w, tab, tab_att = self.grid_on(c)  # the grid (J, d) broadcasts against the batch of c
        masses = w * self.basis.synthesize(c, pts, tab)  # (..., J): w_j rho(y_j)
        z = source.randn(self.field.normal_shape(pts), pts.dtype)  # (..., R, components)
        drift = None
        if self.attention is not None:
            drift = MeasureAttention(self.attention, self.attention.moments(pts, masses, tab_att), tab_att)
        new = self.basis.moments(self.map_points(pts, drift, z, source), masses).to(c.dtype)  # (..., P)
        if not coupled:
            return new
        return (new, *(self.map_points(x, self.particle_attention, z, source) for x in state[1:]))

    def run(
        self,
        c0: torch.Tensor,
        seed: Seeds = 0,
        saveat: SaveAt | int | None = None,
        *,
        particles: tuple[torch.Tensor, ...] = (),
        streams: RandomSource | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> Trajectory:
        """Integrate from the coefficients c0 ``(..., P)`` (complex; e.g. ``initial.von_mises_fisher``), with
        ``particles`` (clouds ``(..., N_i, d)``) on the same noise path: a tuple state (c, *clouds). Draws from
        ``streams`` (default ``Streams(seed)`` over the batch shape of c0, on its device)."""
        if not isinstance(c0, torch.Tensor) or not c0.is_complex() or c0.shape[-1:] != (self.basis.size,):
            raise ConfigError("c0", getattr(c0, "shape", type(c0).__name__), f"complex (..., {self.basis.size})")
        if not bool(torch.isfinite(torch.view_as_real(c0)).all()):
            raise ConfigError("c0", "non-finite entries", "the initial coefficients must be finite (no NaN or inf)")
        budget.require_mass("c0", float(self.basis.mass(c0).min()) if c0.numel() else 0.0)
        batch = tuple(c0.shape[:-1])
        for x in particles:
            if tuple(x.shape[:-2]) != batch or x.shape[-1] != self.dim:
                raise ConfigError("particles", tuple(x.shape), f"(*{batch}, N, {self.dim}) like the density's batch")
        saved = len(as_saveat(saveat).keep(0, self.steps, self.steps, self.dt)) + 1
        self.check_memory(self.basis.degree, math.prod(batch), tuple(x.shape[-2] for x in particles), saved)
        source = Streams(seed, batch, c0.device) if streams is None else streams
        state = (c0, *particles) if particles else c0
        return integrate(self.step, state, self.dt, self.steps, source=source, saveat=saveat, progress=progress)
