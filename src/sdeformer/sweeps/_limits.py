"""What a sweep may ask of the machine, checked before anything is expanded or run (THEORY section 1 runs).

``count_runs`` multiplies the axes' lengths (lazy: ranges are not materialised) by the number of seeds;
``check_count`` refuses more than ``max_runs`` (default ``MAX_RUNS``; ``sweep run --max-runs``) with one line.
``check_memory`` estimates the peak of one task, the largest sizes of the spec (``memory.run_bytes``
per run, times the runs batched in one task) plus the driver's bookkeeping (per run ``RUN_BYTES`` for its
``Run`` and config, and ``ROW_BYTES`` per recorded time for its table rows, read back by ``plan``) and refuses
it, as ``simulate`` refuses one run, when it exceeds the memory available now.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..config import ModelConfig
from ..core._errors import ConfigError
from ..core._validate import fits_in_memory

MAX_RUNS = 1_000_000  # points x seeds of one sweep, unless raised with --max-runs
RUN_BYTES = 1024  # bound on a Run and its ModelConfig in the driver (docs/benchmarks.md)
ROW_BYTES = 2048  # one table row read back (about 30 columns, 10 of them strings, copied by resolve): a bound
SIZES = ("tokens", "dim", "width", "layers")
ITEM = {"float64": 8, "float32": 4, "bfloat16": 2}

Groups = Sequence[Sequence[tuple[str, Sequence[Any]]]]


def length(values: Sequence[Any]) -> int:
    """``len(values)`` without its ``sys.maxsize`` bound: a range (or a ``values.Grid``) of 10^30 values is
    counted, then refused, instead of raising OverflowError."""
    if isinstance(values, range):
        return max(0, -(-(values.stop - values.start) // values.step))
    return int(getattr(values, "n", None) or len(values))


def count_runs(groups: Groups, seeds: Sequence[int]) -> int:
    """Points (the product of the groups' lengths; the fields of one zipped group share one) times seeds."""
    return math.prod(length(group[0][1]) for group in groups if group) * length(seeds)


def check_count(runs: int, max_runs: int | None) -> None:
    """ConfigError when a spec has more than ``max_runs`` runs (None: no limit)."""
    if max_runs is not None and runs > max_runs:
        raise ConfigError(
            "runs",
            runs,
            f"the spec has {runs:.3g} runs (points x seeds), more than the limit of {max_runs:,}; "
            "fewer values or seeds, or raise the limit with --max-runs",
        )


def _largest(name: str, base: Mapping[str, Any], axes: Mapping[str, Sequence[Any]]) -> Any:
    values = list(axes.get(name, ())) or [base.get(name, getattr(ModelConfig, name))]
    if name == "dtype":
        return max(values, key=lambda v: ITEM.get(v, 0))
    return max(values)


def rows_per_run(times: Any, layers: int) -> int:
    """Table rows of one run of ``layers`` layers recorded at ``times`` (see ``spec``): at most this many."""
    if times == "final":
        return 1
    if times == "all":
        return layers + 1
    if isinstance(times, tuple) and times and times[0] == "every":
        return layers // times[1] + 2
    return len(times)


def check_memory(base: Mapping[str, Any], groups: Groups, runs: int, batch: int | str, times: Any = "final") -> int:
    """ConfigError (naming the sizes and the GiB estimate) unless the spec's largest task fits in the memory
    available now; returns the estimate in bytes."""
    from ._memory import run_bytes
    from ._task import batch_size

    axes = {name: values for group in groups for name, values in group}
    sizes = {name: _largest(name, base, axes) for name in (*SIZES, "dtype")}
    largest = ModelConfig(**sizes)
    per_run = run_bytes(largest, cosines=True)
    driver = runs * (RUN_BYTES + rows_per_run(times, sizes["layers"]) * ROW_BYTES)
    estimate = min(batch_size(batch, largest), runs) * per_run + driver
    fits_in_memory("/".join(SIZES), tuple(sizes[n] for n in SIZES), estimate)
    return estimate


def check_device(device: str) -> None:
    """ConfigError when the spec's ``device`` is a GPU this machine does not have."""
    if device.startswith("cuda"):
        import torch

        index = int(device.partition(":")[2] or 0)
        if not torch.cuda.is_available() or index >= torch.cuda.device_count():
            raise ConfigError("device", device, "a CUDA device this machine has (none here: use device: cpu)")
