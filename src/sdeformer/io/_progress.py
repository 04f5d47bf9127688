"""Progress reporting shared by the commands and the reproduce report, on stderr (DESIGN: outputs).

Long runs take ``progress(n)`` callbacks; ``progress_bar`` turns one into a rich bar when stderr is a terminal,
or into plain lines (start, every 10 %, done, each with the elapsed time) when stderr goes to a file or a pipe,
so that ``make demo > log`` shows where the run is; when disabled (``--json`` output, tests) nothing is written
but a transient bar on a terminal. A long step between two such lines gets a ``still running`` line every
``HEARTBEAT_S`` seconds (``keep_alive``, also for a stage without a bar). ``stage`` prints one plain line per
stage of a long command ("figure 2: relu MLP ... 12.3 s"), stamped with ``elapsed()``, the one clock of a
command's wall time (seconds since the process started).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_STARTED = time.perf_counter()
HEARTBEAT_S = 10.0  # the longest a plain-line progress stays silent
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


def clock_start() -> float:
    """The ``time.perf_counter()`` of the process start, where ``elapsed()`` counts from."""
    return _STARTED


def elapsed() -> float:
    """Seconds since the process started: the clock of every stage line and of a command's wall time."""
    return time.perf_counter() - _STARTED


def stage(text: str, at: float | None = None) -> None:
    """One line ``[  12.3 s] text`` on stderr (``at``, else ``elapsed()``); silent under ``--json``."""
    if not _quiet:
        _line(f"[{elapsed() if at is None else at:7.1f} s] {text}")
        _last_line[0] = time.perf_counter()


_last_line = [time.perf_counter()]  # when the last stage line was printed (the heartbeat's reference)


@contextmanager
def keep_alive(description: str, status: Callable[[], str] = lambda: "") -> Iterator[None]:
    """While the block runs, print ``description: still running STATUS, T s`` whenever no stage line has been
    printed for ``HEARTBEAT_S`` seconds (a daemon thread; nothing on a terminal's bar or under ``--json``)."""
    if _quiet:
        yield
        return
    started, done = time.perf_counter(), threading.Event()

    def beat() -> None:
        while not done.wait(max(0.0, _last_line[0] + HEARTBEAT_S - time.perf_counter())):
            if time.perf_counter() - _last_line[0] >= HEARTBEAT_S and not done.is_set():
                stage(f"{description}: still running{status()}, {time.perf_counter() - started:.1f} s")

    thread = threading.Thread(target=beat, name="sdeformer-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@contextmanager
def progress_bar(total: int, description: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n=1)``: a rich bar on a terminal, plain lines otherwise. Not ``enabled`` (``--json``):
    nothing written, stage lines silent too, except a transient bar on a terminal (gone when done: a person
    watching a long ``--json`` run sees it move, and a pipe or a file gets nothing)."""
    global _quiet
    terminal = _rich_console().is_terminal
    if enabled and not terminal:
        yield from _plain_lines(total, description)
        return
    quiet = 0 if enabled else 1  # disabled: stage lines silent too
    _quiet += quiet
    try:
        if terminal and total > 0:
            with _rich_bar(total, description) as advance:
                yield advance
        else:
            yield lambda n=1: None
    finally:
        _quiet -= quiet


@contextmanager
def _rich_bar(total: int, description: str) -> Iterator[Callable[[int], None]]:
    """A transient rich bar on the stderr terminal: description, bar, done/total, elapsed, remaining."""
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

    with keep_alive(description, lambda: f" ({state['done']}/{total})"):
        yield advance
    stage(f"{description}: done ({state['done']}/{total}) in {time.perf_counter() - started:.1f} s")
