"""The limit SDE of THEORY section 3 and its solvers.

    dX_i = [ P_{X_i} Attn(mu_t^N, X_i) - (d-1)/2 k(X_i, X_i) X_i ] dt + P_{X_i} dW(t, X_i)

with W the common Brownian field (a ``LimitField``: ``GaussianField``, k = kappa(1); ``RandomFeatureField``,
its own variance; ``ReplayedNoise`` of either; None: ``NO_FIELD``, the noise-free limit ODE) and the attention
drift always taken from ``attention.drift(x)``, so any Attention plugs in. The radial term is the Ito
correction that keeps |X| = 1 in mean.

``LimitSDE`` exposes the pieces (attention drift, Ito correction, field increment and variance); a scheme
combines them in ``step`` and declares its strong and weak order; the ``Solver`` base owns the time loop,
saving and observing (torchsde style). Schemes: ``ProjectedEulerMaruyama`` (step, then LN) and
``EulerMaruyama`` (plain).

``LimitSDE(..., norm=...)`` (a scheme or its ``registry.NORMS`` name) is the limit of another normalization
scheme (BEYOND section 6): Pre-, Mix-,
Peri-LN, nGPT and sqrt-scaling (``norms.limit_sde.SchemeSDE``: the direction's drift and noise at the scheme's
speed, their Ito correction, and the radius for the schemes that have one; the state is then the pair
(theta, r)). Both solvers step every scheme: the same Euler-Maruyama step, the projected one putting theta back
on the sphere. Post-LN (the default) is the equation above, step for step as before.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import torch

from ..attention._softmax import NoAttention
from ..contracts import AttentionDrift, LimitField, NormScheme, RandomSource, require
from ..core._errors import ConfigError
from ..core._sphere import project, tangent
from ..core._validate import positive_float
from ..registry import NORMS, SOLVERS, Params
from ._loop import TokenDynamics
from ._norms.limit_sde import SchemeSDE
from ._norms.schemes import PostLN
from ._step_guard import RK4_ATTENTION_LIMIT, check_scheme, check_step


class NoField:
    """The zero field: the noise-free limit ODE dX = P_X Attn(X) dt (``LimitSDE(None, attention)``), stepped by
    every solver with no increment and no Ito correction (k = 0)."""

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource | None = None) -> torch.Tensor:
        return torch.zeros_like(y)  # (..., N, d)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        return torch.zeros((), dtype=y.dtype, device=y.device)

    def increment_and_variance(self, y: torch.Tensor, dt: float, source: RandomSource | None = None) -> Any:
        return self.increment(y, dt), self.variance(y)

    def kernel(self, y: torch.Tensor) -> torch.Tensor:
        """K = 0 ``(..., N, N)``: a scheme that normalizes the field's output has no field either."""
        return y.new_zeros(y.shape[:-1] + y.shape[-2:-1])


NO_FIELD = NoField()
LIMIT_LAYERS = 1 << 30  # a scheme named in the limit reads dt = horizon / layers -> 0 (nGPT's step check)


def norm_scheme(norm: NormScheme | str | None, horizon: float = 1.0) -> NormScheme:
    """A scheme, or one named in ``registry.NORMS`` (``"pre"``, ``"mix:0.5"``, ``"ngpt:2"``, ...) built as a
    config would build it at this ``horizon`` (Mix-LN's switch time), in the limit dt -> 0; None: Post-LN.
    Raises ConfigError naming ``norm`` for an unknown name or parameter."""
    if norm is None:
        return PostLN()
    if isinstance(norm, str):
        cfg = SimpleNamespace(norm=norm, horizon=positive_float("horizon", horizon), layers=LIMIT_LAYERS)
        return NORMS.build(norm.partition(":")[0], Params(cfg))
    require(norm, NormScheme, "norm")
    return norm


