"""Batched engine: many settings and seeds of equal shape as one tensor program (DESIGN: shapes).

Settings that share everything but (su, sw, attention_scale, beta, seed) form one group; each group is
one batched ``StochasticTransformer`` run with batch shape ``(G,)``, per-element noise laws and one
random stream per element. Element k equals the unbatched run of ``configs[k]``: the same random numbers,
so the same values up to floating-point rounding of the batched matmuls (``tests/test_model.py``).
``mlp_options`` (``sampling="conditional"``, ``matmul_dtype=torch.bfloat16``) override the opt-in fast paths of
``MLPNoise`` (issue 4): the same law, other random numbers; by default the draws are the unbatched ones.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Sequence

import torch

from .attention import NoAttention, SoftmaxAttention
from .config import ModelConfig
from .discrete import StochasticTransformer
from .loop import Trajectory
from .mlp_noise import MLPNoise
from .rng import Streams

BATCHED_FIELDS = ("su", "sw", "attention_scale", "beta", "seed")


def group_key(cfg: ModelConfig) -> tuple:
    """Everything that must be equal for two settings to share one tensor program."""
    d = cfg.to_dict()
    return tuple((k, v) for k, v in sorted(d.items()) if k not in BATCHED_FIELDS)


def build_batched(configs: Sequence[ModelConfig], **mlp_options) -> StochasticTransformer:
    """One model whose noise and attention parameters are ``(G,)`` tensors, one entry per config."""
    c0 = configs[0]
    dtype = c0.torch_dtype

    def column(name: str) -> torch.Tensor:
        return torch.tensor([getattr(c, name) for c in configs], dtype=dtype)

    options = {"sampling": c0.sampling, **mlp_options}
    mlp = MLPNoise(c0.activation, c0.width, column("su"), column("sw"), **options) if c0.mlp else None
    attn = SoftmaxAttention(column("beta"), column("attention_scale")) if c0.attention == "softmax" else NoAttention()
    return StochasticTransformer(c0.layers, c0.horizon, mlp=mlp, attention=attn)


def run_group(configs: Sequence[ModelConfig], device: str | torch.device = "cpu",
              progress: Callable[[int], None] | None = None, **mlp_options) -> list[Trajectory]:
    """Run configs that share a ``group_key`` as one batched run; one Trajectory per config."""
    keys = {group_key(c) for c in configs}
    if len(keys) != 1:
        raise ValueError("run_group needs configs that differ only in " + ", ".join(BATCHED_FIELDS))
    x0 = torch.stack([c.initial_tokens(device) for c in configs])  # (G, N, d)
    model = build_batched(configs, **mlp_options)
    streams = Streams([c.seed for c in configs], (len(configs),), x0.device)
    traj = model.run(x0, save_every=configs[0].save_every, streams=streams, progress=progress)
    return [Trajectory(traj.x[:, k], traj.layers, traj.t) for k in range(len(configs))]


def run_sweep(configs: Sequence[ModelConfig], device: str | torch.device = "cpu",
              progress: Callable[[int], None] | None = None, **mlp_options) -> list[Trajectory]:
    """Run any list of configs, grouped into batched runs; results in the input order.

    ``progress(n)`` is called with the number of (setting x layer) units done since the last call.
    """
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, c in enumerate(configs):
        groups[group_key(c)].append(i)
    out: list[Trajectory | None] = [None] * len(configs)
    for idx in groups.values():
        members = [configs[i] for i in idx]
        tick = (lambda _layer, n=len(idx): progress(n)) if progress else None
        for i, traj in zip(idx, run_group(members, device, tick, **mlp_options)):
            out[i] = traj
    return out  # type: ignore[return-value]
