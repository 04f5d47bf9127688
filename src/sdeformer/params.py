"""Declared parameters: ``Param``, the parameters a registered part declares for itself (``registry.Entry.params``;
docs/extending.md), and ``FIELDS``, the declarations of the config fields the built-in parts read
(``registry.Entry.reads``): type, default, allowed values, docs line (whether a batched run may vary a field is
declared by the part that reads it: ``registry.Entry.batched``). The config's defaults and checks
(``config.ModelConfig``) and the command line's model flags (``sdeformer simulate``) come from them. Torch-free,
so that ``--help`` stays fast.
"""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, replace
from math import inf
from typing import Any

from .core._errors import ConfigError


@dataclass(frozen=True)
class Param:
    """A parameter a part declares for itself (one that is not a field of ``ModelConfig``), addressed in configs,
    specs and sweep axes as ``KIND.NAME`` (``noise.gain``): its type (float, int, str or bool), default, allowed
    closed range [low, high] (numbers), whether one batched run may take one value per run (``batched``: the part
    then receives a ``(G,)`` tensor) and a one-line doc."""

    name: str
    kind: type = float
    default: Any = None
    low: float | None = None
    high: float | None = None
    batched: bool = False
    doc: str = ""
    rule: str = ""  # a check of core._validate that replaces the range (``"FUNCTION"`` or ``"FUNCTION:WHAT"``)

    def check(self, key: str, value: Any) -> Any:
        """``value`` of this parameter's type and range (integral floats taken as ints), or as ``rule`` returns it;
        ConfigError naming ``key`` otherwise."""
        if self.rule:
            name, _, what = self.rule.partition(":")
            check = getattr(importlib.import_module("sdeformer.core._validate"), name)
            return check(key, value, what) if what else check(key, value)
        if self.kind in (str, bool):
            if not isinstance(value, self.kind):
                raise ConfigError(key, value, f"must be a {self.kind.__name__}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) == inf:
            raise ConfigError(key, value, "must be a finite number")
        if self.kind is int and float(value) != int(value):
            raise ConfigError(key, value, "must be an integer")
        value = self.kind(value)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise ConfigError(key, value, f"must lie in [{self.low}, {self.high}]")
        return value


FIELDS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("tokens", int, 64, low=1, rule="positive_int", doc="N tokens"),
        Param("dim", int, 64, low=2, rule="dimension", doc="d, token dimension"),
        Param("width", int, 2048, low=1, rule="positive_int", doc="m, MLP width"),
        Param("layers", int, 150, low=1, rule="positive_int", doc="L, depth"),
        Param("horizon", float, 5.0, low=0.0, rule="positive_float", doc="T, so dt = T / L"),
        Param("activation", str, "relu", doc="MLP activation"),
        Param("su", float, 0.0, low=0.0, rule="nonneg_float:bias std", doc="hidden bias std"),
        Param("sw", float, 0.0, low=0.0, rule="nonneg_float:bias std", doc="output bias std"),
        Param("mlp", bool, True, doc="the noise (by default the MLP's) on/off"),
        Param("attention", str, "softmax", doc="attention drift"),
        Param("causal", bool, False, doc="causal attention mask"),
        Param("attention_method", str, "exact", doc="softmax on S^1, S^2: exact, harmonic (O(N K)) or auto"),
        Param("noise", str, "mlp", doc="noise model (off: none, as --no-mlp)"),
        Param("share", float, 1.0, low=0.0, high=1.0, doc="rho in [0, 1], the noise's shared fraction (1: common)"),
        Param("norm", str, "post", doc="normalization scheme (mix:F, ngpt:ALPHA with a parameter)"),
        Param(
            "alibi",
            float,
            0.0,
            low=0.0,
            batched=True,
            doc="ALiBi slope lambda per token of distance (the alibi attention)",
        ),
        Param("mask", str, "", doc="graph mask: path, cycle, complete, grid[:RxC], regular:K or a file"),
        Param("cross", int, 0, low=0, doc="the first K tokens are the encoder species (two species)"),
        Param("cross_noise", str, "shared", doc="two species: shared (one field) or own (one per species)"),
        Param("attention_scale", float, 1.0, rule="finite_float", doc="s in V = s I"),
        Param("beta", float, 1.0, low=0.0, rule="positive_float", doc="Q^T K = beta I"),
        Param("seed", int, 0, low=0, rule="seed", doc="random seed"),
        Param("dtype", str, "float32", doc="float32, float64 or bfloat16"),
        Param("rng", str, "generator", doc="random source: generator, or counter (Philox; for GPUs)"),
        Param("sampling", str, "direct", doc="MLP field: direct or conditional (same law)"),
        Param("save_every", int, 1, low=1, rule="positive_int", doc="save every k-th layer"),
        Param("solver", str, "", doc="the limit SDE's scheme, LAYERS steps (unset: the discrete model)"),
        Param("x0", str, "", doc="initial tokens from a .npy file, (N, d) or (B, N, d) with FILE#b"),
    )
}
"""The config fields of the model (``config.ModelConfig``, THEORY section 1 and BEYOND), declared once."""

