"""``--device`` of ``simulate`` and ``sweep`` (docs/scaling.md, "Devices"; issue 42 item 7).

- ``run_device(name, value, dry_run)``: the torch device a command runs on: ``cpu`` (the default), ``cuda``,
  ``cuda:K`` (``mps`` for ``simulate``); a device this machine lacks is one line naming the option
  (``core._validate.device``); ``meta`` is ``simulate``'s dry run (``dry_run=True``), refused elsewhere.
- ``notice(command, device)``: the one line a command prints before it runs off the CPU, saying what leaves the
  device: ``simulate`` draws and computes its observables on the device and copies each segment's saved states
  and observables to the CPU; a sweep copies each run's saved states to the CPU and computes its observables there.
- ``DryRun`` / ``dry_run(cfg)``: what ``simulate --device meta`` reports without allocating a tensor: the shapes
  of the run's arrays, its memory estimate (``_simulate.memory_estimate``), the limit it is checked against and
  the attention method it would use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..core._errors import ConfigError
from ._results import Result

SWEEP_TYPES = ("cpu", "cuda")  # the devices a sweep's spec takes (sweeps._spec: cpu, cuda, cuda:K)


def run_device(name: str, value: str, dry_run: bool = False, types: tuple[str, ...] | None = None) -> Any:
    """The ``torch.device`` of ``value``; ``meta`` only with ``dry_run``; ``types``: the device types allowed."""
    import torch

    from ..core._validate import device

    if dry_run and str(value) == "meta":
        return torch.device("meta")
    dev = device(name, value)
    if types is not None and dev.type not in types:
        raise ConfigError(name, value, f"one of {', '.join(types)} (or cuda:K)")
    return dev


def notice(command: str, device: Any) -> str:
    """One line: where the run's draws and observables are made, and what is copied off ``device``."""
    if command == "sweep":
        return (
            f"sweep on {device}: the runs and their draws on {device}; each run's saved states copied to the CPU, "
            "where its observables are computed"
        )
    return (
        f"simulate on {device}: the draws and the observables on {device} (its generators: other numbers than a CPU "
        "run's); each segment's saved states and observables copied to the CPU"
    )


@dataclass(frozen=True)
class DryRun(Result):
    """``simulate --device meta``: the run's array shapes, memory estimate and limit, nothing allocated."""

    shapes: dict[str, list[int]]
    memory_estimate_bytes: int
    memory_limit_bytes: int | None
    fits: bool
    attention_method: str
    config: dict[str, Any]

    def summary(self) -> str:
        """One line for the terminal."""
        shapes = ", ".join(f"{k} {tuple(v)}" for k, v in self.shapes.items())
        limit = "no limit" if self.memory_limit_bytes is None else f"limit {self.memory_limit_bytes / 2**30:.3g} GiB"
        verdict = "fits" if self.fits else "would be refused"
        return (
            f"dry run (device meta, nothing allocated): {shapes}; memory estimate "
            f"{self.memory_estimate_bytes / 2**30:.3g} GiB ({limit}: {verdict}); attention {self.attention_method}"
        )


def dry_run(cfg: Any) -> DryRun:
    """The dry run of ``simulate`` for ``cfg`` (a ``ModelConfig``): shapes from the config, THEORY section 1:
    tokens ``(N, d)``, the saved states ``(S, N, d)`` (S = layers / save_every + 1), the noise MLP's hidden layer
    ``(N, m)`` per step where the noise is on, the observables' rows ``(S,)``."""
    from ..core._validate import memory_limit
    from ._simulate import memory_estimate, method_used

    n, d, saved = cfg.tokens, cfg.dim, math.ceil(cfg.layers / cfg.save_every) + 1
    shapes = {"tokens": [n, d], "saved_states": [saved, n, d], "observables": [saved]}
    if cfg.mlp:
        shapes["mlp_hidden"] = [n, cfg.width]
    estimate, (limit, _source) = memory_estimate(cfg), memory_limit()
    fits = limit is None or estimate <= limit
    return DryRun(shapes, estimate, limit, fits, method_used(cfg), cfg.to_dict())
