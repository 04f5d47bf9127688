"""The parts of one generic layer named by a ``ModelConfig``: its noise field and its attention drift.

``x_i <- LN(LN(x_i + dt D_i(X)) + xi_i)`` (THEORY section 1; BEYOND section 0): ``noise`` picks the field xi
(``"mlp"``: the paper's random MLP; ``"gaussian"``: the exact Gaussian limit field with the MLP's kernel;
``"value"``, ``"heads"``, ``"quadratic"``: BEYOND sections 2-4), ``share`` = rho its sharing fraction (BEYOND 1;
rho = 1 builds the field itself, so the numbers are today's), ``attention`` the drift D (softmax, off, and the
variants of ``attention_variants``), ``causal`` a causal mask. ``config.ModelConfig.build`` builds one run;
``sweep.build_batched`` builds a batch of runs, with the parameters of ``batched_fields`` as ``(G,)`` tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .attention import NoAttention, SoftmaxAttention
from .attention_variants import (
    CausalSoftmaxAttention,
    L2Attention,
    RandomMatrixAttention,
    SinkhornAttention,
    UnnormalizedAttention,
)
from .fields import GaussianField
from .mlp_noise import MLPNoise
from .models import PartialNoise, QuadraticForm, ResampledHeads, ValueNoise

NOISES = ("mlp", "gaussian", "value", "heads", "quadratic")
ATTENTIONS = ("softmax", "off", "usa", "l2", "sinkhorn", "random")
CAUSAL_ATTENTIONS = ("softmax", "usa", "l2", "random")
BETA_NOISES = ("gaussian", "value", "heads")  # noise fields that read the config's beta
DEFAULTS: dict[str, Any] = {"noise": "mlp", "share": 1.0, "causal": False}  # left out of to_dict at these values


def batched_fields(cfg: Any) -> tuple[str, ...]:
    """The config fields that may differ within one batched run of ``cfg``'s kind (the rest form its group)."""
    out = ["seed"]
    if cfg.noise == "mlp":
        out += ["su", "sw"]
    if cfg.attention in ("softmax", "off") and not cfg.causal:
        out += ["attention_scale"] if cfg.noise in BETA_NOISES else ["attention_scale", "beta"]
    return tuple(out)


def attention_seed(seed: int) -> int:
    """The seed of a run's random attention matrices: a stream apart from its noise and initial tokens."""
    return (int(seed) * 6364136223846793005 + 1442695040888963407) % (2**63)


def noise_field(cfg: Any, su: Any = None, sw: Any = None, **mlp_options: Any) -> Any:
    """The noise field of ``cfg`` (None when ``cfg.mlp`` is off); ``su``, ``sw``: override the config's (e.g.
    ``(G,)`` tensors for the MLP noise); ``mlp_options`` go to ``MLPNoise``."""
    if not cfg.mlp:
        return None
    su, sw = cfg.su if su is None else su, cfg.sw if sw is None else sw
    kind = cfg.noise
    field: Any
    if kind == "mlp":
        field = MLPNoise(cfg.activation, cfg.width, su, sw, **{"sampling": cfg.sampling, **mlp_options})
    elif kind == "gaussian":
        field = GaussianField(cfg.activation, su, sw, beta=cfg.beta)
    elif kind == "value":
        field = ValueNoise(beta=cfg.beta)
    elif kind == "heads":
        field = ResampledHeads(beta=cfg.beta)
    else:
        field = QuadraticForm()
    return field if cfg.share == 1.0 else PartialNoise(field, cfg.share)


def attention(cfg: Any, beta: Any = None, scale: Any = None, seeds: Sequence[int] | None = None) -> Any:
    """The attention drift of ``cfg``; ``beta``, ``scale``: override the config's (``(G,)`` tensors for softmax);
    ``seeds``: the runs' config seeds of a batch (random attention draws one Q^T K, V per run)."""
    beta = cfg.beta if beta is None else beta
    scale = cfg.attention_scale if scale is None else scale
    kind = cfg.attention
    if kind == "off":
        return NoAttention()
    if kind == "softmax":
        return CausalSoftmaxAttention(beta, scale) if cfg.causal else SoftmaxAttention(beta, scale)
    if kind == "usa":
        return UnnormalizedAttention(beta, scale, causal=cfg.causal)
    if kind == "l2":
        return L2Attention(beta, scale, causal=cfg.causal)
    if kind == "sinkhorn":
        return SinkhornAttention(beta, scale)
    seed: Any = attention_seed(cfg.seed) if seeds is None else [attention_seed(s) for s in seeds]
    return RandomMatrixAttention(seed=seed, causal=cfg.causal)


def column(configs: Sequence[Any], name: str, dtype: torch.dtype) -> torch.Tensor:
    """One config field over a batch of configs as a ``(G,)`` tensor."""
    return torch.tensor([getattr(c, name) for c in configs], dtype=dtype)
