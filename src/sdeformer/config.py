"""Validated, frozen configs for the discrete model (docs/design.md: one place for bad-input errors).

``ModelConfig`` holds every parameter of THEORY section 1; ``load_config`` reads TOML or YAML and rejects
keys that do not exist; ``ModelConfig.build()`` returns the model and its initial tokens.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import stat
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .attention._harmonic import check_method
from .attention._masks import ARCHITECTURE_DEFAULTS, check_architecture
from .core._activations import get_activation
from .core._config_files import load_config_file as load_config_file  # re-exported: config.load_config_file
from .core._errors import ConfigError
from .core._rng import check_kind as check_rng
from .core._sphere import uniform_sphere
from .core._validate import seed as check_seed
from .dynamics import _blocks as blocks, _species as species
from .noise._mlp import SAMPLING_MODES
from .params import FIELDS
from .registry import ATTENTIONS, NOISES, part_entry

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}
# left out of to_dict at their defaults: the fields added after runs were recorded (their hashes stay unchanged)
LATER_FIELDS = ("noise", "share", "causal", "norm", "x0", "cross_noise", "rng", "solver", "attention_method")
DEFAULTS: dict[str, Any] = {name: FIELDS[name].default for name in LATER_FIELDS}
DEFAULTS["params"] = ()  # no parameter declared by a part (registry.Param) is set
DEFAULTS.update(ARCHITECTURE_DEFAULTS)  # alibi, mask, cross (BEYOND 7-9)


NOISE_OFF = "off"  # noise: off names the noise-free model (the same config as mlp: false, which turns any noise off)
_D = {name: declared.default for name, declared in FIELDS.items()}  # the declared defaults (params.FIELDS)


@dataclass(frozen=True)
class ModelConfig:
    """The discrete model of THEORY section 1. Defaults: the paper's Figures 2-6 panel (ReLU, d = 64)."""

    tokens: int = _D["tokens"]  # N, number of tokens
    dim: int = _D["dim"]  # d, token dimension (>= 2)
    width: int = _D["width"]  # m, MLP width (not stated for Figs 2-6; THEORY section 6 uses 2048)
    layers: int = _D["layers"]  # L, depth
    horizon: float = _D["horizon"]  # T, so dt = T / L
    activation: str = _D["activation"]  # MLP activation name (leaky_relu:SLOPE allowed)
    su: float = _D["su"]  # std of the hidden bias bU
    sw: float = _D["sw"]  # std of the output bias bW
    mlp: bool = _D["mlp"]  # the noise (by default the MLP's common noise) on/off
    attention: str = _D["attention"]  # a name of registry.ATTENTIONS: softmax, off, usa, l2, sinkhorn, random
    attention_scale: float = _D["attention_scale"]  # s in V = s I (+1 attractive, 0 off, -1 repulsive)
    beta: float = _D["beta"]  # Q^T K = beta I
    seed: int = _D["seed"]  # seeds the initial tokens and the noise
    dtype: str = _D["dtype"]
    sampling: str = _D["sampling"]  # MLP field: 'direct' (draw U, W) or 'conditional' (same law, fewer draws)
    save_every: int = _D["save_every"]  # save the trajectory every k layers
    noise: str = _D["noise"]  # a name of registry.NOISES (mlp, gaussian, value, heads, quadratic: BEYOND 2-4) or off
    share: float = _D["share"]  # rho in [0, 1]: the noise's fraction shared by the tokens (BEYOND 1; 1 = common)
    causal: bool = _D["causal"]  # causal attention mask (token i attends to j <= i)
    norm: str = _D["norm"]  # a name of registry.NORMS: post, pre, mix[:F], peri, ngpt[:ALPHA], sqrt (BEYOND 6)
    x0: str = _D["x0"]  # initial tokens from a .npy file, (N, d) or (B, N, d) with FILE#b; "" = uniform (seed)
    alibi: float = _D["alibi"]  # ALiBi slope lambda per token of distance (attention "alibi"; BEYOND 7)
    mask: str = _D["mask"]  # graph mask: path, cycle, complete, grid[:RxC], regular:K[:SEED] or a file (BEYOND 8)
    cross: int = _D["cross"]  # encoder tokens K: the first K tokens are the encoder species (BEYOND 9)
    cross_noise: str = _D["cross_noise"]  # two species: one common field (shared) or one per species (own)
    # random source (core._rng.make_streams): generator (a torch.Generator per run: the recorded runs' numbers),
    # counter (Philox for the whole batch in vectorised ops: the choice on a GPU, where the generator loop is one
    # kernel launch per run and draw) or splitmix (SplitMix64's mixer, the same design at a third of the work: many
    # small runs in one batch on a CPU; docs/benchmarks.md); the same law, other numbers
    rng: str = _D["rng"]
    # "" = the discrete model of THEORY section 1 (``layers`` layers); a name of registry.SOLVERS (euler,
    # projected) = that scheme for the limit SDE of THEORY section 3 with ``layers`` steps on [0, horizon], the
    # noise replaced by its declared limit field (the MLP's: the Gaussian field of its kernel)
    solver: str = _D["solver"]
    attention_method: str = _D["attention_method"]  # softmax's sums: exact, harmonic (d = 2, 3) or auto
    # the parameters the chosen parts declare for themselves (registry.Param), as sorted (KIND.NAME, value) pairs;
    # given as a mapping {"noise.gain": 0.5} too; read with value("noise.gain") (the declared default if unset)
    params: tuple[tuple[str, Any], ...] = ()
    bias_std: InitVar[float | None] = None  # shorthand: su = sw = bias_std (not a field)

    def __new__(cls, *args: Any, **kwargs: Any) -> ModelConfig:
        """Refuse an unknown keyword in one line (a ConfigError, not a TypeError)."""
        for key in kwargs:
            if key not in _KNOWN:
                raise ConfigError("config key", key, f"unknown; allowed keys: {sorted(_KNOWN)}")
        return super().__new__(cls)

    def __post_init__(self, bias_std: float | None = None) -> None:
        if bias_std is not None:
            if self.su or self.sw:
                raise ConfigError("bias_std", bias_std, "give either bias_std or su/sw, not both")
            object.__setattr__(self, "su", bias_std)
            object.__setattr__(self, "sw", bias_std)
        for name, declared in FIELDS.items():  # the numbers: 64.0 -> 64, numpy scalars -> Python numbers
            if declared.rule and name != "seed":  # the seed is checked, not converted (check_seed below)
                object.__setattr__(self, name, declared.check(name, getattr(self, name)))
        for name in ("attention", "sampling", "dtype", "noise", "norm", "x0", "solver", "attention_method"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(name, getattr(self, name), "must be a string")
        if not isinstance(self.mlp, bool):
            raise ConfigError("mlp", self.mlp, "must be true or false (a boolean, not a string or number)")
        if self.noise == NOISE_OFF:  # the noise-free model, stored as mlp = false (the hash older runs have)
            object.__setattr__(self, "noise", FIELDS["noise"].default)
            object.__setattr__(self, "mlp", False)
        self._check_blocks()
        object.__setattr__(self, "params", _part_params(self, self.params))
        check_architecture(self)
        species.check_species_noise(self)
        if self.sampling not in SAMPLING_MODES:
            raise ConfigError("sampling", self.sampling, f"one of {list(SAMPLING_MODES)}")
        if self.dtype not in DTYPES:
            raise ConfigError("dtype", self.dtype, f"one of {list(DTYPES)}")
        check_method(self.attention_method, self.dim, self.attention, self.causal)
        check_seed("seed", self.seed)
        check_rng(self.rng)
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
        if self.solver:
            blocks.check_solver(self)
        blocks.norm(self)  # the scheme's parameter (mix:F, ngpt:ALPHA): ConfigError when bad
        if self.x0:
            file_tokens(self.x0, self.tokens, self.dim)

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
        params = dict(data.pop("params", None) or {})
        for key in [k for k in data if "." in k]:  # KIND.NAME: a field the part reads (alias), else its own
            kind, _, name = key.partition(".")
            if name in _KNOWN and name != "params":
                if name in data:
                    raise ConfigError(key, data[key], f"give either {key} or {name}, not both")
                data[name] = data.pop(key)
            else:
                params[key] = data.pop(key)
        for key in data:
            if key not in _KNOWN:
                raise ConfigError("config key", key, f"unknown; allowed keys: {sorted(_KNOWN)} or KIND.NAME")
        for key, value in data.items():
            if isinstance(value, float) and math.isnan(value):
                raise ConfigError(key, value, "must not be NaN")
        return cls(**data, params=tuple(params.items()))

    def replace(self, **changes: Any) -> ModelConfig:
        return dataclasses.replace(self, **changes)

    def with_seed(self, seed: int) -> ModelConfig:
        """This config with another ``seed``: only the seed is checked (the rest was validated when this config
        was made), so that a sweep of 10^6 runs (one config per seed) expands fast; ``replace`` validates
        everything again (docs/benchmarks.md, "Measurements behind the code's constants")."""
        copied = copy.copy(self)
        object.__setattr__(copied, "seed", check_seed("seed", seed))  # frozen: set as in __post_init__
        return copied

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict; the fields of ``DEFAULTS`` only when not at their defaults, so the config hashes
        of runs made before those fields existed are unchanged; the parts' own parameters as ``KIND.NAME`` keys."""
        d = dataclasses.asdict(self)
        d.update(d.pop("params"))
        return {k: v for k, v in d.items() if k not in DEFAULTS or v != DEFAULTS[k]}

    def value(self, name: str) -> Any:
        """A field, or a part's own parameter ``KIND.NAME`` (the declared default when unset). Raises
        ConfigError for a name that is neither."""
        if "." not in name:
            return getattr(self, name)
        given = dict(self.params)
        if name in given:
            return given[name]
        kind, _, param = name.partition(".")
        declared = part_entry(self, kind).param(param)
        if declared is None:
            raise ConfigError("parameter", name, f"not declared by the {kind} {getattr(self, kind)!r}")
        return declared.default

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def build(self) -> Any:  # a StochasticTransformer, or a dynamics._sde.Solver for ``solver``
        """The model this config describes: the discrete model, or the SDE scheme named by ``solver``. Both run
        with the one verb ``run(x0, seed, saveat)``."""
        return blocks.model(self, blocks.noise_field(self), blocks.attention(self))

    def initial_tokens(self, device: str | torch.device = "cpu") -> torch.Tensor:
        """The tokens ``(N, d)`` of ``x0`` if given, else i.i.d. uniform ones from the config's seed (their own
        stream, apart from the noise)."""
        if self.x0:
            return torch.as_tensor(file_tokens(self.x0, self.tokens, self.dim), dtype=self.torch_dtype).to(device)
        return uniform_sphere(self.tokens, self.dim, seed=_init_seed(self.seed), dtype=self.torch_dtype, device=device)


def token_starts(path: str | Path) -> list[str]:
    """The ``x0`` values of a token file (a sweep's ``x0`` key): ``[path]`` for one start ``(N, d)``, one
    ``path#b`` per start of ``(B, N, d)``. Raises ConfigError for a file that is not such an array."""
    path = str(Path(path).resolve())
    array = _token_array(path, *_stamp(path))
    return [path] if array.ndim == 2 else [f"{path}#{b}" for b in range(array.shape[0])]


def file_tokens(value: str, tokens: int, dim: int) -> np.ndarray:
    """The start ``(N, d)`` named by an ``x0`` value (``FILE`` or ``FILE#b``). Raises ConfigError for a missing
    or unreadable file, a bad index, a shape other than ``(tokens, dim)``, or non-finite or zero tokens."""
    path, hashed, index = value.partition("#")
    array = _token_array(path, *_stamp(path))
    if hashed and not (index.isdigit() and array.ndim == 3 and int(index) < array.shape[0]):
        raise ConfigError("x0", value, f"FILE#b needs a (B, N, d) file and 0 <= b < B; {path} is {array.shape}")
    if not hashed and array.ndim != 2:
        raise ConfigError("x0", value, f"holds {array.shape[0]} starts: name one as FILE#b")
    x = array[int(index)] if hashed else array
    if x.shape != (tokens, dim) or not np.isfinite(x).all() or not np.linalg.norm(x, axis=-1).all():
        raise ConfigError("x0", value, f"must hold finite non-zero tokens of shape {(tokens, dim)}, not {x.shape}")
    return x


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = Path(path).stat()
    except OSError as exc:
        raise ConfigError("x0", path, f"cannot read the token file ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block forever, /dev/zero be read until memory runs out
        raise ConfigError("x0", path, "a regular .npy file (not a FIFO, a device or a folder)")
    return info.st_mtime_ns, info.st_size


@functools.lru_cache(maxsize=64)
def _token_array(path: str, mtime_ns: int, size: int) -> np.ndarray:
    """A .npy token file, ``(N, d)`` or ``(B, N, d)`` floats (cached per path and modification)."""
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ConfigError("x0", path, f"not a .npy array file ({type(exc).__name__})") from None
    if array.ndim not in (2, 3) or not np.issubdtype(array.dtype, np.floating):
        raise ConfigError("x0", path, f"must hold floats (N, d) or (B, N, d), not {array.dtype} {array.shape}")
    return array


def _init_seed(seed: int) -> int:
    """Initial tokens and noise use different streams derived from the one config seed."""
    return (int(seed) * 2654435761 + 97531) % (2**63)


def _part_params(cfg: ModelConfig, given: Any) -> tuple[tuple[str, Any], ...]:
    """``given`` (a mapping or (KIND.NAME, value) pairs) checked against the declarations of ``cfg``'s parts
    (``registry.Param``: type, range), as sorted pairs. Raises ConfigError naming the parameter."""
    try:
        pairs = dict(given)
    except (TypeError, ValueError):
        raise ConfigError("params", given, "a mapping of KIND.NAME to values") from None
    out = {}
    for key, value in pairs.items():
        kind, _, name = str(key).partition(".")
        declared = part_entry(cfg, kind).param(name) if name else None
        if declared is None:
            entry = part_entry(cfg, kind) if name else None
            names = [f"{kind}.{p.name}" for p in entry.params] if entry else []
            raise ConfigError(
                "parameter", key, f"not declared by the {kind} {getattr(cfg, kind, '')!r}; declared: {names}"
            )
        out[key] = declared.check(key, value)
    return tuple(sorted(out.items()))


_KNOWN = frozenset({f.name for f in fields(ModelConfig)} | {"bias_std"})