class LimitSDE:
    """Drift and diffusion of THEORY section 3 for a ``LimitField`` (None: the noise-free limit ODE,
    ``NO_FIELD``) and an attention (None: off); ``norm``: a normalization scheme or its ``registry.NORMS`` name
    (None: Post-LN; a name is built at ``horizon``, see ``norm_scheme``), whose limit (``norm_sde``, a
    ``SchemeSDE``; None for Post-LN) the solvers step (BEYOND section 6). Raises ConfigError for parts that lack
    their contract's methods and for a scheme without a derived limit (naming ``norm``)."""

    def __init__(
        self,
        field: LimitField | None,
        attention: AttentionDrift | None = None,
        norm: NormScheme | str | None = None,
        *,
        horizon: float = 1.0,
    ):
        if field is not None:
            require(field, LimitField, "field")
        if attention is not None:
            require(attention, AttentionDrift, "attention")
        self.field: LimitField = field if field is not None else NO_FIELD
        self.attention = attention if attention is not None else NoAttention()
        self.norm = norm_scheme(norm, horizon)
        post = isinstance(self.norm, PostLN)
        self.norm_sde = (
            None if post else SchemeSDE(self.norm, self.field, None if attention is None else self.attention)
        )
        if self.norm_sde is not None and self.norm_sde.normalized is not None and field is None:
            cast(
                Any, self.norm_sde
            ).normalized = NO_FIELD  # LN of no field: no increment and k = 0, not the 1/d of a field

    @staticmethod
    def ito_correction(x: torch.Tensor, variance: torch.Tensor | float) -> torch.Tensor:
        """-(d-1)/2 k(x, x) x, the radial Ito term that keeps |X| = 1 in mean (THEORY section 3)."""
        return -(x.shape[-1] - 1) / 2 * variance * x  # (..., N, d)

    def attention_drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor | None:
        """Attn(x) before the tangent projection, or None when attention is off; a block that draws random numbers
        (random-batch attention) draws them from the run's ``source``. ``(..., N, d) -> (..., N, d)``."""
        return None if isinstance(self.attention, NoAttention) else self.attention.drift(x, source)

    def post_only(self, what: str) -> None:
        """Raise ConfigError naming ``norm`` unless the SDE is Post-LN's (``what``: the Post-LN-only piece)."""
        if self.norm_sde is not None:
            raise ConfigError("norm", repr(self.norm), f"{what} is the Post-LN limit's; run the scheme's solvers")

    def drift(self, x: torch.Tensor) -> torch.Tensor:
        """b(x) = P_x Attn(x) - (d-1)/2 k(x, x) x (Post-LN). ``(..., N, d) -> (..., N, d)``."""
        self.post_only("drift(x)")
        ito = self.ito_correction(x, self.field.variance(x))  # (..., N, d)
        attn = self.attention_drift(x)
        return ito if attn is None else tangent(x, attn) + ito

    def diffusion(self, x: torch.Tensor, dt: float, streams: RandomSource) -> torch.Tensor:
        """P_x dW(t, x) over one step (Post-LN). ``(..., N, d) -> (..., N, d)``."""
        self.post_only("diffusion(x)")
        return tangent(x, self.field.increment(x, dt, streams))


class Solver(TokenDynamics):
    """Base solver: ``steps`` equal steps on [0, horizon]; a scheme defines ``step`` and declares its
    ``strong_order`` and ``weak_order``; ``run(x0, seed, saveat)`` integrates (``loop.TokenDynamics.run``, the
    discrete model's verb). The step k (1-based) starts at t = (k - 1) dt, read from ``clock`` (steps done; ``run``
    sets it to its ``start``): the schemes of BEYOND section 6 with a clock (Mix-LN, sqrt-scaling) need it.
    Raises ConfigError for steps < 1 or a horizon that is not finite > 0."""

    strong_order: float
    weak_order: float
    projected = False  # theta back on the sphere after each step

    def __init__(self, sde: LimitSDE, steps: int, horizon: float):
        super().__init__(steps, horizon)
        self.sde = sde
        self.clock = 0
        self.checked: set[type] = set()  # the phases whose step-size rule (``_step_guard``) was checked
        self.step_checked = False  # True: the caller checks the rule for the run (the density solver's particles)

    def begin(self, start: int) -> None:
        self.clock = start

    def start_state(self, x0: torch.Tensor) -> Any:
        """LN(x0), or the scheme's start (``SchemeSDE.start``: (LN(x0), |x0|) for a scheme with a radius)."""
        return super().start_state(x0) if self.sde.norm_sde is None else self.sde.norm_sde.start(x0)

    @property
    def steps(self) -> int:
        return self.total

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(steps={self.steps}, horizon={self.horizon}, "
            f"strong_order={self.strong_order}, weak_order={self.weak_order})"
        )


class EulerMaruyama(Solver):
    """X + b(X) dt + P_X dW(X) (THEORY section 3): plain Euler-Maruyama, strong order 1/2, weak order 1
    (|X| = 1 only in mean). Stable range: (d-1) f^2 k dt <= 1 and f dt beta |s| <= 1 (``_step_guard``: the Ito
    factor 1 - (d-1) k dt / 2 and explicit Euler's dt L < 2; f the scheme's speed, 1 for Post-LN); outside it
    the first step (and a Mix-LN run's first step after its switch) warns (RuntimeWarning).

    The attention drift and the noise share one tangent projection, P_X (dW + dt Attn(X)), and the field gives
    its increment and variance from one evaluation (``increment_and_variance``)."""

    strong_order = 0.5
    weak_order = 1.0

    def step(self, x: Any, source: RandomSource) -> Any:
        """One step. ``(..., N, d) -> (..., N, d)``; a scheme with a radius: (theta, r) -> (theta, r)."""
        dt, sde = self.dt, self.sde
        t, self.clock = self.clock * dt, self.clock + 1
        if sde.norm_sde is not None:
            phase = type(sde.norm_sde.norm.phase(t))  # Mix-LN: checked again at its switch to Pre-LN
            if not self.step_checked and phase not in self.checked:
                self.checked.add(phase)
                check_scheme(sde.norm_sde, x, t, dt)
            return sde.norm_sde.step(x, t, dt, source, self.projected)
        dw, var = sde.field.increment_and_variance(x, dt, source)  # (..., N, d), (..., N, 1) or ()
        if not self.step_checked and not self.checked:
            self.checked.add(PostLN)
            check_step(x.shape[-1], var, dt, sde.attention)
        attn = sde.attention_drift(x, source)  # (..., N, d) or None
        if attn is not None:
            dw = dw + dt * attn
        out = x + (tangent(x, dw) + dt * sde.ito_correction(x, var))
        return project(out) if self.projected else out


