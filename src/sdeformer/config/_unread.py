"""A value given that the chosen part does not read, refused in one line naming the part (``--width 8`` with
the Gaussian noise would be ignored in silence)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core._errors import ConfigError
from ..params import ALIASES, FIELDS, IN_NAME
from ..registry import ATTENTIONS, NOISES, NORMS, part_entry


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
