"""docs/specs.md, the spec-format reference, covers the format the code reads: every top-level key of a spec
(``sweeps._spec.SPEC_KEYS``) with its default, every config field (``params.FIELDS``) with its type and default,
and every built-in sweep observable (the table rows are parsed, so a renamed key or a changed default fails)."""

from __future__ import annotations

import re
from pathlib import Path

import sdeformer.sweeps  # noqa: F401  (registers the sweep observables)
from sdeformer.params import FIELDS
from sdeformer.registry import OBSERVABLES
from sdeformer.sweeps._spec import DEFAULT_BATCH, SPEC_KEYS

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "specs.md").read_text()


def _rows(heading: str) -> dict[str, list[str]]:
    """The rows of the first table under ``## heading``: first cell (without backticks) -> the other cells."""
    body = PAGE.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split(" | ") for line in body.splitlines() if line.startswith("| `")]
    return {cells[0].strip("` "): [c.strip() for c in cells[1:]] for cells in rows}


def test_every_spec_key_is_documented_with_its_default():
    rows = _rows("Top-level keys")
    assert list(rows) == list(SPEC_KEYS)
    assert rows["batch"][1] == f"`{DEFAULT_BATCH}`" and rows["times"][1] == "`final`" and rows["device"][1] == "`cpu`"
    assert rows["observables"][1] == "`[energy]`" and rows["seeds"][1].startswith("`1`")


def test_every_config_field_is_documented_with_its_type_and_default():
    rows = _rows("Config fields (in `base`, `axes` and `zipped`)")
    assert set(rows) == set(FIELDS)
    for name, field in FIELDS.items():
        kind, default = rows[name][0], rows[name][1].strip("`")
        assert kind == field.kind.__name__, name
        shown = str(field.default).lower() if isinstance(field.default, bool) else str(field.default)
        assert default == ("''" if field.default == "" else shown), (name, default, field.default)


def test_every_builtin_observable_is_documented():
    rows = _rows("Observables")
    assert set(rows) == {e.name for e in OBSERVABLES if not re.search(r"plugin", e.doc)}
