"""The user docs name only public paths (developers' guide: "user docs must not mention private ``_module`` paths").

The user docs are README.md and docs/*.md except docs/design.md, which describes the internals (its module map names
the private modules on purpose), and docs/api/, whose mkdocstrings directives name the modules that hold the
docstrings. A mention is private when it names a module or folder of ``src/sdeformer`` whose name starts with one
underscore: ``sdeformer/x/_y.py``, ``sdeformer._x``, ``sdeformer.x._y``, ``x._y.f`` or ``_y.f``. The public names are
the packages' re-exports (``sdeformer.spde.DensitySolver``), the commands and the concepts.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "sdeformer"


def user_docs() -> list[Path]:
    """README.md and docs/*.md but docs/design.md (the internals)."""
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "design.md")]


def private_names(source: Path = SOURCE) -> set[str]:
    """The private module and folder names of the package (``_solver``, ``_spde``; not ``__init__``)."""
    return {p.stem for p in source.rglob("_*") if not p.name.startswith("__") and (p.is_dir() or p.suffix == ".py")}


def patterns(names: set[str]) -> list[re.Pattern[str]]:
    """A private mention: a dotted or slashed path of the package through a private segment, or a private module
    name followed by ``.py`` or an attribute (a bare ``_checksums/`` is a folder of the outputs, not a module)."""
    alternatives = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return [
        re.compile(r"sdeformer(?:\.[A-Za-z]\w*)*\._[a-z]\w*"),  # sdeformer._x, sdeformer.x._y
        re.compile(r"sdeformer/(?:[\w/]*/)?_[a-z]\w*"),  # src/sdeformer/x/_y.py, sdeformer/x/_y/
        re.compile(rf"(?<![\w./-])(?:[a-z]\w*[./])+(?:{alternatives})(?:\.py\b|\.[A-Za-z_]|/)"),  # x._y.f, x/_y/
        re.compile(rf"(?<![\w./-])(?:{alternatives})(?:\.py\b|\.[A-Za-z_])"),  # _y.py, _y.f
    ]


def private_mentions(text: str, names: set[str]) -> list[tuple[int, str]]:
    """(line number, mention) of every private path in ``text``, once each (the longest of overlapping matches)."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        spans = sorted(
            {m.span() for pattern in patterns(names) for m in pattern.finditer(line)}, key=lambda s: (s[0], -s[1])
        )
        end = -1
        for start, stop in spans:
            if start >= end:
                found.append((number, line[start:stop]))
            end = max(end, stop)
    return found


def test_the_detector_finds_each_form_and_passes_public_names():
    """A detector that found nothing would pass any docs: each private form is found, each public one passes."""
    names = {"_solver", "_spde", "_norms"}
    private = [
        "src/sdeformer/spde/_solver.py",
        "`sdeformer.spde._solver`",
        "`sdeformer._lazy`",
        "`spde._solver.DensitySolver`",
        "`_solver.DensitySolver`",
        "`experiments/_spde/` holds",
        "(`dynamics._norms.rates`)",
    ]
    public = [
        "`sdeformer.spde.DensitySolver`",
        "`sdeformer spde --quick`",
        "`tests/test_spde.py`",
        "__init__.py",
        "wall_s and run_spde.json",
        "the `_spde` suffix alone",
        "`_checksums/<name>.sha256` beside each file",
    ]
    for line in private:
        assert private_mentions(line, names), line
    for line in public:
        assert not private_mentions(line, names), line


def test_the_private_names_are_the_package_s_own():
    names = private_names()
    assert {"_solver", "_spde", "_lazy", "_norms"} <= names and "__init__" not in names and "__main__" not in names


def test_user_docs_name_no_private_module():
    """Every mention as file:line, so that the docs can be fixed where they are."""
    names = private_names()
    found = [
        f"{doc.relative_to(ROOT)}:{number}: {mention}"
        for doc in user_docs()
        for number, mention in private_mentions(doc.read_text(encoding="utf-8"), names)
    ]
    assert not found, "private module paths in the user docs (use the public names):\n" + "\n".join(found)
