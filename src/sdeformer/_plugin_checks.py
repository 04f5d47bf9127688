"""Run-time checks of what a plugin's part returns (docs/extending.md, "What sdeformer checks at run time").

A part built by a registry (``Registry.build``) whose class is not sdeformer's own gets each of its contract's
methods (``contracts``) wrapped on the instance for its first call: the value returned is checked against the
contract once per built part (a model builds its parts once per run), then the method is unwrapped, so the run's
later calls cost nothing. A sweep observable of a plugin is checked on each chunk (``check_observable``).

Checked: the type (a torch.Tensor, a pair for ``increment_and_variance``), the shape (exactly the input's for an
increment, a drift or a layer: no broadcast of a ``(1, d)`` increment to every token; ``(..., N, 1)`` or ``()`` for
a variance), the dtype (the input's; complex refused), the device (the input's; ``meta`` refused), finiteness
(a variance >= 0 too), ``requires_grad`` when the input has none, and an in-place change of the input (its version
counter). The first call also runs under ``plugins.limited`` (its time limit and ``os._exit`` refused). A failure
is one ConfigError naming the plugin, the part and the call (the command line: one line, exit 2).

Every call of the part's code, after the first too, is time-limited by a watchdog (``_plugin_watchdog``), with no
wrapper; a plugin's sweep observable runs under ``plugins.limited`` at each call (``call_observable``). Not
covered: a part whose instance takes no attributes (``__slots__``) is not wrapped (nor watched, without
``__weakref__``); a method outside the contract is not checked (but is time-limited).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core._errors import ConfigError

if TYPE_CHECKING:  # torch is imported when a part is checked (the registry, which imports this, never imports it)
    import torch

LIKE_INPUT = "like"  # the value has exactly the input's shape, dtype and device
VARIANCE = "variance"
RETURNS: dict[str, dict[str, tuple[str, ...]]] = {  # kind -> method -> what each returned value is
    "noise": {
        "increment": (LIKE_INPUT,),
        "one_point": (LIKE_INPUT,),
        "apply": (LIKE_INPUT,),
        "variance": (VARIANCE,),
        "increment_and_variance": (LIKE_INPUT, VARIANCE),
    },
    "attention": {"drift": (LIKE_INPUT,)},
    "norm": {"layer": (LIKE_INPUT,)},
}


def is_plugin_part(cls: Any) -> bool:
    """True for a class (or function) defined outside the sdeformer package."""
    module = getattr(cls, "__module__", "") or ""
    return module != "sdeformer" and not module.startswith("sdeformer.")


def owner(cls: Any) -> str:
    """The plugin that defined ``cls``: its file or module as loaded (``plugins``), else its module's name."""
    import inspect

    from .plugins import _owner

    try:
        found = _owner(inspect.getsourcefile(cls) or "")
    except (TypeError, OSError):
        found = None
    return found or getattr(cls, "__module__", "?")


def guard(part: Any, kind: str, name: str) -> Any:
    """``part`` with its contract's methods checked on their first call (see the module docstring), and every call
    of its code time-limited while it is alive (``_plugin_watchdog.hold``)."""
    from ._plugin_watchdog import hold

    hold(part)
    state = getattr(part, "__dict__", None)
    if not isinstance(state, dict):  # no instance attributes (__slots__): left unchecked
        return part
    for method in RETURNS.get(kind, {}):
        if callable(getattr(part, method, None)):
            state[method] = FirstCall(part, method, f"{kind} {name!r}")
    return part


