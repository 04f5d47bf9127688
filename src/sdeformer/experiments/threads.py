"""Thread control of the small-tensor experiments (THEORY section 5 checks run many tiny steps).

Loops over tiny tensors (N <= 64) are many times faster on one intra-op thread than on a busy shared pool,
where every small op pays a thread hand-off.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run a block with ``n`` intra-op threads (at most the current number), restoring it afterwards."""
    old = torch.get_num_threads()
    torch.set_num_threads(max(1, min(int(n), old)))
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
