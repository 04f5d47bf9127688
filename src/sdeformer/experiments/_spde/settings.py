"""The settings of one density run (``sdeformer spde``; THEORY section 4, docs/spde.md), declared once with their
docs (``params.setting``: the command's options) and torch-free, so that ``sdeformer spde --help`` imports
no torch; the checks and the solver import the library when they run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...core._errors import ConfigError
from ...params import setting

if TYPE_CHECKING:
    from ...spde._solver import DensitySolver


@dataclass(frozen=True)
class SpdeSettings:
    """One density run (``sdeformer spde``: one option per ``setting``). ``noise_modes`` None: max(2, modes // 8).
    ConfigError for a bad value."""

    dim: int = setting(2, "2 (the circle, Fourier modes) or 3 (the 2-sphere, spherical harmonics)")
    activation: str = setting("relu", "MLP activation of the noise kernel kappa")
    bias_std: float = setting(0.5, "sU = sW = this")
    noise_scale: float = setting(0.5, "the noise field times this (0: no noise)")
    noise_modes: int | None = setting(None, "degree M of the truncated noise [max(2, modes / 8)]")
    attention: str = setting("softmax", "softmax, usa or off")
    beta: float = setting(2.0, "Q^T K = beta I")
    attention_scale: float = setting(1.0, "s in V = s I")
    modes: int = setting(32, "resolution: the density's degree L")
    steps: int = setting(200, "time steps")
    horizon: float = setting(2.0, "final time T")
    concentration: float = setting(1.0, "the start: von Mises-Fisher about e_1 (0: uniform)")
    particles: int = setting(0, "a coupled cloud of N tokens on the same noise path (0: none)")
    seed: int = setting(0, "the noise path (the cloud draws from seed + 1)")
    save_every: int = setting(4, "save every k-th step")
    tol: float = None  # type: ignore[assignment]  # None: spde._diagnostics.TAIL_TOL, set at construction

    def __post_init__(self) -> None:
        from ...core._validate import nonneg_float, positive_float, positive_int
        from ...spde._budget import beta_value
        from ...spde._diagnostics import TAIL_TOL
        from ...spde._solver import ATTENTIONS

        if self.tol is None:  # the calibrated tail share (docs/spde.md section 6), without torch at import
            object.__setattr__(self, "tol", TAIL_TOL)
        if self.dim not in (2, 3):
            raise ConfigError("dim", self.dim, "2 (the circle) or 3 (the 2-sphere)")
        if self.attention not in ATTENTIONS:
            raise ConfigError("attention", self.attention, f"one of {list(ATTENTIONS)}")
        for name in ("modes", "steps", "save_every"):
            positive_int(name, getattr(self, name))
        if self.particles:
            positive_int("particles", self.particles)
        positive_float("horizon", self.horizon)
        for name in ("bias_std", "noise_scale", "concentration"):
            nonneg_float(name, getattr(self, name))
        positive_float("tol", self.tol)
        beta_value(self.beta)  # E_beta is reported even with attention off

    @property
    def resolved_noise_modes(self) -> int:
        return self.noise_modes if self.noise_modes is not None else max(2, self.modes // 8)

    def check_memory(self, max_memory: float | str | None = None) -> float:
        """The run's memory estimate (``spde._budget``: grid tables, step, cloud, saved states) in bytes;
        ConfigError above ``max_memory`` (bytes or "8G"; None: the memory available now)."""
        from ...core._validate import memory_size
        from ...spde import _budget as budget

        limit = None if max_memory is None else memory_size("max_memory", max_memory)
        saved = budget.saved_count(self.steps, self.save_every)
        parts = budget.density_bytes(
            self.dim, self.modes, self.resolved_noise_modes, saved=saved, steps=self.steps, particles=self.particles
        )
        return budget.check_memory(parts, limit)

    def solver(self, max_memory: float | str | None = None) -> DensitySolver:
        """The density solver of these settings, after ``check_memory`` (nothing is built above the limit)."""
        from ...spde._fields import mlp_noise
        from ...spde._solver import DensitySolver

        self.check_memory(max_memory)
        field = mlp_noise(
            self.dim, self.activation, self.bias_std, self.bias_std, self.resolved_noise_modes, self.noise_scale
        )
        kw: dict[str, Any] = dict(attention=self.attention, beta=self.beta, scale=self.attention_scale)
        return DensitySolver(field, self.modes, self.steps, self.horizon, **kw, max_memory=max_memory)
