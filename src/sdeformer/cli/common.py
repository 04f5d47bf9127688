"""Shared pieces of the command layer: the typer app, bad-input handling, JSON output (progress bars: ``progress``)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console

from ..core.errors import ConfigError
from ..io.progress import progress_bar  # noqa: F401  (the commands' progress bar)

app = typer.Typer(
    help="sdeformer: deep transformers as interacting particles with common noise (arXiv:2604.26898).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)


def fail(message: str) -> typer.Exit:
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
    from ..io.store import to_jsonable

    sys.stdout.write(json.dumps(to_jsonable(obj)) + "\n")


def job_executor(kind: str, workers: int, scheduler: str | None) -> Any:
    """The sweep executor of ``--executor/--workers/--scheduler`` for commands that run jobs (``sweeps.jobs``):
    ConfigError for a bad choice; the local one leaves torch's threads to the jobs (each sets its own)."""
    from ..sweeps import LocalExecutor, make_executor

    ex = make_executor(kind, workers, scheduler)
    if isinstance(ex, LocalExecutor):
        ex.threads = None
    return ex
