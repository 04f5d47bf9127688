"""Thread control of the small-tensor experiments (THEORY section 5 checks run many tiny steps).

Loops over tiny tensors (N <= 64) are many times faster on one intra-op thread than on a busy shared pool,
where every small op pays a thread hand-off. ``torch_threads`` is the one of ``sweeps.task`` (the jobs' thread
control), re-exported for the experiments.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..sweeps.task import torch_threads

__all__ = ["single_threaded", "torch_threads"]


def single_threaded(fn: Callable) -> Callable:
    """Decorator: run ``fn`` inside ``torch_threads(1)``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with torch_threads(1):
            return fn(*args, **kwargs)

    return wrapper
