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
import os
from collections.abc import Callable
from typing import TypeVar

import torch

from ._errors import ConfigError

T = TypeVar("T")


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


DIM_MAX = 10**9  # above, float64 loses the kernel constants' 1/d terms (lambda_1 of ReLU reads 0 at d = 1e18)


def dimension(name: str, value: object) -> int:
    """A token dimension d: an int in [2, 10**9]."""
    allowed = f"must be an integer in [2, {DIM_MAX:,}]"
    d = _integer(name, value, 2, allowed)
    if d > DIM_MAX:
        raise ConfigError(name, value, allowed)
    return d


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


SEED_LIMIT = 2**63  # seeds are ints in [0, 2**63): every generator (torch, numpy) takes them without wrapping


def bias_stds(bias_std: T | None, su: T | None = None, sw: T | None = None) -> tuple[T | None, T | None]:
    """The shorthand ``bias_std``: (su, sw) = (bias_std, bias_std), or ``(su, sw)`` as given when it is None
    (THEORY section 1: the MLP's two bias stds). The one place of that rule (configs, specs, ``kernel_theory``).
    Raises ConfigError when ``su`` or ``sw`` is given (not None) beside it."""
    if bias_std is None:
        return su, sw
    if su is not None or sw is not None:
        raise ConfigError("bias_std", bias_std, "give either bias_std or su/sw, not both")
    return bias_std, bias_std


def seed(name: str, value: object) -> int:
    """The one seed rule: an int in [0, 2**63) (numpy ints accepted; bools, floats, strings refused)."""
    if type(value) is int and 0 <= value < SEED_LIMIT:  # the common case first: a batch validates 10^3-10^4 seeds
        return value
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.dtype.is_floating_point:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= int(value) < SEED_LIMIT:
        raise ConfigError(name, value, "a seed must be an integer in [0, 2**63)")
    return int(value)


def seed_sequence(name: str, value: object) -> list[int]:
    """A flat list or tuple of seeds, each checked by :func:`seed` (strings and nested lists refused)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise ConfigError(name, value, "an integer seed in [0, 2**63) or a flat list of them")
    return [seed(name, s) for s in value]


def float_dtype(name: str, dtype: object) -> torch.dtype:
    """A floating dtype the model supports: float32, float64 or bfloat16 (float16 and integers refused)."""
    if dtype not in (torch.float32, torch.float64, torch.bfloat16):
        raise ConfigError(name, dtype, "one of torch.float32, torch.float64, torch.bfloat16 (float16 is not supported)")
    return dtype  # pyright: ignore[reportReturnType]


def device(name: str, value: object) -> torch.device:
    """A torch device that exists on this machine (``'cuda'`` without CUDA is refused)."""
    try:
        dev = torch.device(value)  # pyright: ignore[reportArgumentType]
    except (RuntimeError, TypeError):
        raise ConfigError(name, value, "a torch device such as 'cpu' or 'cuda'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(name, value, "CUDA is not available on this machine; use 'cpu'")
    if dev.type == "cuda" and (dev.index or 0) >= torch.cuda.device_count():
        raise ConfigError(name, value, f"one of this machine's {torch.cuda.device_count()} CUDA devices")
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(name, value, "MPS is not available on this machine; use 'cpu'")
    if dev.type == "meta":  # shapes without numbers: a run, a draw or an observable needs values
        raise ConfigError(
            name, value, "a device that holds numbers ('cpu', 'cuda'); 'meta' tensors have none (a dry run: "
            "sdeformer simulate --device meta)"
        )  # fmt: skip
    return dev


def available_bytes() -> int | None:
    """Memory available to a new allocation (psutil, else /proc/meminfo MemAvailable), or None if unknown."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


MEMORY_ENV = "SDEFORMER_MAX_MEMORY"  # the memory limit of every estimate (``--max-memory`` sets it), e.g. 8G
UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def memory_size(name: str, value: object) -> int:
    """A memory size in bytes from ``4G``, ``512M``, ``2GiB``, ``1.5T`` or a plain number of bytes; ConfigError
    naming ``name`` otherwise."""
    text = str(value).strip().upper().removesuffix("IB").removesuffix("B")
    unit = text[-1:] if text[-1:] in UNITS and text[-1:] else ""
    try:
        number = float(text[: len(text) - len(unit)])
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise ConfigError(name, value, "a memory size such as 8G, 512M or a number of bytes (> 0)")
    return int(number * UNITS[unit])


