"""Write docs/api/parts.md, the table of the model family and of the experiments, from the registries
(sdeformer.registry, sdeformer.experiments._registry).

python scripts/parts_table.py          # rewrite the page
python scripts/parts_table.py --check  # exit 1 if the page is out of date (tests/test_registry.py)
"""

from __future__ import annotations

import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "api" / "parts.md"


def render() -> str:
    from sdeformer.experiments._parts import parts_section
    from sdeformer.experiments._registry import EXPERIMENTS

    lines = [
        "# The model family",
        "",
        "Generated from the registries by `scripts/parts_table.py` (a test fails when this page is out of date).",
        "A name here is what a config, a sweep spec or the command line accepts; see [Extending](../extending.md).",
    ]
    for table in parts_section().tables:
        lines += ["", f"## {table.caption}", "", "| " + " | ".join(table.columns) + " |"]
        lines += ["|" + "---|" * len(table.columns)]
        lines += [
            "| " + " | ".join(f"`{r[0]}`" if i == 0 else str(r[i]) for i in range(len(r))) + " |" for r in table.rows
        ]
    lines += ["", "## experiments (sdeformer.EXPERIMENTS)", ""]
    lines += ["Each is `sdeformer reproduce NAME` and a command `sdeformer NAME` of its own; a group runs several."]
    lines += ["Declared settings are given as `sdeformer NAME --set SETTING=VALUE`."]
    lines += ["", "| name | module | groups | settings | description |", "|---|---|---|---|---|"]
    for e in EXPERIMENTS.reports():  # the report experiments (a command's own settings are its --help's)
        module = e.target.partition(":")[0]
        declared = () if e.command else e.declared()
        settings = ", ".join(f"`{p.name}` ({p.doc}; {p.default})" for p in declared) or "-"
        lines.append(f"| `{e.name}` | `{module}` | {', '.join(e.groups) or '-'} | {settings} | {e.doc} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if PAGE.read_text() == text else 1)
    PAGE.write_text(text)