class FirstCall:
    """The method ``method`` of ``part`` on its first call: removed from the instance (later calls go straight to
    the class's method), run under ``plugins.limited``, its value checked (``check_value``). Picklable, with a
    stable repr (a part's repr or pickle may key a cache)."""

    def __init__(self, part: Any, method: str, label: str):
        self.part, self.method, self.label = part, method, label

    def __repr__(self) -> str:
        return f"<{self.method}, checked on its first call>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import torch

        from .plugins import limited

        vars(self.part).pop(self.method, None)
        tensor = next((a for a in args if isinstance(a, torch.Tensor)), None)
        version = tensor._version if tensor is not None else None
        where = (owner(type(self.part)), f"{self.label} {self.method}()")
        with limited(*where):
            out = getattr(self.part, self.method)(*args, **kwargs)
        if tensor is not None and tensor._version != version:
            _fail(where, "changed its input in place (it must return a new tensor)")
        kinds = RETURNS[self.label.split()[0]][self.method]
        if len(kinds) > 1 and (not isinstance(out, tuple) or len(out) != len(kinds)):
            _fail(where, f"returned {_what(out)}, not a pair (increment, variance)")
        for kind, value in zip(kinds, out if len(kinds) > 1 else (out,), strict=True):
            check_value(value, tensor, kind, where)
        return out


def _what(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return f"a {tuple(value.shape)} {str(value.dtype).removeprefix('torch.')} tensor on {value.device}"
    return f"a {type(value).__name__}"


def _fail(where: tuple[str, str], why: str) -> None:
    plugin, call = where
    raise ConfigError("plugin", plugin, f"{call} {why}")


def check_value(value: Any, x: torch.Tensor | None, kind: str, where: tuple[str, str]) -> None:
    """ConfigError (``_fail``) unless ``value`` meets the contract ``kind`` for the input ``x``."""
    import torch

    if not isinstance(value, torch.Tensor):
        _fail(where, f"returned {_what(value)}, not a torch.Tensor")
    if x is None:
        return
    if value.is_complex() or value.dtype != x.dtype:
        _fail(where, f"returned {_what(value)}; the contract: dtype {str(x.dtype).removeprefix('torch.')}")
    if value.device != x.device:
        _fail(where, f"returned {_what(value)}; the contract: on {x.device}, as its input")
    if kind == LIKE_INPUT and value.shape != x.shape:
        _fail(where, f"returned {_what(value)}; the contract: {tuple(x.shape)}, its input's shape (no broadcast)")
    if kind == VARIANCE and not _variance_shape(value.shape, x.shape):
        _fail(where, f"returned {_what(value)}; the contract: () or (..., N, 1) for tokens {tuple(x.shape)}")
    if value.requires_grad and not x.requires_grad:
        _fail(where, "returned a tensor that requires grad for an input that does not (detach it or use no_grad)")
    if not bool(torch.isfinite(value).all()):
        _fail(where, "returned non-finite values (NaN or inf)")
    if kind == VARIANCE and bool((value < 0).any()):
        _fail(where, "returned a negative variance")


def _variance_shape(shape: tuple[int, ...], tokens: tuple[int, ...]) -> bool:
    if len(shape) == 0:
        return True
    want = (*tokens[:-1], 1)
    return len(shape) == len(want) and shape[-1] == 1 and all(s in (w, 1) for s, w in zip(shape, want, strict=True))


def call_observable(fn: Any, x: torch.Tensor, beta: Any, spec: Any, name: str) -> Any:
    """``fn(x, beta, spec)``, for a plugin's observable under ``plugins.limited`` (its time limit, ``os._exit``
    refused: one call per chunk of saved states, so the limit's few microseconds are nothing beside it) and its
    value checked (``check_observable``)."""
    if not is_plugin_part(fn):
        return fn(x, beta, spec)
    from .plugins import limited

    with limited(owner(fn), f"observable {name!r} call"):
        value = fn(x, beta, spec)
    check_observable(fn, value, x, name)
    return value


def check_observable(fn: Any, value: Any, x: torch.Tensor, name: str) -> None:
    """A plugin observable's value on tokens ``x`` ``(..., N, d)``: a real tensor of shape ``(...)``."""
    import torch

    if not is_plugin_part(fn):
        return
    where = (owner(fn), f"observable {name!r} call")
    if not isinstance(value, torch.Tensor):
        _fail(where, f"returned {_what(value)}, not a torch.Tensor")
    if value.is_complex() or value.shape != x.shape[:-2] or value.device != x.device:
        _fail(where, f"returned {_what(value)}; the contract: a real {tuple(x.shape[:-2])} tensor on {x.device}")
