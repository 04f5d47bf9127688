"""The size and copy-paste guard of `make lint` (scripts/check_guards.py): it fails on a planted 301-line module
and on a planted twin, ignores boilerplate (imports, docstrings, Protocol declarations), and passes on src/."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check_guards.py"
_spec = importlib.util.spec_from_file_location("check_guards", SCRIPT)
assert _spec is not None and _spec.loader is not None
guards = importlib.util.module_from_spec(_spec)
sys.modules["check_guards"] = guards  # dataclasses resolve their module by name
_spec.loader.exec_module(guards)

BLOCK = """\
    total = 0
    for item in items:
        value = item.weight * scale
        if value > limit:
            value = limit
        total += value
    return total / len(items)
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_a_module_over_300_lines_fails_and_300_passes(tmp_path: Path) -> None:
    _write(tmp_path, "ok.py", "".join(f"x{i} = {i}\n" for i in range(300)))
    assert guards.check([tmp_path]) == []
    big = _write(tmp_path, "big.py", "".join(f"y{i} = {i}\n" for i in range(301)))
    assert guards.check([tmp_path]) == [f"too long: {big}: 301 lines (over 300)"]


def test_a_planted_twin_fails_with_both_places(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.py", "def f(items, scale, limit):\n" + BLOCK)
    b = _write(tmp_path, "b.py", "X = 1\n\n\ndef g(items, scale, limit):\n    # the same logic again\n" + BLOCK)
    # the shared run is the 7 body lines (the def lines differ); b's comment line neither counts nor breaks it
    assert guards.check([tmp_path]) == [f"twin: {a}:2-8 ~ {b}:6-12 (7 lines)"]


def test_a_twin_inside_one_file_fails_and_a_five_line_run_passes(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "one.py", "def f(items, scale, limit):\n" + BLOCK + "\n\ndef g(items, scale, limit):\n" + BLOCK
    )
    assert guards.check([tmp_path]) == [f"twin: {path}:2-8 ~ {path}:12-18 (7 lines)"]
    short = "".join(BLOCK.splitlines(keepends=True)[:5])  # 5 lines: below the rule
    path.write_text("def f(items, scale, limit):\n" + short + "\n\ndef g(items, scale, limit):\n" + short)
    assert guards.check([tmp_path]) == []


def test_boilerplate_is_not_a_twin(tmp_path: Path) -> None:
    """Imports, docstrings, decorators, lone brackets and Protocol declarations repeated in two files pass."""
    text = '''"""A module."""

from __future__ import annotations

import math
import os
from typing import (
    Any,
    Protocol,
)


@runtime_checkable
class Field(Protocol):
    """A field.

    It has a docstring of many lines
    that the other module repeats
    word for word.
    """

    def increment(self, y: Any, /) -> Any: ...

    def variance(self, y: Any, /) -> Any: ...
'''
    _write(tmp_path, "p.py", text)
    _write(tmp_path, "q.py", text.replace("Field", "Other"))
    assert guards.check([tmp_path]) == []
    # the same file with six lines of logic in common is a twin
    logic = "".join(f"    total_{i} = compute(y, {i})\n" for i in range(6))
    _write(tmp_path, "p.py", text + "\n\ndef f(y):\n" + logic)
    _write(tmp_path, "q.py", text + "\n\ndef g(y):\n" + logic)
    assert len(guards.check([tmp_path])) == 1


def test_the_command_exits_1_on_a_finding_and_the_repo_passes(tmp_path: Path) -> None:
    _write(tmp_path, "a.py", "def f(items, scale, limit):\n" + BLOCK)
    _write(tmp_path, "b.py", "def g(items, scale, limit):\n" + BLOCK)
    bad = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 1 and "twin:" in bad.stdout
    repo = subprocess.run([sys.executable, str(SCRIPT), "src"], capture_output=True, text=True, cwd=ROOT)
    assert repo.returncode == 0, repo.stdout
