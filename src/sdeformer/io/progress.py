"""Progress reporting shared by the commands and the reproduce report, on stderr (DESIGN: outputs).

Long runs take ``progress(n)`` callbacks; ``progress_bar`` turns one into a rich bar when stderr is a terminal,
or into plain lines (start, every 10 %, done, each with the elapsed time) when stderr goes to a file or a pipe,
so that ``make demo > log`` shows where the run is; a no-op when disabled (``--json`` output, tests).
``stage`` prints one plain line per stage of a long command ("figure 2: relu MLP ... 12.3 s").
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_STARTED = time.perf_counter()
_console: Any = None
_quiet = 0  # > 0 inside a disabled progress_bar: stages are silent too (--json)


def _rich_console() -> Any:
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(stderr=True)
    return _console


def _line(text: str) -> None:
    """One plain line on stderr (flushed: it may be a log file)."""
    console = _rich_console()
    if console.is_terminal:
        console.print(text, highlight=False, soft_wrap=True)
    else:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def stage(text: str) -> None:
    """One line ``[  12.3 s] text`` on stderr (seconds since the process started); silent under ``--json``."""
    if not _quiet:
        _line(f"[{time.perf_counter() - _STARTED:7.1f} s] {text}")


@contextmanager
def progress_bar(total: int, description: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n=1)``: a rich bar on a terminal, plain lines otherwise, nothing when not enabled."""
    global _quiet
    if not enabled:
        _quiet += 1
        try:
            yield lambda n=1: None
        finally:
            _quiet -= 1
        return
    if _rich_console().is_terminal:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        columns += (TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=_rich_console(), transient=True) as bar:
            task = bar.add_task(description, total=total)
            yield lambda n=1: bar.advance(task, n)
        return
    yield from _plain_lines(total, description)


def _plain_lines(total: int, description: str) -> Iterator[Callable[[int], None]]:
    """The plain-line variant of ``progress_bar``: one line at start, at each 10 % crossed, and at the end."""
    started = time.perf_counter()
    state = {"done": 0, "tenths": 0}
    stage(f"{description}: started ({total} steps)")

    def advance(n: int = 1) -> None:
        state["done"] += n
        tenths = min(10, state["done"] * 10 // max(total, 1))
        if tenths > state["tenths"] and tenths < 10:
            state["tenths"] = tenths
            stage(f"{description}: {10 * tenths} % ({state['done']}/{total}), {time.perf_counter() - started:.1f} s")

    yield advance
    stage(f"{description}: done ({state['done']}/{total}) in {time.perf_counter() - started:.1f} s")
