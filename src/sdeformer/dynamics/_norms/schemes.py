"""Normalization schemes: where one layer normalizes around its two sub-steps (BEYOND section 6).

Each block of a layer (the attention drift, then the common-noise field) reads ``read(x)`` and its update
``out`` (``dt A`` for attention, the field's increment ``xi = sqrt(dt) G`` for the noise) enters the residual
stream as ``sub(x, out, step, t)``, ``step`` being the update's size (``dt`` or ``sqrt(dt)``) and ``t`` the time
at the start of the layer. The common-noise block sits where the scheme's MLP block sits, and is normalized
exactly as the attention block is. ``LN(v) = v / |v|`` (THEORY section 1):

    post  x <- LN(x + out)                      tokens on the sphere; THEORY section 1 (the default)
    pre   x <- x + out, blocks read LN(x)       the residual stream keeps a radius r = |x|
    mix   post while t < switch, then pre
    peri  x <- x + step LN(out), blocks read LN(x)
    ngpt  x <- LN(x + c (LN(out) - x)),  c = alpha step / (1 + alpha step)
    sqrt  x <- LN(x + out / sqrt(1 + t))

In a config (``ModelConfig.norm``) a scheme is named ``post``, ``pre``, ``mix[:F]`` (F in (0, 1): the fraction of
the depth that is Post-LN, default ``MIX_FRACTION``), ``peri``, ``ngpt[:ALPHA]`` (default 1) or ``sqrt``.
``on_sphere``: the state stays on the sphere (a run starts from LN(x0)); otherwise it is the residual stream,
``(..., N, d)``, whose norm is the radius (a run starts from x0 as given). Tensors are ``(..., N, d)``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, TypeAlias

import torch
from torch import Tensor

from ...contracts import AttentionDrift, NoiseField, RandomSource
from ...core._errors import ConfigError
from ...core._sphere import project

Drift: TypeAlias = AttentionDrift | None  # the attention block, or None when off
Field: TypeAlias = NoiseField | None  # the noise block, or None when off
MIX_FRACTION = 0.25  # Mix-LN: the first quarter of the layers is Post-LN (project choice, BEYOND 6)


def unit(v: Tensor) -> Tensor:
    """LN of a block's output, ``(..., d)``; an output that is exactly zero (attention with V = 0) stays zero."""
    return v / torch.linalg.vector_norm(v, dim=-1, keepdim=True).clamp_min(torch.finfo(v.dtype).tiny)


def parameter(value: str, default: float, high: float, allowed: str) -> float:
    """The number after ``NAME:`` in a config's ``norm`` (``default`` without one), in (0, high); else
    ConfigError with ``allowed``."""
    text = value.partition(":")[2]
    try:
        number = float(text) if text else default
    except ValueError:
        number = math.nan
    if not 0 < number < high or math.isinf(number):
        raise ConfigError("norm", value, allowed)
    return number


class Normalization(ABC):
    """The common part of every scheme: a layer is two sub-steps, attention then noise."""

    name = ""
    on_sphere = True

    def phase(self, t: float) -> Normalization:
        """The scheme in force at time ``t`` (itself, but for Mix-LN)."""
        return self

    def read(self, x: torch.Tensor) -> torch.Tensor:
        """What a block reads: LN(x). ``(..., N, d)``."""
        return project(x)

    @abstractmethod
    def sub(self, x: torch.Tensor, out: torch.Tensor, step: float, t: float) -> torch.Tensor:
        """The residual stream after one block's update ``out`` (of size ``step``). ``(..., N, d)``."""

    def layer(self, x: Tensor, t: float, dt: float, attention: Drift, noise: Field, source: RandomSource) -> Tensor:
        """One layer at time ``t`` with step ``dt``. ``(..., N, d) -> (..., N, d)``."""
        scheme = self.phase(t)
        if attention is not None:
            x = scheme.sub(x, dt * attention.drift(scheme.read(x), source), dt, t)
        if noise is not None:
            x = scheme.sub(x, noise.increment(scheme.read(x), dt, source), math.sqrt(dt), t)
        return x

    @classmethod
    def from_config(cls, p: Any) -> Normalization:
        """The scheme of a config's ``norm`` (``registry.Params``). Raises ConfigError for a parameter."""
        if ":" in p.norm:
            raise ConfigError("norm", p.norm, f"{cls.name} takes no parameter")
        return cls()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class PostLN(Normalization):
    """Post-LN, the paper's layer (THEORY section 1): ``LN(x + out)``; the blocks read x itself (on the sphere),
    so the numbers are those of the model before the schemes existed, bit for bit."""

    name = "post"

    def read(self, x: torch.Tensor) -> torch.Tensor:
        return x

    def sub(self, x: torch.Tensor, out: torch.Tensor, step: float, t: float) -> torch.Tensor:
        return project(x + out)

    def layer(self, x: Tensor, t: float, dt: float, attention: Drift, noise: Field, source: RandomSource) -> Tensor:
        """``Normalization.layer`` with Post-LN's ``phase``, ``read`` and ``sub`` written out: the same operations,
        four Python calls fewer a layer (5 % of a small run's layer, docs/benchmarks.md); a subclass, which may
        override them, takes the general path."""
        if type(self) is not PostLN:
            return super().layer(x, t, dt, attention, noise, source)
        if attention is not None:
            x = project(x + dt * attention.drift(x, source))
        if noise is not None:
            x = project(x + noise.increment(x, dt, source))
        return x


