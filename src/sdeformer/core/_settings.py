"""Settings written once: a settings dataclass declares each setting as ``name: type = setting(default, doc)``, and
``params_of(cls)`` reads the declarations as ``params.Param``s (type, default, doc, range), from which the command
line makes its options (``cli._generate.declared_options``). Torch-free.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from ..params import Param


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
