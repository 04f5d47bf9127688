"""The ``sdeformer`` command line: a thin layer over :mod:`sdeformer.experiments`.

Each command module registers its commands on the shared ``app`` when imported here. The command modules
import torch, numpy and matplotlib inside the command bodies only, so ``sdeformer --help`` starts in well under
a second. ``show_all_defaults`` makes every ``--help`` show every option's default, as ``[default: X]`` at the
end of its help text (kept on one line: never broken inside the brackets).
"""

from __future__ import annotations

import enum
import inspect
import re
from typing import Any

import typer
from typer.models import ParameterInfo

from . import _checks, _model, _peer, _practice, _real, _reproduce, _spde, _sweep
from ._common import app
from ._generate import experiment_commands, with_default

__all__ = ["app", "main", "show_all_defaults"]

experiment_commands()  # sdeformer NAME for each registered experiment without a command of its own

# "help text [64]", "help [300; quick: 20]", "help (default: relu, silu)": a default written in the help text
_BRACKET = re.compile(r"\s*(?:\[([^\[\]]+)\]|\(default:? ([^()]*(?:\([^()]*\)[^()]*)*)\))\s*$")


def _default_text(info: ParameterInfo) -> str | None:
    """The default ``--help`` shows for an option: typer's own, 'off' for a False flag, the '[...]' at the end of
    the help text of a None default (taken out of the text) or 'unset'; None for an option that shows none."""
    if info.show_default is False or info.default is ...:  # ...: a required option (click says so)
        return None
    if isinstance(info.show_default, str):
        return info.show_default
    if isinstance(info.default, bool):
        return "on" if info.default else "off"
    if info.default is None:
        match = _BRACKET.search(info.help or "")
        if not match:
            return "unset"
        info.help = (info.help or "")[: match.start()]
        return match.group(1) or match.group(2)
    return str(info.default.value if isinstance(info.default, enum.Enum) else info.default)


def _typers(root: typer.Typer) -> list[typer.Typer]:
    found = [root]
    for group in root.registered_groups:
        if group.typer_instance is not None:
            found += _typers(group.typer_instance)
    return found


def show_all_defaults(root: typer.Typer = app) -> None:
    """Give every option of every command its default at the end of its help text, ``[default: X]`` with a
    no-break space (click's wrapping keeps it whole), instead of click's ``[default: (X)]`` for a text
    default; see ``_default_text``."""
    for sub in _typers(root):
        for command in sub.registered_commands:
            if command.callback is None:
                continue
            for param in inspect.signature(command.callback).parameters.values():
                info: Any = param.default
                if isinstance(info, ParameterInfo):
                    text = _default_text(info)
                    if text is not None:
                        info.help = with_default(info.help or "", text)
                        info.show_default = False


show_all_defaults()  # at import: ``sdeformer.cli.app`` (tests, ``python -m``) shows them too


def main() -> None:
    """The ``sdeformer`` entry point: the process-wide settings of the application (never of a library call or
    an import) are made here: the heap keeps freed blocks (``core._memory``), figures draw off screen."""
    import os

    from ..core._memory import keep_freed_memory

    keep_freed_memory()
    os.environ.setdefault("MPLBACKEND", "Agg")  # read by matplotlib when (and if) a command imports it
    app()