def memory_limit() -> tuple[int | None, str]:
    """(the bytes a command may use, where that number comes from): ``SDEFORMER_MAX_MEMORY`` (``--max-memory``)
    when set, else the memory available now (None when unknown)."""
    if os.environ.get(MEMORY_ENV):
        return memory_size(MEMORY_ENV, os.environ[MEMORY_ENV]), f"{MEMORY_ENV} / --max-memory"
    return available_bytes(), "available now"


def fits_in_memory(name: str, value: object, estimate: float) -> None:
    """Refuse up front a request whose memory ``estimate`` (bytes) exceeds the limit (``memory_limit``): one line
    with the estimate and the limit."""
    limit, source = memory_limit()
    if limit is not None and estimate > limit:
        gib = 2**30
        raise ConfigError(
            name, value, f"needs about {estimate / gib:.3g} GiB of memory, {limit / gib:.3g} GiB allowed ({source})"
        )


def finite_state(x: torch.Tensor, layer: int, hint: str) -> None:
    """NaN guard of a run: ConfigError naming the layer and the likely parameter(s) ``hint`` if ``x`` has a
    non-finite entry."""
    if not bool(torch.isfinite(x).all()):
        raise ConfigError(hint, f"layer {layer}", "the tokens became NaN or infinite; use smaller values")


def token_tensor(name: str, x: object) -> torch.Tensor:
    """A token tensor ``(..., N, d)``: float32, float64 or bfloat16 (float16 and integer tensors refused), N >= 1,
    d >= 2."""
    if not isinstance(x, torch.Tensor):
        raise ConfigError(name, type(x).__name__, "must be a floating-point torch.Tensor of shape (..., N, d)")
    float_dtype(f"{name}.dtype", x.dtype)
    if x.device.type == "meta":  # shapes without numbers: an observable needs values
        raise ConfigError(name, "a meta tensor", "tokens with values (on 'cpu' or 'cuda'); 'meta' tensors have none")
    if x.ndim < 2 or x.shape[-1] < 2 or x.shape[-2] < 1:
        raise ConfigError(name, tuple(x.shape), "must have shape (..., N, d) with N >= 1 and d >= 2")
    return x


def sphere_tokens(name: str, x: torch.Tensor, normalize: bool = True) -> torch.Tensor:
    """Token values an observable can use: finite, and (``normalize``: projected to the sphere) non-zero. One
    pass over ``x``; ConfigError naming ``name`` otherwise (NaN tokens or a zero token would give NaN)."""
    if normalize:
        token_norms(name, x)
    elif not bool(torch.isfinite(x).all()):
        raise ConfigError(name, "non-finite entries", "tokens must be finite (no NaN or inf)")
    return x


def token_norms(name: str, x: torch.Tensor) -> torch.Tensor:
    """|x_i| ``(..., N, 1)`` of tokens ``(..., N, d)`` that can be projected to the sphere: ConfigError naming
    ``name`` for a NaN or inf entry (its token's norm is not finite; so is a norm that overflows) or a zero
    token. Checks the N norms, not the N d entries."""
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)  # (..., N, 1)
    if not bool(torch.isfinite(norm).all()):
        raise ConfigError(name, "non-finite entries", "tokens must be finite (no NaN or inf)")
    if bool((norm == 0).any()):
        raise ConfigError(name, "a zero token", "tokens must be non-zero to be projected to the sphere")
    return norm


def cosine_threshold(name: str, value: object) -> float:
    """The threshold of a 'cos > threshold' link: a float in [-1, 1) (at 1 or above no pair is ever linked, and a
    NaN threshold links none: every token would count as its own cluster)."""
    allowed = "a cosine threshold must be a number in [-1, 1)"
    number = _number(name, value, allowed)
    if not -1 <= number < 1:
        raise ConfigError(name, value, allowed)
    return number
