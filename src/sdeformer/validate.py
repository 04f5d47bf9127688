"""The short input checks used at every boundary (docs/design.md: one place for bad-input errors): each raises
``ConfigError`` naming the parameter, on one line.

Numbers arrive from users as Python ints and floats, numpy scalars, 0-d tensors or strings from a config
file; each check accepts the numeric ones, refuses booleans, strings, NaN and infinities, and returns the
value as a plain ``int`` or ``float``. ``per_run`` applies a check to every entry of a tensor that holds one
value per batch element (a sweep over settings).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

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


def _integer(name: str, value: object, low: int, allowed: str) -> int:
    """``value`` as an int >= ``low`` (an integral float such as 64.0 is accepted)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if int(value) < low:
            raise ConfigError(name, value, allowed)
        return int(value)
    number = _number(name, value, allowed)
    if not math.isfinite(number) or number != int(number) or number < low:
        raise ConfigError(name, value, allowed)
    return int(number)


def positive_int(name: str, value: object) -> int:
    """``value`` as an int >= 1 (an integral float such as 64.0 is accepted)."""
    return _integer(name, value, 1, "must be a positive integer")


def dimension(name: str, value: object) -> int:
    """A token dimension d: an int >= 2."""
    return _integer(name, value, 2, "must be an integer >= 2")


def finite_float(name: str, value: object, what: str = "") -> float:
    """``value`` as a finite float (either sign); ``what`` prefixes the message."""
    allowed = f"{what} must be finite".strip()
    number = _number(name, value, allowed)
    if not math.isfinite(number):
        raise ConfigError(name, value, allowed)
    return number


def positive_float(name: str, value: object, what: str = "") -> float:
    """``value`` as a finite float > 0; ``what`` prefixes the message (e.g. "inverse temperature")."""
    allowed = f"{what} must be finite and > 0".strip()
    number = _number(name, value, allowed)
    if not math.isfinite(number) or number <= 0:
        raise ConfigError(name, value, allowed)
    return number


def nonneg_float(name: str, value: object, what: str = "") -> float:
    """``value`` as a finite float >= 0; ``what`` prefixes the message (e.g. "bias std")."""
    allowed = f"{what} must be finite and >= 0".strip()
    number = _number(name, value, allowed)
    if not math.isfinite(number) or number < 0:
        raise ConfigError(name, value, allowed)
    return number


def per_run(check: Callable[[str, object], float], name: str, value: object) -> float | torch.Tensor:
    """``check(name, value)`` for a scalar; for a tensor of several values (one per run) ``check`` on every
    entry, and the tensor returned unchanged."""
    if isinstance(value, torch.Tensor) and value.numel() != 1:
        for entry in value.detach().reshape(-1).tolist():
            check(name, entry)
        return value
    return check(name, value)


def nonneg_std(name: str, value: object) -> float | torch.Tensor:
    """A standard deviation: a finite float >= 0, or a tensor (one per run) of them, returned unchanged."""
    return per_run(lambda n, v: nonneg_float(n, v, "bias std"), name, value)