class ProjectedEulerMaruyama(EulerMaruyama):
    """LN(X + b(X) dt + P_X dW(X)): the Euler-Maruyama step, then renormalisation (stays on the sphere);
    strong order 1/2, weak order 1."""

    projected = True


class NoiseFreeSolver(Solver):
    """A solver of the noise-free Post-LN limit ODE only (THEORY section 3 without noise): raises ConfigError
    (naming ``scheme``) for an SDE with a noise field or another normalization scheme."""

    name = ""

    def __init__(self, sde: LimitSDE, steps: int, horizon: float):
        super().__init__(sde, steps, horizon)
        if sde.field is not NO_FIELD or sde.norm_sde is not None:
            raise ConfigError("scheme", self.name, "the noise-free Post-LN limit only (LimitSDE(None, attention))")


class GeodesicEuler(NoiseFreeSolver):
    """The noise-free limit ODE stepped along great circles: X <- cos(|v| dt) X + sin(|v| dt) v / |v|,
    v = P_X Attn(X) (the exponential map of the sphere; THEORY section 3 without noise). On the circle this is
    Euler in the angle, theta <- theta + dt theta' (the step of the peers that integrate angles); the projected
    step LN(X + dt v) moves the angle by arctan(|v| dt) instead, slower by O(dt^2 |v|^2). First order. Raises
    ConfigError for an SDE with a noise field or another normalization scheme (no geodesic step is defined)."""

    strong_order = weak_order = 1.0
    name = "geodesic"

    def step(self, x: Any, source: RandomSource) -> Any:
        """One step ``(..., N, d) -> (..., N, d)``."""
        self.clock += 1
        if not self.step_checked and not self.checked:
            self.checked.add(PostLN)
            check_step(x.shape[-1], 0.0, self.dt, self.sde.attention)
        attn = self.sde.attention_drift(x, source)
        if attn is None:
            return x
        v = tangent(x, attn)  # (..., N, d)
        speed = torch.linalg.vector_norm(v, dim=-1, keepdim=True)  # (..., N, 1)
        angle = speed * self.dt
        direction = v / speed.clamp_min(torch.finfo(v.dtype).tiny)
        return project(torch.cos(angle) * x + torch.sin(angle) * direction)


class RungeKutta4(NoiseFreeSolver):
    """The noise-free limit ODE X' = P_X Attn(X) by the classical fourth-order Runge-Kutta step in R^d, then back
    to the sphere (THEORY section 3 without noise). The ODE keeps |X| = 1 (d|X|^2/dt = 2 <X, Attn> (1 - |X|^2)),
    so the stages need no projection and the step is fourth order: the peers that step their angles by RK4 agree
    to O(dt^4)."""

    strong_order = weak_order = 4.0
    name = "rk4"

    def step(self, x: Any, source: RandomSource) -> Any:
        """One step ``(..., N, d) -> (..., N, d)`` (four evaluations of the attention)."""
        self.clock += 1
        if isinstance(self.sde.attention, NoAttention):
            return x
        dt = self.dt
        if not self.step_checked and not self.checked:
            self.checked.add(PostLN)
            check_step(x.shape[-1], 0.0, dt, self.sde.attention, attention_limit=RK4_ATTENTION_LIMIT)

        def velocity(y: torch.Tensor) -> torch.Tensor:
            return tangent(y, self.sde.attention.drift(y, source))  # (I - y y^T) Attn(y)

        k1 = velocity(x)
        k2 = velocity(x + dt / 2 * k1)
        k3 = velocity(x + dt / 2 * k2)
        k4 = velocity(x + dt * k3)
        return project(x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))


def make_solver(sde: LimitSDE, steps: int, horizon: float, scheme: str = "projected") -> Solver:
    """The solver named ``scheme`` in ``registry.SOLVERS``. Raises ConfigError for an unknown name, bad steps or
    horizon."""
    return SOLVERS.check(SOLVERS[scheme])(sde, steps, horizon)
