"""Shared pieces of the command layer: the typer app, bad-input handling, JSON output, progress."""

from __future__ import annotations

import functools
import json
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..errors import ConfigError
from ..store import to_jsonable

app = typer.Typer(
    help="sdeformer: deep transformers as interacting particles with common noise (arXiv:2604.26898).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)


def fail(message: str) -> "typer.Exit":
    """Print a one-line error and return the exit (code 2) to raise."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code=2)


def cli_errors(fn: Callable) -> Callable:
    """Turn bad input (ConfigError, ValueError, OSError on inputs) into one line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ConfigError as exc:
            raise fail(str(exc)) from None
        except OSError as exc:  # unreadable input, unwritable output folder, full disk
            raise fail(f"cannot read or write {exc.filename!r}: {exc.strerror or exc}") from None

    return wrapper


def emit_json(obj: Any) -> None:
    """Print one JSON object on stdout."""
    sys.stdout.write(json.dumps(to_jsonable(obj)) + "\n")


@contextmanager
def progress_bar(total: int, description: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr; yields ``advance(n=1)``. Disabled (no output) when not enabled."""
    if not enabled:
        yield lambda n=1: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)