class PreLN(Normalization):
    """Pre-LN (GPT, LLaMA): ``x + out`` with the blocks reading LN(x); the radius |x| grows and the direction's
    effective step is dt / r."""

    name = "pre"
    on_sphere = False

    def sub(self, x: torch.Tensor, out: torch.Tensor, step: float, t: float) -> torch.Tensor:
        return x + out


class PeriLN(Normalization):
    """Peri-LN (Gemma 3): ``x + step LN(out)``, each block's input and output normalized; the update has the
    fixed size ``step`` (dt for attention, sqrt(dt) for the noise)."""

    name = "peri"
    on_sphere = False

    def sub(self, x: torch.Tensor, out: torch.Tensor, step: float, t: float) -> torch.Tensor:
        return x + step * unit(out)


class MixLN(Normalization):
    """Mix-LN: Post-LN while t < ``switch``, Pre-LN from then on (the radius is 1 at the switch). Raises
    ConfigError for a negative or non-finite switch time."""

    name = "mix"
    on_sphere = False

    def __init__(self, switch: float):
        if not isinstance(switch, (int, float)) or not math.isfinite(switch) or switch < 0:
            raise ConfigError("norm switch", switch, "the Mix-LN switch time must be finite and >= 0")
        self.switch = float(switch)
        self._post, self._pre = PostLN(), PreLN()

    @classmethod
    def from_config(cls, p: Any) -> MixLN:
        return cls(
            parameter(p.norm, MIX_FRACTION, 1.0, "mix:F, F in (0, 1) the Post-LN fraction of the depth") * p.horizon
        )

    def phase(self, t: float) -> Normalization:
        return self._post if t < self.switch * (1 - 1e-12) else self._pre

    def sub(self, x: torch.Tensor, out: torch.Tensor, step: float, t: float) -> torch.Tensor:
        return self.phase(t).sub(x, out, step, t)

    def __repr__(self) -> str:
        return f"MixLN(switch={self.switch:g})"


class NGPT(Normalization):
    """nGPT: ``LN(x + c (LN(out) - x))``, tokens on the sphere, each block's output normalized and
    interpolated towards with rate ``alpha`` (BEYOND section 6). The interpolation ``(1 - c) x + c u`` moves the
    direction by ``c / (1 - c)`` times the tangent part of u, so ``c = a / (1 + a)``, ``a = alpha step``, moves it
    by exactly ``a``: with ``c = a`` the noise block (step sqrt(dt)) would move at speed alpha / (1 - alpha
    sqrt(dt)), an O(sqrt(dt)) error, and the scheme would lose weak order 1. Raises ConfigError for alpha <= 0,
    and at a layer whose ``alpha step`` is not below 1."""

    name = "ngpt"

    def __init__(self, alpha: float = 1.0):
        if not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha <= 0:
            raise ConfigError("norm alpha", alpha, "the nGPT rate alpha must be finite and > 0")
        self.alpha = float(alpha)

    @classmethod
    def from_config(cls, p: Any) -> NGPT:
        """nGPT of a config; its steps alpha dt and alpha sqrt(dt) must be < 1 (else ConfigError)."""
        alpha, dt = parameter(p.norm, 1.0, math.inf, "ngpt:ALPHA, ALPHA > 0"), p.horizon / p.layers
        if alpha * max(dt, math.sqrt(dt)) >= 1:
            raise ConfigError("norm", p.norm, "nGPT needs alpha * max(dt, sqrt(dt)) < 1: more layers")
        return cls(alpha)

    def read(self, x: torch.Tensor) -> torch.Tensor:
        return x

    def sub(self, x: torch.Tensor, out: torch.Tensor, step: float, t: float) -> torch.Tensor:
        rate = self.alpha * step
        if rate >= 1:
            raise ConfigError("norm", f"ngpt:{self.alpha:g}", f"alpha * step = {rate:g} must be < 1 (more layers)")
        return project(x + rate / (1 + rate) * (unit(out) - x))

    def __repr__(self) -> str:
        return f"NGPT(alpha={self.alpha:g})"


class SqrtScaling(Normalization):
    """sqrt-scaling (LayerNorm scaling against the curse of depth): ``LN(x + out / sqrt(1 + t))``, tokens on the
    sphere, every block's output damped by the depth."""

    name = "sqrt"

    def read(self, x: torch.Tensor) -> torch.Tensor:
        return x

    def sub(self, x: torch.Tensor, out: torch.Tensor, step: float, t: float) -> torch.Tensor:
        return project(x + out / math.sqrt(1.0 + t))
