"""Validated, frozen configs for the discrete model (docs/design.md: one place for bad-input errors).

``ModelConfig`` holds every parameter of THEORY section 1; ``load_config`` reads TOML or YAML and rejects
keys that do not exist; ``ModelConfig.build()`` returns the model and its initial tokens.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from .activations import get_activation
from .attention import NoAttention, SoftmaxAttention
from .discrete import StochasticTransformer
from .errors import ConfigError
from .mlp_noise import SAMPLING_MODES, MLPNoise
from .sphere import uniform_sphere
from .validate import dimension, finite_float, nonneg_float, positive_float, positive_int

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}
ATTENTIONS = ("softmax", "off")


@dataclass(frozen=True)
class ModelConfig:
    """The discrete model of THEORY section 1. Defaults: the paper's Figures 2-6 panel (ReLU, d = 64)."""

    tokens: int = 64  # N, number of tokens
    dim: int = 64  # d, token dimension (>= 2)
    width: int = 2048  # m, MLP width (not stated for Figs 2-6; THEORY section 6 uses 2048)
    layers: int = 150  # L, depth
    horizon: float = 5.0  # T, so dt = T / L
    activation: str = "relu"  # MLP activation name (leaky_relu:SLOPE allowed)
    su: float = 0.0  # std of the hidden bias bU
    sw: float = 0.0  # std of the output bias bW
    mlp: bool = True  # MLP (common noise) on/off
    attention: str = "softmax"  # 'softmax' or 'off'
    attention_scale: float = 1.0  # s in V = s I (+1 attractive, 0 off, -1 repulsive)
    beta: float = 1.0  # Q^T K = beta I
    seed: int = 0  # seeds the initial tokens and the noise
    dtype: str = "float32"
    sampling: str = "direct"  # MLP field: 'direct' (draw U, W) or 'conditional' (same law at the tokens, fewer draws)
    save_every: int = 1  # save the trajectory every k layers

    def __post_init__(self) -> None:
        for name in ("tokens", "width", "layers", "save_every"):
            positive_int(name, getattr(self, name))
        dimension("dim", self.dim)
        for name in ("horizon", "beta"):
            positive_float(name, getattr(self, name))
        for name in ("su", "sw"):
            nonneg_float(name, getattr(self, name), "bias std")
        finite_float("attention_scale", self.attention_scale)
        if self.attention not in ATTENTIONS:
            raise ConfigError("attention", self.attention, f"one of {list(ATTENTIONS)}")
        if self.sampling not in SAMPLING_MODES:
            raise ConfigError("sampling", self.sampling, f"one of {list(SAMPLING_MODES)}")
        if self.dtype not in DTYPES:
            raise ConfigError("dtype", self.dtype, f"one of {list(DTYPES)}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ConfigError("seed", self.seed, "must be an integer")
        get_activation(self.activation)  # raises for an unknown name

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], **overrides: Any) -> ModelConfig:
        """Build from a dict (e.g. a config file); unknown keys and NaN values raise ConfigError.

        ``bias_std`` is accepted as a shorthand for su = sw.
        """
        data = dict(data)
        data.update({k: v for k, v in overrides.items() if v is not None})
        if "bias_std" in data:
            b = data.pop("bias_std")
            data.setdefault("su", b)
            data.setdefault("sw", b)
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise ConfigError("config key", key, f"unknown; allowed keys: {sorted(known | {'bias_std'})}")
        for key, value in data.items():
            if isinstance(value, float) and math.isnan(value):
                raise ConfigError(key, value, "must not be NaN")
        return cls(**data)

    def replace(self, **changes: Any) -> ModelConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def build(self) -> StochasticTransformer:
        """The model this config describes."""
        mlp = MLPNoise(self.activation, self.width, self.su, self.sw, sampling=self.sampling) if self.mlp else None
        attn = SoftmaxAttention(self.beta, self.attention_scale) if self.attention == "softmax" else NoAttention()
        return StochasticTransformer(self.layers, self.horizon, mlp=mlp, attention=attn)

    def initial_tokens(self, device: str | torch.device = "cpu") -> torch.Tensor:
        """I.i.d. uniform tokens ``(N, d)`` from the config's seed (its own stream, apart from the noise)."""
        return uniform_sphere(self.tokens, self.dim, seed=_init_seed(self.seed), dtype=self.torch_dtype, device=device)


def _init_seed(seed: int) -> int:
    """Initial tokens and noise use different streams derived from the one config seed."""
    return (int(seed) * 2654435761 + 97531) % (2**63)


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a TOML (.toml) or YAML (.yaml/.yml) file into a dict; unreadable files raise ConfigError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("config", str(path), f"cannot read file ({exc.strerror})") from None
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        elif path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            raise ConfigError("config", str(path), "must end in .toml, .yaml or .yml")
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        kind = path.suffix[1:].upper()
        raise ConfigError("config", str(path), f"not valid {kind}: {str(exc).splitlines()[0]}") from None
    except Exception as exc:  # yaml.YAMLError
        raise ConfigError("config", str(path), f"not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("config", str(path), "must hold a mapping of parameter names to values")
    return data
