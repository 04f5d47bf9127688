"""One registry per kind of part: noise fields, attention drifts, SDE solvers, sweep observables.

A registry entry names the part, the class that implements it (``"module:Class"`` for the built-ins, so that
this module, the config and the command line never import torch), the config fields its factory reads, which
of those may be ``(G,)`` tensors in a batched run, whether it draws randomness, the capabilities it claims
(``contracts.CAPABILITIES``) and a one-line description. Config validation, the command line's choices and
help, sweep-spec validation, the API table and the report's list of models all read the registries.

A part is registered with one call, from inside or outside the package::

    NOISES.register("scaled_gaussian", MyField, reads=("activation", "su", "sw"), doc="...",
                    claims=("limit", "one_point", "pair_covariance"))

The class must have ``from_config(params)`` (``params``: a ``Params`` view of the config, whose batched fields
may be tensors) and every method of the contracts it claims; otherwise registration fails with one line naming
the part and the missing method. The built-ins are declared at the bottom of this module (one line each) and
checked when first built (``tests/test_registry.py`` builds them all).

Plugin support sits above the registry (``plugins`` loads plugins and reads the entries to name a failing part;
``_plugin_checks`` checks a plugin part's returns): the registry reaches it as it reaches the built-in parts, by
``"module:function"`` at run time, and imports neither.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .core._errors import ConfigError
from .params import Param, Params, declared

__all__ = ["ATTENTIONS", "NOISES", "NORMS", "OBSERVABLES", "SOLVERS", "Entry", "Param", "Params", "Registry"]
__all__ += ["part_entry"]

Batched = tuple[str, ...] | Callable[[Any], tuple[str, ...]]
# the keys of contracts.CAPABILITIES, written here so that registering needs no torch (a fast --help)
CAPABILITY_NAMES = (
    "noise", "variance", "limit", "one_point", "pair_covariance", "replayable", "attention", "scheme", "observable",
    "norm",
)  # fmt: skip
_ENTRY_POINTS = "sdeformer.plugins:entry_point_plugins"  # the installed packages' plugins, loaded at the first lookup
_IS_PLUGIN, _GUARD = "sdeformer._plugin_checks:is_plugin_part", "sdeformer._plugin_checks:guard"


def _load(target: str) -> Any:
    """The object named by ``"module:name"`` (its module imported on first use)."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


_hook = functools.cache(_load)  # the plugin-support functions, resolved once


@dataclass(frozen=True)
class Entry:
    """One registered part. ``target``: the class or ``"module:Class"``; ``reads``: the config fields its
    ``from_config`` reads; ``batched``: those that may be ``(G,)`` tensors in one batched run (or a function of
    the config giving them); ``random``: draws from the run's source; ``claims``: capability names;
    ``causal``: accepts a causal mask (attention); ``doc``: one line; ``check``: extra config validation;
    ``limit``: (a noise) the registered field that is its limit, which the SDE schemes run (THEORY section 3);
    ``params``: the parameters it declares for itself (``Param``), read by ``from_config`` as ``params.NAME``."""

    name: str
    target: Any
    reads: tuple[str, ...] = ()
    batched: Batched = ()
    random: bool = False
    claims: tuple[str, ...] = ()
    causal: bool = False
    doc: str = ""
    check: Callable[[Any], None] | None = None
    limit: str = ""
    params: tuple[Param, ...] = ()

    def part(self) -> Any:
        """The implementing class (imported on first use for a ``"module:Class"`` target)."""
        return _load(self.target) if isinstance(self.target, str) else self.target

    def batched_fields(self, cfg: Any) -> tuple[str, ...]:
        return self.batched(cfg) if callable(self.batched) else self.batched

    def param(self, name: str) -> Param | None:
        """The declared parameter ``name`` (None if the part declares none of that name)."""
        return next((p for p in self.params if p.name == name), None)


