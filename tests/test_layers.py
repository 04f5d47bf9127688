"""The layer rule of docs/design.md, checked on the import graph: the library never imports the application.

Library: everything of ``sdeformer`` but the application packages below. Application: ``experiments``,
``sweeps``, ``io``, ``plots``, ``practice``, ``cli`` and the packages that measure or present (``real``,
``peers``, ``bench``). Every import statement counts, also one inside a function; the package root (its lazy public
names) and ``testing`` may name both."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "sdeformer"
APPLICATION = {"experiments", "sweeps", "io", "plots", "practice", "cli", "real", "peers", "bench", "__main__"}
EXEMPT = {"__init__"}  # the root's lazy table names application functions (open_sweep) without importing them


def _package(module: Path) -> str:
    return module.relative_to(SRC).parts[0].removesuffix(".py")


def _imported(module: Path) -> set[str]:
    """The top-level sdeformer packages a module imports (absolute or relative)."""
    depth = len(module.relative_to(SRC).parts) - 1  # folders below sdeformer/
    found = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").startswith("sdeformer."):
                found.add(node.module.split(".")[1])  # type: ignore[union-attr]
            elif node.level > 0 and node.level == depth + 1:  # from .. (up to the package root)
                names = [node.module] if node.module else [a.name for a in node.names]
                found.update(n.split(".")[0] for n in names)
            elif node.level > 0 and node.level <= depth:  # inside its own top-level package
                found.add(_package(module))
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("sdeformer."))
    return found


def library_violations() -> list[str]:
    out = []
    for module in sorted(SRC.rglob("*.py")):
        package = _package(module)
        if package in APPLICATION or package in EXEMPT:
            continue
        for target in sorted(_imported(module) & APPLICATION):
            out.append(f"{module.relative_to(SRC)} imports {target}")
    return out


def test_the_library_never_imports_the_application():
    assert library_violations() == []


def test_the_checker_sees_a_violation(tmp_path, monkeypatch):
    """The checker's power: a library module with a function-level import of an application package fails."""
    fake = tmp_path / "sdeformer"
    (fake / "noise").mkdir(parents=True)
    (fake / "noise" / "bad.py").write_text("def f():\n    from ..plots import paper\n")
    (fake / "observables.py").write_text("from .io.store import write_json\n")
    monkeypatch.setattr(__import__(__name__), "SRC", fake, raising=False)
    globals()["SRC"], old = fake, SRC
    try:
        assert library_violations() == ["noise/bad.py imports plots", "observables.py imports io"]
    finally:
        globals()["SRC"] = old


def test_the_root_exports_one_list():
    """``sdeformer.__all__`` is exactly the names of the root's ``TYPE_CHECKING`` imports (one explicit re-export
    list, no drift) and the version."""
    import sdeformer
    from sdeformer._lazy import _listed

    assert sdeformer.__all__ == sorted([*_listed(sdeformer.__file__), "__version__"])