# The one table of the parts' parameters that are config fields: KIND.NAME (the name a part declares, as a plugin's
# own parameters are named) -> the flat field that stores it (the name the command line, config files and the run
# hashes use: both names are accepted; the field keeps existing run folders and sweep tables resuming). A part
# that reads one of these fields declares it (``registry.Registry.register``); a value another part would read is
# refused (``refused``). ``norm.fraction`` and ``norm.alpha`` are stored after the scheme's name (``mix:0.3``).
ALIASES: dict[str, str] = {
    "noise.width": "width",
    "noise.su": "su",
    "noise.sw": "sw",
    "noise.activation": "activation",
    "noise.sampling": "sampling",
    "attention.scale": "attention_scale",
    "attention.causal": "causal",
    "attention.alibi": "alibi",
    "attention.mask": "mask",
    "attention.cross": "cross",
    "norm.fraction": "norm",
    "norm.alpha": "norm",
}
IN_NAME = "norm"  # the field whose parameter is written after its part's name (NAME:VALUE)
SHORTHANDS: dict[str, tuple[str, ...]] = {"bias_std": ("su", "sw")}  # one value sets several fields: su = sw
NAMED = {field: key for key, field in ALIASES.items() if field != IN_NAME}  # flat field -> KIND.NAME


def expand_shorthands(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with ``bias_std`` replaced by the fields it sets (su = sw: ``core._validate.bias_stds``, the one
    place of that rule); ConfigError when su or sw is given too (under either name)."""
    out = dict(values)
    if out.get("bias_std") is None:
        out.pop("bias_std", None)
        return out
    from .core._validate import bias_stds  # here: the declarations stay torch-free (a fast --help)

    given = [out.get(name, out.get(NAMED[name])) for name in SHORTHANDS["bias_std"]]
    out["su"], out["sw"] = bias_stds(out.pop("bias_std"), *(True if v is not None else None for v in given))
    return out


def declared(kind: str, fields: tuple[str, ...], batched: tuple[str, ...] = ()) -> tuple[Param, ...]:
    """The parameters a part of ``kind`` declares by reading config ``fields``: those fields of the table, as
    ``Param``s named as the part sees them (``noise.su`` -> ``su``), batched where the part takes ``(G,)``
    tensors of them."""
    out = []
    for key, field in ALIASES.items():
        if key.startswith(kind + ".") and field in fields and field != IN_NAME:
            out.append(replace(FIELDS[field], name=key.partition(".")[2], batched=field in batched))
    return tuple(out)


def in_name(value: Any) -> str:
    """A number as written after a part's name (``mix:0.3``, ``ngpt:2``): an integral value without ``.0``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError("norm", value, "a scheme's parameter must be a number")
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Params:
    """A config seen by a part's ``from_config``: ``params.su`` is the override (e.g. a ``(G,)`` tensor of a
    batched run) or the config's own value; ``params.options`` holds extra keyword options (e.g. the MLP's
    fast paths); ``params.seeds`` the runs' config seeds of a batch (None for one run)."""

    def __init__(
        self, cfg: Any, overrides: Mapping[str, Any] | None = None, *, seeds: Any = None, kind: str = "", **options: Any
    ):
        self.cfg, self.overrides, self.seeds, self.kind, self.options = cfg, dict(overrides or {}), seeds, kind, options

    def __getattr__(self, name: str) -> Any:
        """A config field, or (for a part of ``kind``) a parameter the part declares (``KIND.NAME``: the config's
        value or the declared default); an override (a batched ``(G,)`` tensor) wins."""
        if name in ("cfg", "overrides", "seeds", "kind", "options"):
            raise AttributeError(name)
        key = f"{self.kind}.{name}"
        for k in (name, key):
            if self.overrides.get(k) is not None:
                return self.overrides[k]
        if hasattr(self.cfg, name):
            return getattr(self.cfg, name)
        return self.cfg.value(key)


# Settings written once: a settings dataclass declares each setting as ``name: type = setting(default, doc)``, and
# ``params_of(cls)`` reads the declarations as ``Param``s, from which the command line makes its options.


def setting(default: Any, doc: str, low: float | None = None, high: float | None = None) -> Any:
    """A dataclass field with its default, its one-line doc and its closed range (``params_of`` reads them)."""
    return dataclasses.field(default=default, metadata={"doc": doc, "low": low, "high": high})


def _kind(hint: Any) -> type:
    """``int`` of ``int`` or ``int | None``."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return next(a for a in typing.get_args(hint) if a is not type(None))
    return hint


def params_of(cls: type) -> tuple[Param, ...]:
    """The settings ``cls`` declares with ``setting`` (fields without a doc are not settings), as ``Param``s."""
    hints = typing.get_type_hints(cls)
    return tuple(
        Param(f.name, _kind(hints[f.name]), f.default, f.metadata["low"], f.metadata["high"], doc=f.metadata["doc"])
        for f in dataclasses.fields(cls)
        if "doc" in f.metadata
    )
