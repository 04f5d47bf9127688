"""Batched runs of configs: many settings and seeds of equal shape as one tensor program (docs/design.md: shapes).

Settings that share everything but the seed and the parameters their parts declare batched form one group
(``blocks.batched_fields``: the MLP noise's bias stds, softmax's beta and scale); its parts are built once
(``blocks.parts``, the config-to-parts step) and each group is one batched ``StochasticTransformer`` (the
dynamics' time loop, which takes built parts and random streams, never a config) run with batch shape ``(G,)``,
per-element noise laws and one random stream per element. Element k equals the unbatched run of
``configs[k]``: the same random numbers, so the same values up to floating-point rounding of the batched
matmuls (``tests/test_model.py``).
``mlp_options`` (``sampling="conditional"``, ``matmul_dtype=torch.bfloat16``) override the opt-in fast paths of
``MLPNoise``: the same law, other random numbers; by default the draws are the unbatched ones.
``run_sweep`` returns one Trajectory per setting; ``sweep_measure`` applies a measurement to each batched run
and returns its tensors stacked over the settings, without splitting the runs first.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import torch

from ..core._errors import ConfigError
from ..core._rng import make_streams
from ..core._threads import warn_threads
from ..core._validate import device as check_device
from ..dynamics._labels import Runs
from ..dynamics._loop import TokenDynamics, Trajectory
from . import _blocks as blocks

if TYPE_CHECKING:
    from ._model import ModelConfig


def group_key(cfg: ModelConfig) -> tuple:
    """Everything that must be equal for two settings to share one tensor program: all fields but those of
    ``blocks.batched_fields`` (e.g. the Gaussian field and the attention variants take one beta per run)."""
    batched = blocks.batched_fields(cfg)
    return tuple((k, v) for k, v in sorted(cfg.to_dict().items()) if k not in batched)


def build_batched(configs: Sequence[ModelConfig], **mlp_options) -> TokenDynamics:
    """One model for configs of one ``group_key``: the noise and attention parameters among
    ``blocks.batched_fields`` become ``(G,)`` tensors, one entry per config; the rest (the normalization scheme
    among them, BEYOND section 6) are the first config's."""
    c0 = configs[0]
    batched = blocks.batched_fields(c0)

    columns = {name: blocks.column(configs, name, c0.torch_dtype) for name in batched if name != "seed"}
    return blocks.model(c0, blocks.parts(c0, columns, [c.seed for c in configs], **mlp_options))


def run_group(
    configs: Sequence[ModelConfig],
    device: str | torch.device = "cpu",
    progress: Callable[[int], None] | None = None,
    **mlp_options,
) -> Trajectory:
    """Run configs that share a ``group_key`` as one batched run: ``x`` is ``(S, G, N, d)``, G = len(configs).
    Warns once when torch's threads exceed the cores this process may use (``core._threads.warn_threads``)."""
    warn_threads()
    device = check_device("device", device)  # one line for a device this machine lacks, or meta
    keys = {group_key(c) for c in configs}
    if len(keys) != 1:
        raise ConfigError(
            "configs",
            f"{len(keys)} groups",
            "run_group needs configs that differ only in " + ", ".join(blocks.batched_fields(configs[0])),
        )
    x0 = torch.stack([c.initial_tokens(device) for c in configs])  # (G, N, d)
    model = build_batched(configs, **mlp_options)
    streams = make_streams(configs[0].rng, [c.seed for c in configs], (len(configs),), x0.device)  # rng: in group_key
    return model.run(x0, saveat=configs[0].save_every, streams=streams, progress=progress)


def _advance(progress: Callable[[int], None], n: int, _layer: int) -> None:
    """A group's per-layer callback: ``n`` settings advanced by one layer."""
    progress(n)


def _groups(
    configs: Sequence[ModelConfig],
    device: str | torch.device,
    progress: Callable[[int], None] | None,
    mlp_options: dict,
) -> Iterator[tuple[list[int], Trajectory]]:
    """(input indices, batched Trajectory) per group of ``configs``; ``progress(n)`` counts setting x layer.
    Raises ConfigError for an entry that is not a ModelConfig (before any run)."""
    for i, c in enumerate(configs):
        if not all(callable(getattr(c, verb, None)) for verb in ("initial_tokens", "to_dict", "value")):
            raise ConfigError(f"configs[{i}]", c, "a ModelConfig (sdf.ModelConfig(...) or ModelConfig.from_mapping)")
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, c in enumerate(configs):
        groups[group_key(c)].append(i)
    for idx in groups.values():
        tick = functools.partial(_advance, progress, len(idx)) if progress else None
        yield idx, run_group([configs[i] for i in idx], device, tick, **mlp_options)


def run_sweep(
    configs: Sequence[ModelConfig],
    device: str | torch.device = "cpu",
    progress: Callable[[int], None] | None = None,
    **mlp_options,
) -> Runs:
    """Run any list of configs, grouped into batched runs; one Trajectory per config, in the input order.

    ``progress(n)`` is called with the number of (setting x layer) units done since the last call.
    """
    out: list[Trajectory | None] = [None] * len(configs)
    for idx, traj in _groups(configs, device, progress, mlp_options):
        for k, i in enumerate(idx):
            out[i] = Trajectory(traj.x[:, k], traj.steps, traj.t, traj.stats)
    return Runs(out, [c.to_dict() for c in configs])


def sweep_measure(
    configs: Sequence[ModelConfig],
    measure: Callable[[Trajectory], dict[str, torch.Tensor]],
    device: str | torch.device = "cpu",
    progress: Callable[[int], None] | None = None,
    **mlp_options,
) -> Runs:
    """Run configs grouped as in ``run_sweep``; ``measure`` maps a batched Trajectory (``x``: (S, G, N, d)) to
    tensors ``(G, ...)``. One mapping of tensors per config comes back, in the input order, labelled by its
    config (``Runs``: ``stack()`` gives each name as ``(len(configs), ...)``, ``to_xarray()`` one Dataset)."""
    out: list[dict[str, torch.Tensor] | None] = [None] * len(configs)
    for idx, traj in _groups(configs, device, progress, mlp_options):
        measured = measure(traj)
        for k, i in enumerate(idx):
            out[i] = {key: value[k] for key, value in measured.items()}
    return Runs(out, [c.to_dict() for c in configs])
