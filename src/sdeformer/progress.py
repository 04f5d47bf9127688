"""Progress reporting shared by the commands and the reproduce report: a rich bar on stderr (DESIGN: outputs).

Long runs take ``progress(n)`` callbacks; ``progress_bar`` turns one into a bar, or into a no-op when disabled
(``--json`` output, tests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

_console = Console(stderr=True)


@contextmanager
def progress_bar(total: int, description: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr; yields ``advance(n=1)``. Disabled (no output) when not enabled."""
    if not enabled:
        yield lambda n=1: None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=_console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)