@dataclass
class Registry:
    """Named parts of one kind. ``contract``: the capability every entry has (``contracts.CAPABILITIES`` key)."""

    kind: str
    contract: str
    factory: str = "from_config"  # the method every part of this kind has besides its contract's
    entries: dict[str, Entry] = field(default_factory=dict)

    def register(self, name: str, target: Any, *, replace: bool = False, **meta: Any) -> Entry:
        """Add a part (see the module docstring); a class target is checked now. Returns the entry.
        Raises ConfigError for a taken name (unless ``replace``), a bad name or a class missing a method."""
        if not isinstance(name, str) or not name.replace("_", "").isalnum():
            raise ConfigError(f"{self.kind} name", name, "letters, digits and underscores")
        if name in self.entries and not replace:
            raise ConfigError(f"{self.kind} name", name, f"already registered; taken: {self.names()}")
        entry = Entry(name, target, **meta)
        fixed = () if callable(entry.batched) else entry.batched  # reading a field of params.ALIASES declares it
        own = tuple(p for p in declared(self.kind, entry.reads, fixed) if entry.param(p.name) is None)
        entry = dataclasses.replace(entry, params=entry.params + own)
        for claim in (self.contract, *entry.claims):
            if claim not in CAPABILITY_NAMES:
                raise ConfigError(f"{name}.claims", claim, f"one of {list(CAPABILITY_NAMES)}")
        if not isinstance(target, str):
            self.check(entry)
        self.entries[name] = entry
        return entry

    def names(self) -> list[str]:
        _hook(_ENTRY_POINTS)()
        return list(self.entries)

    def __contains__(self, name: object) -> bool:
        _hook(_ENTRY_POINTS)()
        return name in self.entries

    def __iter__(self) -> Iterator[Entry]:
        _hook(_ENTRY_POINTS)()
        return iter(list(self.entries.values()))

    def __getitem__(self, name: str) -> Entry:
        """The entry ``name``; ConfigError (naming the registry's kind) for an unknown one."""
        _hook(_ENTRY_POINTS)()
        if name not in self.entries:
            raise ConfigError(self.kind, name, f"one of {self.names()}")
        return self.entries[name]

    def choices(self) -> str:
        """``'a, b or c'``: the names for help texts."""
        names = self.names()
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]

    def table(self) -> list[dict[str, str]]:
        """One row per entry (name, reads, claims, doc): the API docs table and the report's list."""
        return [
            {"name": e.name, "reads": ", ".join(e.reads), "claims": ", ".join(e.claims), "doc": e.doc} for e in self
        ]

    def build(self, name: str, params: Params) -> Any:
        """The part ``name`` built from ``params``: ``part().from_config(params)`` (its own parameters are read as
        ``KIND.NAME`` of this registry's kind); a plugin's part with its returns checked (``_plugin_checks``)."""
        params.kind, cls = params.kind or self.kind, self.check(self[name])
        part = cls.from_config(params)
        return _hook(_GUARD)(part, self.kind, name) if _hook(_IS_PLUGIN)(cls) else part

    def check(self, entry: Entry) -> Any:
        """The entry's class, after checking that it has the registry's factory method and the methods of the
        registry's contract and of every claimed capability (ConfigError naming the part and the method)."""
        from .contracts import require

        cls = entry.part()
        if not callable(getattr(cls, self.factory, None)):
            raise ConfigError("part", entry.name, f"lacks {self.factory}(), which every registered {self.kind} needs")
        for claim in (self.contract, *entry.claims):
            require(cls, _capabilities()[claim], entry.name)
        return cls


def part_entry(cfg: Any, kind: str) -> Entry:
    """The entry of the part of ``kind`` (noise, attention or norm) that ``cfg`` chooses; ConfigError for
    another kind."""
    registries = {"noise": NOISES, "attention": ATTENTIONS, "norm": NORMS}
    if kind not in registries:
        raise ConfigError("parameter", kind, f"a part parameter is KIND.NAME with KIND one of {list(registries)}")
    return registries[kind][str(getattr(cfg, kind)).partition(":")[0]]


