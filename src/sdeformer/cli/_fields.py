"""The model's command-line options, derived from the declared config fields (``params.FIELDS``): one
``--NAME`` per field with its type, its docs line, the registry's names where the field names a part and the
declared default. ``model_options()`` gives ``simulate`` every field; ``architecture_option`` /
``architecture_options`` give sync-check and phase the architecture fields (BEYOND sections 6-9) (an experiment's
declared settings: ``cli._generate.declared_options``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import typer

from ..params import FIELDS
from ..registry import ATTENTIONS, NOISES, NORMS, SOLVERS
from ._common import option_group

PART_FIELDS = {"attention": ATTENTIONS, "noise": NOISES, "norm": NORMS, "solver": SOLVERS}  # names a part
ARCHITECTURE = ("norm", "alibi", "mask", "causal", "cross")  # BEYOND sections 6-9


def field_help(name: str) -> str:
    """The ``--help`` line of field ``name``: its docs line, the registered names where it names a part (a
    plugin's too, for noise and attention) and its default in brackets (none where unset)."""
    declared = FIELDS[name]
    text = declared.doc
    if name in PART_FIELDS:
        plugins = " or a plugin's" if name in ("attention", "noise") else ""
        text += f": {PART_FIELDS[name].choices()}{plugins}"
    default = declared.default
    if default == "" or default is None:
        return text
    shown = (
        ("on" if default else "off")
        if isinstance(default, bool)
        else f"{default:g}"
        if isinstance(default, float)
        else default
    )
    return f"{text} [{shown}]"


def field_option(name: str) -> tuple[Any, Any]:
    """(annotation, typer option) of field ``name``, unset (None) by default: a value given overrides the config."""
    kind = FIELDS[name].kind
    flags = (f"--{name.replace('_', '-')}/--no-{name.replace('_', '-')}",) if kind is bool else ()
    return kind | None, typer.Option(None, *flags, help=field_help(name))


def field_options(target: str, names: Iterable[str]) -> Callable[[Callable], Callable]:
    """Decorator: give a command one option per field of ``names``; it receives those given as one ``target``
    argument, ``{name: value}``."""
    options = {name: field_option(name) for name in names}
    return option_group(target, lambda **values: {k: v for k, v in values.items() if v is not None}, options)


def model_options() -> Callable[[Callable], Callable]:
    """Every config field as an option (``simulate``), received as ``flags``."""
    return field_options("flags", FIELDS)


def architecture_options() -> Callable[[Callable], Callable]:
    """--norm, --alibi, --mask, --causal/--no-causal and --cross, received as ``parts``."""
    return field_options("parts", ARCHITECTURE)
