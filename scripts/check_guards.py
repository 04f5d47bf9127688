"""Size and copy-paste guards of `make lint` (docs/design.md, "Standards"): stdlib only, so CI needs nothing else.

Usage: ``python scripts/check_guards.py [ROOT ...]`` (default: ``src``); exit 1 and one line per finding when

(a) a module under ROOT has more than ``MAX_LINES`` (300) lines, or
(b) two places under ROOT (two files, or two non-overlapping places of one file) share a run of
    ``MIN_RUN`` (6) or more consecutive *significant* lines that are identical after normalisation.

The duplicate rule (what makes a copy-paste twin rather than boilerplate):

- normalisation: each line is stripped of leading and trailing whitespace; the comparison is then exact, so
  two blocks that differ only in names or values are not twins (``duplicates``, the shape-matching tool of the
  development machine, also lists those; it is a place to look, this guard is the rule);
- skipped before runs are formed (they neither count towards a run nor break one): blank lines, comment-only
  lines, import statements (all lines of a multi-line import), docstrings and other string-only statements,
  decorator lines, lines that are only brackets and separators (``)``, ``],``, ``}``), and declarations
  without logic (a line that is ``...`` or ``pass``, or ends in ``: ...``, as the methods of a ``Protocol``);
- a run must hold at least ``MIN_RUN`` significant lines, and at least half of them must carry more than a
  keyword (``else:``, ``try:``, ``return``, ``continue``, ``break``, ``raise`` alone do not count as content),
  so that a chance alignment of control-flow keywords is not a twin;
- each pair of places is reported once, with the longest run they share, as
  ``path:first-last ~ path:first-last (N lines)`` (original line numbers, first and last significant line).

What remains is the same logic written twice: shared settings dictionaries, repeated argument lists, the same
loop or the same error handling pasted into two functions. Move it into one function, dataclass or constant.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

MAX_LINES = 300
MIN_RUN = 6
_BRACKETS = re.compile(r"^[\s()\[\]{},;:]*$")
_KEYWORD_ONLY = re.compile(r"^(else|try|finally|return|continue|break|raise|yield|pass)\s*:?$")


@dataclass(frozen=True)
class Line:
    """One significant line: its number in the file (1-based) and its normalised text."""

    number: int
    text: str


def _skipped(node: ast.stmt) -> bool:
    """An import, or a statement that is a string alone (a docstring)."""
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    return isinstance(node, ast.Import | ast.ImportFrom)


def skipped_numbers(source: str) -> set[int]:
    """The line numbers of imports, docstrings / string-only statements and decorators (from the syntax tree)."""
    spans: list[ast.stmt | ast.expr] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and _skipped(node):
            spans.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            spans += node.decorator_list
    return {n for node in spans for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)}


def significant(source: str) -> list[Line]:
    """The lines of ``source`` that runs are made of (see the module docstring), normalised."""
    skip = skipped_numbers(source)
    lines = []
    for number, raw in enumerate(source.splitlines(), 1):
        text = raw.strip()
        if number in skip or not text or text.startswith(("#", "@")) or _BRACKETS.match(text):
            continue
        if text in ("...", "pass") or text.endswith(": ..."):
            continue
        lines.append(Line(number, text))
    return lines


def oversized(files: dict[Path, str]) -> list[str]:
    """One finding per module over ``MAX_LINES`` lines."""
    return [
        f"{path}: {n} lines (over {MAX_LINES})"
        for path, source in sorted(files.items())
        if (n := len(source.splitlines())) > MAX_LINES
    ]


def _content(run: list[Line]) -> bool:
    return 2 * sum(not _KEYWORD_ONLY.match(line.text) for line in run) >= len(run)


def twins(files: dict[Path, str]) -> list[str]:
    """One finding per pair of places sharing a run of ``MIN_RUN`` or more identical significant lines."""
    lines = {path: significant(source) for path, source in sorted(files.items())}
    windows: dict[tuple[str, ...], list[tuple[Path, int]]] = defaultdict(list)
    for path, sig in lines.items():
        for i in range(len(sig) - MIN_RUN + 1):
            windows[tuple(line.text for line in sig[i : i + MIN_RUN])].append((path, i))
    best: dict[tuple[Path, Path], tuple[int, int, int]] = {}  # (file a, file b) -> (length, start a, start b)
    seen: set[tuple[Path, int, Path, int]] = set()
    for places in windows.values():
        for k, (pa, ia) in enumerate(places):
            for pb, ib in places[k + 1 :]:
                if (pa, ia, pb, ib) in seen:
                    continue
                a, b = lines[pa], lines[pb]
                while ia > 0 and ib > 0 and a[ia - 1].text == b[ib - 1].text:  # to the start of the shared run
                    ia, ib = ia - 1, ib - 1
                n = 0
                while ia + n < len(a) and ib + n < len(b) and a[ia + n].text == b[ib + n].text:
                    seen.add((pa, ia + n, pb, ib + n))
                    n += 1
                if pa == pb and ib < ia + n:  # one place overlapping itself (a repeated line), not two places
                    n = ib - ia
                if n >= MIN_RUN and _content(a[ia : ia + n]) and n > best.get((pa, pb), (0, 0, 0))[0]:
                    best[(pa, pb)] = (n, ia, ib)
    findings = []
    for (pa, pb), (n, ia, ib) in sorted(best.items(), key=lambda item: (-item[1][0], str(item[0]))):
        a, b = lines[pa], lines[pb]
        findings.append(
            f"{pa}:{a[ia].number}-{a[ia + n - 1].number} ~ {pb}:{b[ib].number}-{b[ib + n - 1].number} ({n} lines)"
        )
    return findings


def check(roots: list[Path]) -> list[str]:
    """All findings for the Python modules under ``roots`` (empty: the guard passes)."""
    files = {path: path.read_text(encoding="utf-8") for root in roots for path in sorted(root.rglob("*.py"))}
    return [f"too long: {f}" for f in oversized(files)] + [f"twin: {f}" for f in twins(files)]


def main(argv: list[str]) -> int:
    roots = [Path(arg) for arg in argv] or [Path("src")]
    findings = check(roots)
    for finding in findings:
        print(finding)
    n_files = sum(1 for root in roots for _ in root.rglob("*.py"))
    print(f"check_guards: {len(findings)} finding(s) in {n_files} modules under {', '.join(map(str, roots))}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
