"""Validated, frozen configs for the discrete model (docs/design.md: one place for bad-input errors).

``ModelConfig`` holds every parameter of THEORY section 1; ``load_config`` reads TOML or YAML and rejects
keys that do not exist; ``ModelConfig.build()`` returns the model and its initial tokens.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from .core.activations import get_activation
from .core.errors import ConfigError
from .core.sphere import uniform_sphere
from .core.validate import dimension, finite_float, nonneg_float, positive_float, positive_int
from .core.validate import seed as check_seed
from .dynamics import blocks
from .dynamics.discrete import StochasticTransformer
from .noise.mlp import SAMPLING_MODES
from .registry import ATTENTIONS, NOISES

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}
DEFAULTS: dict[str, Any] = {"noise": "mlp", "share": 1.0, "causal": False}  # left out of to_dict at these values


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
    mlp: bool = True  # the noise (by default the MLP's common noise) on/off
    attention: str = "softmax"  # a name of registry.ATTENTIONS: softmax, off, usa, l2, sinkhorn, random
    attention_scale: float = 1.0  # s in V = s I (+1 attractive, 0 off, -1 repulsive)
    beta: float = 1.0  # Q^T K = beta I
    seed: int = 0  # seeds the initial tokens and the noise
    dtype: str = "float32"
    sampling: str = "direct"  # MLP field: 'direct' (draw U, W) or 'conditional' (same law at the tokens, fewer draws)
    save_every: int = 1  # save the trajectory every k layers
    noise: str = "mlp"  # a name of registry.NOISES: mlp, gaussian (limit field), value, heads, quadratic (BEYOND 2-4)
    share: float = 1.0  # rho in [0, 1]: the fraction of the noise shared by the tokens (BEYOND 1; 1 = common)
    causal: bool = False  # causal attention mask (token i attends to j <= i)

    def __post_init__(self) -> None:
        checks: dict[str, Callable[[str, object], float]] = dict.fromkeys(
            ("tokens", "width", "layers", "save_every"), positive_int
        )
        checks.update(dim=dimension, horizon=positive_float, beta=positive_float, attention_scale=finite_float)
        checks.update(su=lambda n, v: nonneg_float(n, v, "bias std"), sw=lambda n, v: nonneg_float(n, v, "bias std"))
        for name, check in checks.items():  # plain int/float values: 64.0 -> 64, numpy scalars -> Python numbers
            object.__setattr__(self, name, check(name, getattr(self, name)))
        for name in ("attention", "sampling", "dtype", "noise"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(name, getattr(self, name), "must be a string")
        if not isinstance(self.mlp, bool):
            raise ConfigError("mlp", self.mlp, "must be true or false (a boolean, not a string or number)")
        self._check_blocks()
        if self.sampling not in SAMPLING_MODES:
            raise ConfigError("sampling", self.sampling, f"one of {list(SAMPLING_MODES)}")
        if self.dtype not in DTYPES:
            raise ConfigError("dtype", self.dtype, f"one of {list(DTYPES)}")
        check_seed("seed", self.seed)
        get_activation(self.activation)  # raises for an unknown name

    def _check_blocks(self) -> None:
        """The noise model and attention variant fields, against their registries."""
        noise, attention = NOISES[self.noise], ATTENTIONS[self.attention]  # ConfigError for an unknown name
        if isinstance(self.share, bool) or not isinstance(self.share, (int, float)) or not 0 <= self.share <= 1:
            raise ConfigError("share", self.share, "sharing fraction rho must be a number in [0, 1]")
        if not isinstance(self.causal, bool):
            raise ConfigError("causal", self.causal, "must be true or false")
        if self.causal and not attention.causal:
            causal = [e.name for e in ATTENTIONS if e.causal]
            raise ConfigError("causal", self.causal, f"needs attention in {causal}")
        for part in (noise, attention):
            if part.check is not None:
                part.check(self)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], **overrides: Any) -> ModelConfig:
        """Build from a dict (e.g. a config file); unknown keys and NaN values raise ConfigError.

        ``bias_std`` is accepted as a shorthand for su = sw.
        """
        data = dict(data)
        data.update({k: v for k, v in overrides.items() if v is not None})
        if "bias_std" in data:
            b = data.pop("bias_std")
            if "su" in data or "sw" in data:
                raise ConfigError("bias_std", b, "give either bias_std or su/sw, not both")
            data["su"] = data["sw"] = b
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
        """The fields as a dict; noise, share and causal only when not at their defaults, so the config hashes
        of runs made before those fields existed are unchanged."""
        d = dataclasses.asdict(self)
        return {k: v for k, v in d.items() if k not in DEFAULTS or v != DEFAULTS[k]}

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def build(self) -> StochasticTransformer:
        """The model this config describes."""
        return StochasticTransformer(
            self.layers, self.horizon, noise=blocks.noise_field(self), attention=blocks.attention(self)
        )

    def initial_tokens(self, device: str | torch.device = "cpu") -> torch.Tensor:
        """I.i.d. uniform tokens ``(N, d)`` from the config's seed (its own stream, apart from the noise)."""
        return uniform_sphere(self.tokens, self.dim, seed=_init_seed(self.seed), dtype=self.torch_dtype, device=device)


def _init_seed(seed: int) -> int:
    """Initial tokens and noise use different streams derived from the one config seed."""
    return (int(seed) * 2654435761 + 97531) % (2**63)


CONFIG_MAX_BYTES = 1_000_000  # a config holds a few dozen parameters; anything larger is a wrong file


def _read_text(path: Path) -> str:
    """The file's UTF-8 text; ConfigError if it is missing, larger than 1 MB or not text."""
    try:
        if path.stat().st_size > CONFIG_MAX_BYTES:
            raise ConfigError("config", str(path), f"larger than {CONFIG_MAX_BYTES // 1000} kB; not a config file")
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError("config", str(path), f"cannot read file ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("config", str(path), "not a text file (not valid UTF-8)") from None


def _yaml_load(text: str) -> Any:
    """``yaml.safe_load`` that refuses a key given twice in one mapping (instead of keeping the last)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)  # pyright: ignore[reportArgumentType]
            if isinstance(key, (str, int, float, bool)):
                if key in seen:
                    raise ConfigError("config key", key, "given twice; each key may appear once")
                seen.add(key)
        return loader.construct_mapping(node)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=StrictLoader)


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a TOML (.toml) or YAML (.yaml/.yml) file into a dict; unreadable, binary, over-large files and
    duplicate keys raise ConfigError."""
    path = Path(path)
    text = _read_text(path)
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        elif path.suffix.lower() in (".yaml", ".yml"):
            data = _yaml_load(text)
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
