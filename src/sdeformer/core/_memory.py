"""Keep freed memory in the process heap (docs/benchmarks.md: page faults).

A step of the batched engine allocates and frees the same large tensors every layer (the drawn MLP weights
``(G, m, d)``, the hidden layer ``(G, N, m)``: 1-30 MB each). glibc's malloc hands blocks above its mmap
threshold back to the kernel on ``free`` and trims the heap top above its trim threshold, so every layer
pays fresh zeroed pages again: 114,000 minor page faults and 35% of the wall time of the quick grid
(18 settings x 15 layers, the second call in a process: 0.75 s -> 0.46 s with the thresholds raised,
faults 114,293 -> 0). ``keep_freed_memory()`` raises both thresholds once per process
(``mallopt(M_MMAP_THRESHOLD)``, ``mallopt(M_TRIM_THRESHOLD)``), so freed blocks are reused from the heap;
the process then keeps up to ``TRIM_BYTES`` of freed memory instead of returning it. It is a no-op off
glibc and when the environment sets ``SDEFORMER_KEEP_MEMORY=0``. ``TokenDynamics.run`` calls it.
"""

from __future__ import annotations

import ctypes
import functools
import os

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameter numbers (malloc.h)
MMAP_BYTES = 1 << 30  # blocks up to 1 GiB come from the heap (and are reused there)
TRIM_BYTES = (
    1 << 31
) - 1  # free memory at the heap top above 2 GiB (the largest int mallopt takes) goes back to the kernel


@functools.cache
def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds once per process; True when they were set (False off glibc or
    with ``SDEFORMER_KEEP_MEMORY=0``). Idempotent and cheap after the first call."""
    if os.environ.get("SDEFORMER_KEEP_MEMORY", "1") == "0":
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (macOS, musl, Windows)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_BYTES))
