"""The limit SDE of every normalization scheme but Post-LN, as the solvers of ``dynamics._sde`` step it (BEYOND 6).

Every scheme's direction follows the derived limit of BEYOND section 6 (``limits``, the table there),

    d theta_i = f_i P_i (B_i dt + dM_i) - (d-1)/2 f_i^2 k_i theta_i dt,

with (B, M) = (A, W), the attention drift and the common field, or (Ahat, What) for the schemes that normalize
a block's output (Peri-LN, nGPT): Ahat = A / |A| and What the Gaussian field of the normalized covariance Chat
(``NormalizedField``); k_i = tr(P_i S_ii) / (d - 1) the variance of M (the field's ``variance``; 1 / d for What),
and the speed f = 1 / r_i (pre, peri), alpha (ngpt) or 1 / sqrt(1 + t) (sqrt). The radius of Pre- and Peri-LN
follows

    dr_i = (<theta_i, B_i> + (d-1) k_i / (2 r_i)) dt + <theta_i, dM_i>,

and Mix-LN is Post-LN (f = 1, r = 1) before its switch and Pre-LN after. One Euler-Maruyama step evaluates the
coefficients at the step's start (time t = k dt); the projected solver then puts theta back on the sphere.
The state is theta ``(..., N, d)`` for a scheme on the sphere (ngpt, sqrt) and the pair (theta ``(..., N, d)``,
r ``(..., N)``) for one with a radius (pre, peri, mix); a run starts from (LN(x0), |x0|), as the discrete model
starts its residual stream from x0.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ...contracts import AttentionDrift, LimitField, NormScheme, RandomSource
from ...core._errors import ConfigError
from ...core._sphere import project, tangent
from ...noise._roots import psd_sqrt
from .limits import normalized_kernel
from .schemes import NGPT, MixLN, Normalization, PeriLN, PostLN, PreLN, SqrtScaling, unit

DERIVED = (PreLN, PeriLN, MixLN, NGPT, SqrtScaling)  # the schemes whose limit SDE is stepped here
NORMALIZED = (PeriLN, NGPT)  # the schemes that normalize a block's output: (Ahat, What)


class NormalizedField:
    """The limit of a normalized block output LN(G) (BEYOND section 6): the Gaussian field with covariance
    Chat_ij = c_d(rho_ij) / d I (``limits.normalized_kernel`` of the field's ``kernel`` K), drawn exactly at
    the tokens as sqrt(dt) R z, R R^T = Chat (symmetric root), with variance tr(P Chat_ii) / (d - 1) = 1 / d.
    Raises ConfigError naming ``norm`` for a field without a kernel (the limit is derived for Gaussian fields)."""

    def __init__(self, field: Any, norm: str):
        if not callable(getattr(field, "kernel", None)):
            raise ConfigError("norm", norm, f"its limit needs a Gaussian field (kernel()), not {type(field).__name__}")
        self.field = field

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource
    ) -> tuple[torch.Tensor, torch.Tensor]:
        d = y.shape[-1]
        chat = normalized_kernel(self.field.kernel(y), d) / d  # (..., N, N)
        z = source.randn(tuple(y.shape[-2:]), y.dtype)  # (..., N, d)
        return math.sqrt(dt) * (psd_sqrt(chat) @ z), torch.tensor(1.0 / d, dtype=y.dtype, device=y.device)


class SchemeSDE:
    """The limit SDE of ``norm`` (one of DERIVED) with a ``LimitField`` and an attention drift (None: off): its
    start state and one Euler-Maruyama step. Raises ConfigError naming ``norm`` for a scheme without a derived
    limit, or for Peri-LN and nGPT with a field that has no kernel."""

    def __init__(self, norm: NormScheme, field: LimitField, attention: AttentionDrift | None):
        if not isinstance(norm, DERIVED):
            raise ConfigError("norm", repr(norm), "no limit SDE is derived for this scheme (BEYOND section 6)")
        self.norm, self.field, self.attention = norm, field, attention
        self.normalized = NormalizedField(field, norm.name) if isinstance(norm, NORMALIZED) else None
        self.radius = not norm.on_sphere

    def start(self, x0: torch.Tensor) -> Any:
        """theta0 = LN(x0), with r0 = |x0| ``(..., N)`` for a scheme with a radius."""
        theta = project(x0)
        return (theta, torch.linalg.vector_norm(x0, dim=-1)) if self.radius else theta

    def speed(self, scheme: Normalization, r: torch.Tensor | None, t: float) -> Any:
        """f of the module docstring: a float, or ``(..., N, 1)`` for the schemes with a radius."""
        if isinstance(scheme, (PreLN, PeriLN)):
            assert r is not None
            return 1.0 / r.unsqueeze(-1)
        if isinstance(scheme, NGPT):
            return scheme.alpha
        return 1.0 / math.sqrt(1.0 + t) if isinstance(scheme, SqrtScaling) else 1.0

    def step(self, state: Any, t: float, dt: float, source: RandomSource, projected: bool) -> Any:
        """One Euler-Maruyama step from time t (then theta back on the sphere if ``projected``)."""
        theta, r = state if self.radius else (state, None)
        scheme, field = self.norm.phase(t), self.normalized or self.field  # Peri-LN, nGPT: (Ahat, What)
        dm, k = field.increment_and_variance(theta, dt, source)  # (..., N, d), (..., N, 1) or ()
        a = None if self.attention is None else self.attention.drift(theta, source)  # (..., N, d)
        move = dm if a is None else dm + dt * (a if self.normalized is None else unit(a))  # B dt + dM
        f, d = self.speed(scheme, r, t), theta.shape[-1]
        new = theta + (tangent(theta, f * move) - (d - 1) / 2 * dt * (f * f * k) * theta)  # (..., N, d)
        new = project(new) if projected else new
        if r is None:
            return new
        if isinstance(scheme, PostLN):  # Mix-LN before its switch: every layer normalizes, r = 1
            return new, torch.ones_like(r)
        k = k.squeeze(-1) if k.ndim else k  # (..., N) or ()
        return new, r + (theta * move).sum(-1) + (d - 1) * dt * k / (2 * r)  # (..., N)
