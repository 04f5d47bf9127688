"""A package's public names, loaded on first use (PEP 562).

Every module inside a subpackage is private (``_name.py``, diffrax's convention); the package's ``__init__`` is its
public face, and the relative imports of its ``if TYPE_CHECKING:`` block are its one re-export list: type checkers
and editors read them statically, and ``lazy_exports`` reads the same statements at run time, so that
``import sdeformer.dynamics`` imports nothing heavy until a name is used (``sdeformer --help`` stays fast and no
import order changes).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _listed(init_file: str) -> dict[str, tuple[str, str]]:
    """{public name: (relative module, attribute)} from the ``if TYPE_CHECKING:`` block of ``init_file``."""
    table: dict[str, tuple[str, str]] = {}
    for node in ast.parse(Path(init_file).read_text()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level > 0:
                    module = "." * stmt.level + (stmt.module or "")
                    for alias in stmt.names:
                        table[alias.asname or alias.name] = (module, alias.name)
    return table


def lazy_exports(
    package: str, init_file: str, extra: tuple[str, ...] = ()
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package``, whose ``__init__`` is ``init_file``: each name of its
    ``TYPE_CHECKING`` imports is imported from its module on first access and cached in the package namespace (a
    name that is a submodule, ``from . import _kernel as kernel``, is that module). ``extra``: public names the
    package's own ``__getattr__`` serves (the root's ``__version__``)."""
    table = _listed(init_file)

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, attribute = table[name]
        module = importlib.import_module(module_name, package)
        if attribute in vars(module):  # (not hasattr: the package's own __getattr__ would recurse)
            value = vars(module)[attribute]
        else:  # a submodule not yet imported, or a name another package serves lazily
            submodule = f"{module.__name__}.{attribute}"
            try:
                value = importlib.import_module(submodule)
            except ModuleNotFoundError as missing:
                if missing.name != submodule:  # the submodule exists but needs a package that is not installed
                    raise
                value = getattr(module, attribute)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table) | set(extra))

    return sorted([*table, *extra]), __getattr__, __dir__
