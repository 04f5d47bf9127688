"""The ``sdeformer`` command line: a thin layer over :mod:`sdeformer.experiments`.

Each command module registers its commands on the shared ``app`` when imported here. The command modules
import torch, numpy and matplotlib inside the command bodies only, so ``sdeformer --help`` starts in well under
a second. ``show_all_defaults`` makes every ``--help`` show every option's default.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import typer
from typer.models import ParameterInfo

from . import (
    bench,  # noqa: F401  (registers bench)
    checks,  # noqa: F401  (registers rates, sync-check, lyapunov, phase)
    model,  # noqa: F401  (registers kernel, simulate)
    practice,  # noqa: F401  (registers train, probe, report-practice)
    reproduce,  # noqa: F401  (registers reproduce)
    sweep,  # noqa: F401  (registers sweep: run (default), status, plot)
)
from .common import app

# "help text [64]", "help [300; quick: 20]", "help (default: relu, silu)": a default written in the help text
_BRACKET = re.compile(r"\s*(?:\[([^\[\]]+)\]|\(default:? ([^()]*(?:\([^()]*\)[^()]*)*)\))\s*$")


def _default_text(info: ParameterInfo) -> str | None:
    """What ``--help`` should show as the default of an option typer would show none for (None or a False flag)."""
    if isinstance(info.show_default, str) or info.show_default is False:
        return None
    if info.default is False:
        return "off"
    if info.default is not None:
        return None  # typer shows it
    match = _BRACKET.search(info.help or "")
    if match:
        info.help = (info.help or "")[: match.start()]
        return match.group(1) or match.group(2)
    return "unset"


def _typers(root: typer.Typer) -> list[typer.Typer]:
    found = [root]
    for group in root.registered_groups:
        if group.typer_instance is not None:
            found += _typers(group.typer_instance)
    return found


def show_all_defaults(root: typer.Typer = app) -> None:
    """Give every option of every command a shown default: None defaults show the '[...]' at the end of their
    help text (moved into the default) or 'unset'; False flags show 'off'."""
    for sub in _typers(root):
        for command in sub.registered_commands:
            if command.callback is None:
                continue
            for param in inspect.signature(command.callback).parameters.values():
                info: Any = param.default
                if isinstance(info, ParameterInfo):
                    text = _default_text(info)
                    if text is not None:
                        info.show_default = text


show_all_defaults()  # at import: ``sdeformer.cli.app`` (tests, ``python -m``) shows them too


def main() -> None:
    app()
