"""``ModelConfig``: the validated, frozen config of the discrete model (docs/design.md: one place for bad-input
errors). It holds every parameter of THEORY section 1; ``build()`` returns the model from its parts
(``blocks.parts``, the config-to-parts step); ``initial_tokens()`` its initial tokens.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass, fields
from typing import Any

import torch

from ..attention._harmonic import check_method
from ..attention._masks import ARCHITECTURE_DEFAULTS, check_architecture
from ..core._activations import get_activation
from ..core._config_files import file_tokens
from ..core._errors import ConfigError
from ..core._rng import check_kind as check_rng
from ..core._sphere import uniform_sphere
from ..core._validate import bias_stds, seed as check_seed
from ..dynamics import _species as species
from ..noise._mlp import SAMPLING_MODES
from ..params import ALIASES, FIELDS, IN_NAME, expand_shorthands, in_name
from ..registry import ATTENTIONS, NOISES, NORMS, part_entry
from . import _blocks as blocks

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
        if bias_std is not None:  # the shorthand's rule (core._validate.bias_stds), against su/sw set here
            su, sw = bias_stds(bias_std, self.su or None, self.sw or None)
            object.__setattr__(self, "su", su)
            object.__setattr__(self, "sw", sw)
        _route_aliases(self)
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
        species.check_species_noise(self.cross_noise, self.cross)
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
    def from_mapping(cls, data: Mapping[str, Any], *, strict: bool = True, **overrides: Any) -> ModelConfig:
        """Build from a dict (e.g. a config file); unknown keys and NaN values raise ConfigError.

        ``bias_std`` is accepted as a shorthand for su = sw.
        """
        data = dict(data)
        data.update({k: v for k, v in overrides.items() if v is not None})
        data = expand_shorthands(data)
        for key, value in data.items():
            if isinstance(value, float) and math.isnan(value):
                raise ConfigError(key, value, "must not be NaN")
        params = dict(data.pop("params", None) or {})
        for key in [k for k in data if "." in k]:  # KIND.NAME: a field of the table (params.ALIASES), else a part's own
            if key not in ALIASES:
                params[key] = data.pop(key)
            elif ALIASES[key] != IN_NAME:
                if ALIASES[key] in data:
                    raise ConfigError(key, data[key], f"give either {key} or {ALIASES[key]}, not both")
                data[ALIASES[key]] = FIELDS[ALIASES[key]].check(key, data.pop(key))
            else:
                params[key] = data.pop(key)  # written into the scheme's name by _route_aliases
        for key in data:
            if key not in _KNOWN:
                raise ConfigError("config key", key, f"unknown; allowed keys: {sorted(_KNOWN)} or KIND.NAME")
        cfg = cls(**data, params=tuple(params.items()))
        if strict:  # a value given that the chosen part would ignore (a sweep's base may serve several parts)
            refuse_unread(cfg, [ALIASES.get(k, k) for k in (*data, *params)])
        return cfg

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
        of runs made before those fields existed are unchanged; the parts' own parameters as ``KIND.NAME`` keys.
        Shallow (the fields are int, float, str, bool and the ``params`` pairs): ``asdict``'s deep copy was a third
        of a tiny sweep task's CPU, through ``group_key`` (docs/specs.md, "Resuming large sweeps")."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d.update(d.pop("params"))
        return {k: v for k, v in d.items() if k not in DEFAULTS or v != DEFAULTS[k]}

    def value(self, name: str) -> Any:
        """A field, or a part's own parameter ``KIND.NAME`` (the declared default when unset). Raises
        ConfigError for a name that is neither."""
        if "." not in name:
            return getattr(self, name)
        if ALIASES.get(name, IN_NAME) != IN_NAME:
            return getattr(self, ALIASES[name])
        given = dict(self.params)
        if name in given:
            return given[name]
        kind, _, param = name.partition(".")
        declared = part_entry(self, kind).param(param)
        if declared is None:
            raise ConfigError("parameter", name, f"not declared by the {kind} {getattr(self, kind)!r}")
        if name in ALIASES:  # written after the scheme's name (mix:0.3), else the declared default
            return float(self.norm.partition(":")[2] or declared.default)
        return declared.default

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def build(self) -> Any:  # a StochasticTransformer, or a dynamics._sde.Solver for ``solver``
        """The model this config describes: the discrete model, or the SDE scheme named by ``solver``. Both run
        with the one verb ``run(x0, seed, saveat)``."""
        return blocks.model(self, blocks.parts(self))

    def initial_tokens(self, device: str | torch.device = "cpu") -> torch.Tensor:
        """The tokens ``(N, d)`` of ``x0`` if given, else i.i.d. uniform ones from the config's seed (their own
        stream, apart from the noise)."""
        if self.x0:
            return torch.as_tensor(file_tokens(self.x0, self.tokens, self.dim), dtype=self.torch_dtype).to(device)
        return uniform_sphere(self.tokens, self.dim, seed=_init_seed(self.seed), dtype=self.torch_dtype, device=device)


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


def _route_aliases(cfg: ModelConfig) -> None:
    """The table's names among ``cfg.params`` (``params.ALIASES``) moved into the fields that store them:
    ``noise.width`` into ``width``, ``norm.fraction`` after the scheme's name (``norm: mix:0.3``), so that a config
    has one form and one hash whichever name set a value. Raises ConfigError when both names are given."""
    try:
        pairs = dict(cfg.params)
    except (TypeError, ValueError):
        raise ConfigError("params", cfg.params, "a mapping of KIND.NAME to values") from None
    for key in [k for k in pairs if k in ALIASES]:
        field, value = ALIASES[key], pairs.pop(key)
        if field != IN_NAME:
            if getattr(cfg, field) != FIELDS[field].default:
                raise ConfigError(key, value, f"give either {key} or {field}, not both")
            object.__setattr__(cfg, field, FIELDS[field].check(key, value))
            continue
        scheme, _, written = str(cfg.norm).partition(":")
        if written:
            raise ConfigError(key, value, f"give either {key} or norm {cfg.norm!r}, not both")
        declared = part_entry(cfg, "norm").param(key.partition(".")[2])
        if declared is None:
            raise ConfigError(key, value, _unread("norm", scheme))
        object.__setattr__(cfg, "norm", f"{scheme}:{in_name(declared.check(key, value))}")
    object.__setattr__(cfg, "params", tuple(pairs.items()))


def refuse_unread(cfg: ModelConfig, given: Iterable[str]) -> None:
    """ConfigError, one line naming the part, for a field of the table among ``given`` set away from its default
    that the chosen part does not read (``--width 8`` with the Gaussian noise): it would be ignored in silence."""
    for key, field in ALIASES.items():
        kind, _, name = key.partition(".")
        if field == IN_NAME or field not in given or getattr(cfg, field) == FIELDS[field].default:
            continue
        entry = part_entry(cfg, kind)
        if entry.param(name) is None and field not in entry.reads:
            raise ConfigError(field, getattr(cfg, field), _unread(kind, entry.name))


def _unread(kind: str, name: str) -> str:
    entry = {"noise": NOISES, "attention": ATTENTIONS, "norm": NORMS}[kind][name]
    reads = [f"{kind}.{p.name}" for p in entry.params]
    return f"not read by {kind} {name!r} (it reads {', '.join(reads) if reads else 'no parameter'})"


_KNOWN = frozenset({f.name for f in fields(ModelConfig)} | {"bias_std"})
