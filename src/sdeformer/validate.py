"""The short input checks used at every boundary: each raises ``ConfigError`` naming the parameter.

Numbers arrive from users as Python ints and floats, numpy scalars, 0-d tensors or strings from a config
file; each check accepts the numeric ones, refuses booleans, strings, NaN and infinities, and returns the
value as a plain ``int`` or ``float``.
"""

from __future__ import annotations

import math
import numbers

import torch

from .errors import ConfigError


def _number(name: str, value: object, allowed: str) -> float:
    """``value`` as a float, or ConfigError(name, value, allowed) if it is not a real number."""
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.dtype.is_complex:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(name, value, allowed)
    try:
        return float(value)
    except (OverflowError, ValueError):
        raise ConfigError(name, value, allowed) from None


def positive_int(name: str, value: object) -> int:
    """``value`` as an int >= 1 (an integral float such as 64.0 is accepted)."""
    allowed = "must be a positive integer"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if int(value) < 1:
            raise ConfigError(name, value, allowed)
        return int(value)
    number = _number(name, value, allowed)
    if not math.isfinite(number) or number != int(number) or number < 1:
        raise ConfigError(name, value, allowed)
    return int(number)


def positive_float(name: str, value: object) -> float:
    """``value`` as a finite float > 0."""
    number = _number(name, value, "must be finite and > 0")
    if not math.isfinite(number) or number <= 0:
        raise ConfigError(name, value, "must be finite and > 0")
    return number


def nonneg_float(name: str, value: object, what: str = "") -> float:
    """``value`` as a finite float >= 0; ``what`` prefixes the message (e.g. "bias std")."""
    allowed = f"{what} must be finite and >= 0".strip()
    number = _number(name, value, allowed)
    if not math.isfinite(number) or number < 0:
        raise ConfigError(name, value, allowed)
    return number


def nonneg_std(name: str, value: object) -> float | torch.Tensor:
    """A standard deviation: a finite float >= 0, or a tensor (one per run) of them, returned unchanged."""
    if isinstance(value, torch.Tensor) and value.numel() != 1:
        v = value.detach().to(torch.float64)
        if not torch.isfinite(v).all() or (v < 0).any():
            raise ConfigError(name, "tensor", "bias std must be finite and >= 0")
        return value
    return nonneg_float(name, value, "bias std")
