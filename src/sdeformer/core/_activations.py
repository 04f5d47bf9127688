"""Activation registry: name -> (act, act'), plus any user callable (THEORY section 2 needs both).

``get_activation("relu")``, ``get_activation("leaky_relu", slope=0.1)`` or ``get_activation(fn)`` for a
user callable ``fn: Tensor -> Tensor`` (its derivative comes from autograd). Names may carry the parameter
after a colon: ``"leaky_relu:0.1"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ._errors import ConfigError

TensorFn = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Activation:
    """An activation with its derivative. ``odd`` is True when act(-z) = -act(z). ``leak`` is set for the
    piecewise-linear family act(z) = max(z, leak z) (relu: 0), which has a closed-form kernel."""

    name: str
    fn: TensorFn
    deriv: TensorFn
    odd: bool
    leak: float | None = None
    inplace: TensorFn | None = None  # act computed in the input's memory (the built-ins that torch has in place)

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        return self.fn(z)

    def apply_(self, z: torch.Tensor) -> torch.Tensor:
        """act(z), overwriting ``z`` where an in-place kernel exists (same values bit for bit; no new
        ``(..., N, m)`` buffer per layer); for a caller that no longer needs ``z``."""
        return self.inplace(z) if self.inplace is not None else self.fn(z)


def _sigmoid_deriv(z: torch.Tensor) -> torch.Tensor:
    s = torch.sigmoid(z)
    return s * (1 - s)


def _silu_deriv(z: torch.Tensor) -> torch.Tensor:
    s = torch.sigmoid(z)
    return s * (1 + z * (1 - s))


def _gelu_deriv(z: torch.Tensor) -> torch.Tensor:
    cdf = 0.5 * (1 + torch.erf(z / math.sqrt(2)))
    pdf = torch.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    return cdf + z * pdf


def _leaky_relu(slope: float) -> tuple[TensorFn, TensorFn]:
    return (
        lambda z: torch.where(z > 0, z, slope * z),
        lambda z: torch.where(z > 0, torch.ones_like(z), torch.full_like(z, slope)),
    )


_BUILTIN: dict[str, tuple[TensorFn, TensorFn, bool]] = {
    "relu": (torch.relu, lambda z: (z > 0).to(z.dtype), False),
    "gelu": (lambda z: torch.nn.functional.gelu(z), _gelu_deriv, False),
    "silu": (torch.nn.functional.silu, _silu_deriv, False),
    "sigmoid": (torch.sigmoid, _sigmoid_deriv, False),
    "tanh": (torch.tanh, lambda z: 1 - torch.tanh(z) ** 2, True),
}

_INPLACE: dict[str, TensorFn] = {
    "relu": torch.relu_,
    "silu": lambda z: torch.nn.functional.silu(z, inplace=True),
    "sigmoid": torch.sigmoid_,
    "tanh": torch.tanh_,
}

NAMES = tuple(sorted([*_BUILTIN, "leaky_relu"]))


def _autograd_deriv(fn: TensorFn) -> TensorFn:
    def deriv(z: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            zz = z.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(fn(zz).sum(), zz)
        return grad

    return deriv


def is_odd(fn: TensorFn) -> bool:
    """Numerical oddness check on a grid of [-6, 6] (float64, tolerance 1e-10 relative)."""
    z = torch.linspace(-6, 6, 1201, dtype=torch.float64)
    a, b = fn(z), fn(-z)
    return bool(torch.allclose(a, -b, atol=1e-10, rtol=1e-10))


SLOPE_MAX = 1e6  # |leaky_relu slope| above this overflows kappa's (1 - a)^2 terms long before it means anything


def _slope(value: object) -> float:
    """A leaky_relu slope: a finite number with |slope| <= 1e6 (text such as '0.1' accepted)."""
    allowed = f"leaky_relu slope must be a finite number with |slope| <= {SLOPE_MAX:g}"
    try:
        slope = float(value)  # pyright: ignore[reportArgumentType]
    except (TypeError, ValueError, OverflowError):
        raise ConfigError("activation slope", value, allowed) from None
    if isinstance(value, bool) or not math.isfinite(slope) or abs(slope) > SLOPE_MAX:
        raise ConfigError("activation slope", value, allowed)
    return slope


def get_activation(act: str | Activation | TensorFn, **params: float) -> Activation:
    """Resolve a name, an Activation or a user callable into an Activation.

    Raises ConfigError for an unknown name or a parameter the activation does not take.
    """
    if isinstance(act, Activation):
        return act
    if callable(act):
        name = getattr(act, "__name__", "custom")
        return Activation(name, act, _autograd_deriv(act), is_odd(act))
    if not isinstance(act, str):
        raise ConfigError("activation", act, f"a name in {list(NAMES)} or a callable")
    name, colon, arg = act.strip().lower().partition(":")
    if name == "leaky_relu":
        slope = _slope(arg) if colon else _slope(params.pop("slope", 0.01))  # 'leaky_relu:' names no slope
        if params:
            raise ConfigError("activation parameter", sorted(params), "leaky_relu takes only 'slope'")
        fn, deriv = _leaky_relu(slope)
        return Activation(f"leaky_relu:{slope:g}", fn, deriv, slope == 1.0, leak=slope)
    if name not in _BUILTIN or arg or params:
        if name in _BUILTIN:
            raise ConfigError("activation parameter", arg or sorted(params), f"{name} takes no parameter")
        raise ConfigError("activation", act, f"one of {list(NAMES)} (leaky_relu:SLOPE) or a callable")
    fn, deriv, odd = _BUILTIN[name]
    return Activation(name, fn, deriv, odd, leak=0.0 if name == "relu" else None, inplace=_INPLACE.get(name))
