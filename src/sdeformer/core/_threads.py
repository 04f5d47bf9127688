"""Thread oversubscription check (docs/benchmarks.md: conditions).

torch's intra-op threads spin while they wait for work; more of them than the cores this process may run on
(``os.sched_getaffinity``, which a container, ``taskset`` or a batch scheduler narrows below
``os.cpu_count()``) makes small tensor ops 10-40x slower. ``warn_threads()`` warns once per (threads, cores)
pair when that is the case; the engine calls it before a batched run. ``torch_threads(n)`` and the decorator
``single_threaded`` are the one place the application sets torch's thread count (a sweep task, an experiment of
many tiny steps: loops over tensors of N <= 64 are many times faster on one intra-op thread than on a busy shared
pool); the library itself never changes it.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; ``os.cpu_count()`` where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


@functools.cache
def _warn(threads: int, cores: int) -> str:
    message = (
        f"torch uses {threads} intra-op threads but this process may run on {cores} core(s): the extra threads "
        f"spin and slow small ops 10-40x; call torch.set_num_threads({cores}) (or fewer on a shared machine)"
    )
    warnings.warn(message, RuntimeWarning, stacklevel=3)
    return message


def warn_threads() -> str | None:
    """Warn (RuntimeWarning, once per setting) when ``torch.get_num_threads()`` exceeds ``usable_cores()``;
    returns the warning's text, or None when the threads fit."""
    threads, cores = torch.get_num_threads(), usable_cores()
    return _warn(threads, cores) if threads > cores else None


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` intra-op torch threads (None: leave as is), restoring the previous number."""
    old = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def single_threaded(fn: Callable) -> Callable:
    """Decorator: run ``fn`` inside ``torch_threads(1)``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with torch_threads(1):
            return fn(*args, **kwargs)

    return wrapper
