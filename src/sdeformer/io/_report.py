"""The self-contained HTML report (DESIGN: one ``index.html`` per report, images embedded).

A report is a list of ``Section``s; each holds paragraphs, tables and figures with captions. Experiments
return sections; ``write_report`` renders them. No experiment writes HTML itself.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._atomic import atomic_write_text


@dataclass
class Figure:
    """A PNG file (path relative to the report folder or absolute) with its caption (plain text) and its ``alt``
    text, what a reader who cannot see it is told (default: the caption's first sentence, never the file name)."""

    path: Path
    caption: str
    alt: str = ""

    def alt_text(self) -> str:
        """The ``alt`` given, else the caption's first sentence (at most 200 characters), else the file's stem in
        words."""
        if self.alt:
            return self.alt
        first = re.split(r"(?<=[.;:])\s", self.caption.strip(), maxsplit=1)[0].rstrip(".;:")
        if first:
            return "Figure: " + (first if len(first) <= 200 else first[:199] + "…")
        return "Figure: " + Path(self.path).stem.replace("_", " ").replace("-", " ")


@dataclass
class Table:
    """A table: column names, rows of values, a caption (plain text). Floats print with 6 significant digits.

    ``from_runs``: its numbers are measured from runs, so every column holding a float must say either which
    column (or note) carries its uncertainty (``uncertainty``: column -> that column) or why it needs none
    (``exact``: column -> the reason: a setting, a closed form, a deterministic run, a z-score); ``render``
    refuses it otherwise (``unqualified``), and prints the reasons under the table."""

    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    caption: str = ""
    from_runs: bool = False
    exact: Mapping[str, str] = field(default_factory=dict)
    uncertainty: Mapping[str, str] = field(default_factory=dict)


def unqualified(t: Table) -> list[str]:
    """The columns of a ``from_runs`` table that hold a number (a float, or a string that is one number) but
    neither carry an uncertainty (``uncertainty``, or are named as one) nor say why they are exact."""
    if not t.from_runs:
        return []
    declared = set(t.exact) | set(t.uncertainty) | set(t.uncertainty.values())
    numeric = {c for row in t.rows for c, v in zip(t.columns, row) if _number(v)}
    return [c for c in t.columns if c in numeric and c not in declared]


def _number(v: Any) -> bool:
    """A float, or a string that is one number (a float already formatted): not an int (a count) or a bool."""
    if isinstance(v, float):
        return True
    try:
        float(v) if isinstance(v, str) else None
    except ValueError:
        return False
    return isinstance(v, str)


@dataclass
class Section:
    """One part of the report: a title, paragraphs (plain text), tables and figures, in that order."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f4f4f4} p.caption{font-weight:600;font-size:.9em;margin:1em 0 .3em}
div.table{overflow-x:auto;max-width:100%} div.table table{margin-top:0}
figure{margin:1.5em 0} figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.9em;color:#444;margin-top:.4em}
p.meta{color:#666;font-size:.85em}
"""


_NEGATIVE_ZERO = re.compile(r"-0(\.0*)?(e[+-]?0+)?")  # "-0", "-0.000", "-0e+00": a zero printed with its sign


def _cell(value: Any) -> str:
    """A table cell: floats to 6 significant digits; a zero never prints as -0 (a float or preformatted text)."""
    text = f"{value + 0.0:.6g}" if isinstance(value, float) else str(value)  # -0.0 + 0.0 is 0.0
    return html.escape(text[1:] if _NEGATIVE_ZERO.fullmatch(text) else text)


def _table_html(t: Table) -> str:
    if bad := unqualified(t):
        raise ValueError(
            f"report table {t.caption[:60]!r}: numbers from runs without an uncertainty in {bad}; give each its "
            "uncertainty column (Table.uncertainty) or say why it is exact (Table.exact)"
        )
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in t.columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in t.rows)
    cap = f"<p class='caption'>{html.escape(t.caption)}</p>" if t.caption else ""  # wraps at the page's width
    notes = "; ".join(f"{c}: {why}" for c, why in t.exact.items())
    note = f"<p class='meta'>Without an uncertainty: {html.escape(notes)}.</p>" if t.from_runs and notes else ""
    table = f"<div class='table'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    return f"{cap}{table}{note}"  # a table wider than the page scrolls inside it


def _figure_html(f: Figure, root: Path) -> str:
    path = f.path if f.path.is_absolute() else root / f.path
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{html.escape(f.alt_text(), quote=True)}" src="data:image/png;base64,{data}">'
        f"<figcaption><b>{html.escape(path.name)}</b>: {html.escape(f.caption)}</figcaption></figure>"
    )


def render(title: str, sections: Sequence[Section], root: Path, meta: str = "") -> str:
    """The report as one HTML string (PNG files read from ``root`` and embedded)."""
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
    ]
    if meta:
        parts.append(f"<p class='meta'>{html.escape(meta)}</p>")
    parts.append(
        "<ul>"
        + "".join(f"<li><a href='#s{i}'>{html.escape(s.title)}</a></li>" for i, s in enumerate(sections))
        + "</ul>"
    )
    for i, s in enumerate(sections):
        parts.append(f"<h2 id='s{i}'>{html.escape(s.title)}</h2>")
        parts += [f"<p>{html.escape(p)}</p>" for p in s.paragraphs]
        parts += [_table_html(t) for t in s.tables]
        parts += [_figure_html(f, root) for f in s.figures]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    folder: str | Path, title: str, sections: Sequence[Section], meta: str = "", name: str = "index.html"
) -> Path:
    """Render ``sections`` into ``folder/name`` atomically; returns the path."""
    folder = Path(folder)
    return atomic_write_text(folder / name, render(title, sections, folder, meta))