def _capabilities() -> Mapping[str, type]:
    from .contracts import CAPABILITIES

    return CAPABILITIES


NOISES = Registry("noise", "noise")  # every registry's kind names its config field (``cfg.noise``)
NORMS = Registry("norm", "norm")  # BEYOND section 6
ATTENTIONS = Registry("attention", "attention")
SOLVERS = Registry("scheme", "scheme", factory="step")
OBSERVABLES = Registry("observable", "observable", factory="__call__")  # entries: fn(x, beta, observable)

_N = "sdeformer.noise."
NOISES.register(
    "mlp", _N + "_mlp:MLPNoise", reads=("activation", "width", "su", "sw", "sampling"), batched=("su", "sw"),
    random=True, claims=("variance", "one_point", "pair_covariance"), limit="gaussian",
    doc="the paper's fresh random width-m MLP per layer, shared by all tokens (THEORY section 1)",
)  # fmt: skip
NOISES.register(
    "gaussian", _N + "_fields:GaussianField", reads=("activation", "su", "sw", "beta"), random=True,
    claims=("limit", "one_point", "pair_covariance", "replayable"),
    doc="the exact Gaussian limit field with the MLP's kernel kappa (THEORY section 3)",
)  # fmt: skip
NOISES.register(
    "value", _N + "_value:ValueNoise", reads=("beta",), random=True, claims=("limit", "one_point", "pair_covariance"),
    doc="random value matrices of the attention layer (BEYOND section 2)",
)  # fmt: skip
NOISES.register(
    "heads", _N + "_heads:ResampledHeads", reads=("beta",), random=True,
    claims=("limit", "one_point", "pair_covariance"), doc="resampled random attention heads (BEYOND section 3)",
)  # fmt: skip
NOISES.register(
    "quadratic", _N + "_quadratic:QuadraticForm", random=True, claims=("limit", "one_point", "pair_covariance"),
    doc="a random symmetric linear layer, a random quadratic form (BEYOND section 4)",
)  # fmt: skip


def _softmax_batched(cfg: Any) -> tuple[str, ...]:
    return () if cfg.causal else ("attention_scale", "beta")


_A = "sdeformer.attention."
ATTENTIONS.register(
    "softmax", _A + "_softmax:SoftmaxAttention", reads=("beta", "attention_scale", "causal", "attention_method"),
    batched=_softmax_batched, causal=True,
    doc="the paper's softmax attention, Q^T K = beta I, V = s I (THEORY section 1)",
)  # fmt: skip
ATTENTIONS.register(
    "off", _A + "_softmax:NoAttention", batched=("attention_scale", "beta"),
    doc="no attention: the noise alone",
)  # fmt: skip
ATTENTIONS.register(
    "usa", _A + "_variants:UnnormalizedAttention", reads=("beta", "attention_scale", "causal", "attention_method"),
    causal=True, doc="unnormalized (USA) attention, weights e^{beta <x_i, x_j>} / N (BEYOND section 5)",
)  # fmt: skip
ATTENTIONS.register(
    "l2", _A + "_variants:L2Attention", reads=("beta", "attention_scale", "causal"), causal=True,
    doc="L2 (distance) attention, logits -beta |x_i - x_j|^2 / 2 (BEYOND section 5)",
)  # fmt: skip
ATTENTIONS.register("sinkhorn", _A + "_sinkhorn:SinkhornAttention", reads=("beta", "attention_scale"),
                    doc="doubly stochastic (Sinkhorn) attention (BEYOND section 5)")  # fmt: skip
ATTENTIONS.register("positional", _A + "_positional:PositionalAttention", reads=("beta", "attention_scale"),
                    batched=("beta", "attention_scale"), doc="softmax on R_i x_i: positions as auxiliary variables",
                    params=(Param("frequency", float, 1.0, low=0.0, doc="turns of R over the positions"),))  # fmt: skip


