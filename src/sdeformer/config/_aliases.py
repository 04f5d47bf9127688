"""The parts' own values in a config: the alias table's names routed into the fields that store them
(``params.ALIASES``), the declared parameters checked (``registry.Param``), a value no chosen part reads refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core._errors import ConfigError
from ..params import ALIASES, FIELDS, IN_NAME, in_name
from ..registry import ATTENTIONS, NOISES, NORMS, part_entry


def part_params(cfg: Any, given: Any) -> tuple[tuple[str, Any], ...]:
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


def route_aliases(cfg: Any) -> None:
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
            raise ConfigError(key, value, unread("norm", scheme))
        object.__setattr__(cfg, "norm", f"{scheme}:{in_name(declared.check(key, value))}")
    object.__setattr__(cfg, "params", tuple(pairs.items()))


def refuse_unread(cfg: Any, given: Iterable[str]) -> None:
    """ConfigError, one line naming the part, for a field of the table among ``given`` set away from its default
    that the chosen part does not read (``--width 8`` with the Gaussian noise): it would be ignored in silence."""
    for key, field in ALIASES.items():
        kind, _, name = key.partition(".")
        if field == IN_NAME or field not in given or getattr(cfg, field) == FIELDS[field].default:
            continue
        entry = part_entry(cfg, kind)
        if entry.param(name) is None and field not in entry.reads:
            raise ConfigError(field, getattr(cfg, field), unread(kind, entry.name))


def unread(kind: str, name: str) -> str:
    entry = {"noise": NOISES, "attention": ATTENTIONS, "norm": NORMS}[kind][name]
    reads = [f"{kind}.{p.name}" for p in entry.params]
    return f"not read by {kind} {name!r} (it reads {', '.join(reads) if reads else 'no parameter'})"
