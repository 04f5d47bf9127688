"""The parts of one generic layer named by a ``ModelConfig``, built from the registries (``registry``).

``x_i <- LN(LN(x_i + dt D_i(X)) + xi_i)`` (THEORY section 1; BEYOND section 0): ``cfg.noise`` names the field
xi in ``registry.NOISES``, ``cfg.share`` = rho its sharing fraction (BEYOND section 1; rho = 1 builds the field
itself, so the numbers are those of the common noise), ``cfg.attention`` the drift D in
``registry.ATTENTIONS`` (``cfg.causal`` a causal mask), ``cfg.norm`` where the layer normalizes around the two
(``registry.NORMS``, BEYOND section 6; Post-LN as written). ``config.ModelConfig.build`` builds one run;
``engine.build_batched`` a batch of runs, with the fields of ``batched_fields`` as ``(G,)`` tensors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from ..noise.partial import PartialNoise
from ..registry import ATTENTIONS, NOISES, NORMS, Params
from .species import species_noise


def batched_fields(cfg: Any) -> tuple[str, ...]:
    """The config fields that may differ within one batched run of ``cfg``'s kind (the rest form its group):
    the seed, and every field that a part declares batched unless the other part reads it unbatched."""
    noise, attention = NOISES[cfg.noise], ATTENTIONS[cfg.attention]
    fields: list[str] = ["seed"]
    for part, other in ((noise, attention), (attention, noise)):
        fields += [f for f in part.batched_fields(cfg) if f not in other.reads or f in other.batched_fields(cfg)]
    return tuple(dict.fromkeys(fields))


def noise_field(cfg: Any, overrides: Mapping[str, Any] | None = None, **options: Any) -> Any:
    """The noise field of ``cfg`` (None when ``cfg.mlp`` is off): the registered part, partly shared where
    ``share`` < 1 (BEYOND 2), split per species where ``cross_noise`` is "own" (BEYOND 9); ``overrides``: values
    replacing the config's (e.g. ``(G,)`` tensors of a batched run); ``options`` go to the part (e.g. the MLP's
    fast paths)."""
    if not cfg.mlp:
        return None
    field = NOISES.build(cfg.noise, Params(cfg, overrides, **options))
    return species_noise(cfg, field if cfg.share == 1.0 else PartialNoise(field, cfg.share))


def attention(cfg: Any, overrides: Mapping[str, Any] | None = None, seeds: Sequence[int] | None = None) -> Any:
    """The attention drift of ``cfg``; ``overrides`` as in ``noise_field``; ``seeds``: the runs' config seeds of
    a batch (random attention draws one Q^T K, V per run)."""
    return ATTENTIONS.build(cfg.attention, Params(cfg, overrides, seeds=seeds))


def column(configs: Sequence[Any], name: str, dtype: torch.dtype) -> torch.Tensor:
    """One config field over a batch of configs as a ``(G,)`` tensor."""
    return torch.tensor([getattr(c, name) for c in configs], dtype=dtype)


def norm(cfg: Any) -> Any:
    """The normalization scheme of ``cfg`` (``registry.NORMS``: ``NAME`` or ``NAME:PARAMETER``; BEYOND section 6)."""
    return NORMS.build(cfg.norm.partition(":")[0], Params(cfg))