def _fixed_beta_scale(cfg: Any) -> None:
    if (cfg.beta, cfg.attention_scale) != (1.0, 1.0):
        raise ConfigError("beta", cfg.beta, "random attention draws Q^T K and V: leave beta, attention_scale at 1")


ATTENTIONS.register(
    "random", _A + "_variants:RandomMatrixAttention", reads=("seed", "causal"), random=True, causal=True,
    check=_fixed_beta_scale,
    doc="random Q^T K and V drawn once per run (BEYOND section 5)",
)  # fmt: skip
_NS = (
    "sdeformer.dynamics._norms.schemes:"  # their parameters (norm.fraction, norm.alpha) in the name: mix:F, ngpt:ALPHA
)
_IN_NAME = {
    "mix": (Param("fraction", float, 0.25, low=0.0, high=1.0, doc="F in (0, 1), the Post-LN fraction of the depth"),),
    "ngpt": (Param("alpha", float, 1.0, low=0.0, doc="alpha > 0, nGPT's step (alpha max(dt, sqrt(dt)) < 1)"),),
}
for _name, _cls, _doc in (
    ("post", "PostLN", "Post-LN, LN(x + update) after each sub-step, tokens on the sphere (THEORY 1; the default)"),
    ("pre", "PreLN", "Pre-LN (GPT, LLaMA): x + update of LN(x), the residual stream keeps a radius"),
    ("mix", "MixLN", "Mix-LN[:F]: Post-LN for the first fraction F of the depth (0.25), then Pre-LN"),
    ("peri", "PeriLN", "Peri-LN (Gemma 3): x + step LN(update of LN(x)), input and output normalized"),
    ("ngpt", "NGPT", "nGPT[:ALPHA]: LN(x + alpha step (LN(update) - x)) on the sphere (alpha 1)"),
    ("sqrt", "SqrtScaling", "sqrt-scaling: LN(x + update / sqrt(1 + t)), updates damped with depth"),
):
    NORMS.register(
        _name, _NS + _cls, reads=("norm", "horizon", "layers"), doc=_doc + " (BEYOND 6)", params=_IN_NAME.get(_name, ())
    )


_S = "sdeformer.dynamics._sde:"
SOLVERS.register("projected", _S + "ProjectedEulerMaruyama", doc="Euler-Maruyama, then back to the sphere")
SOLVERS.register("euler", _S + "EulerMaruyama", doc="plain Euler-Maruyama (|X| = 1 in mean only)")


def _noise_free_post(cfg: Any) -> None:
    if cfg.mlp or cfg.norm != "post":
        raise ConfigError("solver", cfg.solver, "a scheme of the noise-free Post-LN limit: noise off, norm post")


SOLVERS.register(
    "geodesic", _S + "GeodesicEuler", check=_noise_free_post,
    doc="noise-free limit ODE along great circles (Euler in the angle on the circle)",
)  # fmt: skip
SOLVERS.register(
    "rk4", _S + "RungeKutta4", check=_noise_free_post, doc="noise-free limit ODE, classical Runge-Kutta, fourth order"
)
# BEYOND sections 7-9: ALiBi, graph masks, two species (the config's alibi, mask and cross)
_MASKED = ("beta", "attention_scale", "causal", "mask", "cross")
ATTENTIONS.register(
    "alibi", _A + "_alibi:ALiBiAttention", reads=(*_MASKED, "alibi"), batched=("beta", "attention_scale", "alibi"),
    causal=True, doc="ALiBi: softmax logits beta <x_i, x_j> - alibi * distance(i, j), + mask, cross (BEYOND 7)",
)  # fmt: skip
ATTENTIONS.register(
    "graph", _A + "_masks:MaskedAttention", reads=_MASKED, batched=("beta", "attention_scale"), causal=True,
    doc="softmax attention restricted to a graph's neighbours (mask) or to two species (cross) (BEYOND 8-9)",
)  # fmt: skip
