"""Shared pieces of the command layer: the typer app, bad-input handling, JSON output (progress bars: ``progress``).

Every refusal is one line on stderr, ``error: ...``: bad input (``ConfigError``), an unreadable or unwritable
path (``OSError``: the message names the command's parameter that holds the path), the parser's own refusals
(an unknown option, a missing or malformed value: ``OneLineGroup``, exit 2) and Ctrl-C (exit 130, saying that a
rerun resumes). Help is click's plain text (``rich_markup_mode=None``): no boxes, no type column for flags,
paragraphs rewrapped to the terminal. The options of the hand-written commands (``reproduce``, ``sweep run``)
that several share are written once, here: the job options (``job_options``) and ``--plugin``, each given to a
command as one argument by ``option_group``; every other command is generated (``cli._generate``).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

import typer
from rich.console import Console
from typer.core import TyperGroup

from ..core._errors import ConfigError
from ..io._progress import progress_bar  # noqa: F401  (the commands' progress bar)

try:  # typer >= 0.23 ships its own copy of click
    from typer._click import exceptions as click_errors  # pyright: ignore[reportMissingImports]
except ImportError:  # older typer runs on click itself
    from click import exceptions as click_errors  # pyright: ignore[reportMissingImports]

INTERRUPTED = "interrupted; rerun the same command to resume (finished parts are kept)"
GENERATED: dict[str, Any] = {}  # name -> the generated experiment command, as listed (``cli._generate``)


class OneLineGroup(TyperGroup):
    """The top-level group: the parser's refusals print as one line ``error: ... (see CMD --help)`` with their
    exit code (2) instead of click's usage, hint and error block. It lists the generated experiment commands
    (``GENERATED``) after its own and builds the one asked for when it runs (``cli._generate.LazyCommand``); a
    name that a ``--plugin FILE`` among the arguments registers is found once that file is loaded."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._add_generated()

    def _add_generated(self) -> None:
        from ._generate import experiment_commands

        experiment_commands()  # the experiments registered since (a plugin's) too
        self.commands.update({n: c for n, c in GENERATED.items() if n not in self.commands})

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and "--plugin" in args:
            from ..plugins import load_plugins

            load_plugins(a for a, flag in zip(args[1:], args) if flag == "--plugin")
            self._add_generated()
        name, command, rest = super().resolve_command(ctx, args)
        build = getattr(command, "build", None)  # a generated command: made now
        return name, build() if build is not None else command, rest

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click_errors.NoArgsIsHelpError as exc:  # a bare group: its help, as click prints it
            exc.show()
            sys.exit(exc.exit_code)
        except click_errors.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
            fail(" ".join(exc.format_message().split()) + hint)
            sys.exit(exc.exit_code)
        except typer.Abort:
            err_console.print(f"error: {INTERRUPTED}", highlight=False, soft_wrap=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=OneLineGroup,
    help="sdeformer: deep transformers as interacting particles with common noise (arXiv:2604.26898).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"max_content_width": 120},
)
err_console = Console(stderr=True)


@app.callback()
def limits(
    ctx: typer.Context,
    max_memory: str | None = typer.Option(
        None,
        "--max-memory",
        help="refuse any command whose memory estimate exceeds this (e.g. 8G; env SDEFORMER_MAX_MEMORY) "
        "[the memory available now]",
    ),
) -> None:
    """The limits every command checks before it allocates (``core._validate.memory_limit``)."""
    if max_memory is None:
        return
    from ..core._validate import MEMORY_ENV, memory_size  # imports torch: only when the option is given

    try:
        size = memory_size("--max-memory", max_memory)
    except ConfigError as exc:
        raise typer.BadParameter(exc.allowed, param_hint="--max-memory") from None
    held = os.environ.get(MEMORY_ENV)
    os.environ[MEMORY_ENV] = str(size)
    ctx.call_on_close(lambda: os.environ.pop(MEMORY_ENV) if held is None else os.environ.update({MEMORY_ENV: held}))


def fail(message: str) -> typer.Exit:
    """Print a one-line error and return the exit (code 2) to raise."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code=2)


def path_parameter(filename: Any, params: Mapping[str, Any]) -> str | None:
    """The name of the command parameter whose path ``filename`` is, or lies in, or lies on the way to (its
    folder could not be made); the deepest such path when several do; None if none does."""
    if not filename:
        return None
    target = Path(str(filename)).absolute()
    paths = {n: v.absolute() for n, v in params.items() if isinstance(v, Path)}
    near = [n for n, v in paths.items() if v == target or v in target.parents or target in v.parents]
    return max(near, key=lambda n: len(paths[n].parts), default=None)


def cli_errors(fn: Callable) -> Callable:
    """Turn bad input (ConfigError, OSError on inputs and outputs) and an exception (or ``sys.exit``) raised in a
    plugin's own code (``plugins.run_time_error``: the plugin, the part and the call) into one line on stderr and
    exit code 2, and Ctrl-C into one line saying that a rerun resumes (exit 130)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ConfigError as exc:
            raise fail(str(exc)) from None
        except OSError as exc:  # unreadable input, unwritable output folder, full disk, a damaged file
            why = str(exc) if exc.strerror is None else exc.strerror
            name = path_parameter(exc.filename, kwargs)
            if name is None:
                raise fail(f"cannot read or write {exc.filename!r}: {why}") from None
            named = ConfigError(name, str(kwargs[name]), f"cannot read or write {exc.filename!r} ({why})")
            raise fail(str(named)) from None
        except KeyboardInterrupt:
            err_console.print(f"error: {INTERRUPTED}", highlight=False, soft_wrap=True)
            raise typer.Exit(code=130) from None
        except BaseException as exc:  # raised in (or stopped by a limit on) a plugin's own code: one line; else a bug
            from ..plugins import run_time_error

            named = None if isinstance(exc, (typer.Exit, typer.Abort)) else run_time_error(exc)
            if named is None:
                raise
            raise fail(str(named)) from None

    return wrapper


def emit_json(obj: Any) -> None:
    """Print one JSON object on stdout."""
    from ..io._formats import to_jsonable

    sys.stdout.write(json.dumps(to_jsonable(obj)) + "\n")


def option_group(target: str, build: Callable[..., Any], options: Mapping[str, tuple[Any, Any]]) -> Callable:
    """Decorator: give a command the typer ``options`` (``{name: (annotation, typer.Option(...))}``); the command
    receives them as one argument ``target`` = ``build(**values)``, and its ``--help`` lists them after its own."""
    params = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)
        for name, (annotation, option) in options.items()
    ]

    def decorate(command: Callable) -> Callable:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != target]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in options}
            return command(*args, **{target: build(**values)}, **kwargs)

        shown = signature.replace(parameters=[*own, *params])
        cast(Any, wrapper).__signature__ = shown  # what typer reads (``inspect.signature``)
        wrapper.__annotations__ = {p.name: p.annotation for p in shown.parameters.values()} | {"return": None}
        return wrapper

    return decorate


def job_options(executor_help: str) -> Callable[[Callable], Callable]:
    """Decorator: give a command the options --executor, --workers and --scheduler (declared once:
    ``experiments._commands.options.jobs``); the command receives them as one ``jobs`` dict, listed last."""
    from ..experiments._commands.options import jobs

    options = {p.name: (p.kind | None, typer.Option(p.default, help=p.doc)) for p in jobs(executor_help)}
    return option_group("jobs", dict, options)


def plugin_option() -> Any:
    """``--plugin FILE|MODULE`` (repeatable): a plugin whose import registers parts (docs/extending.md); loaded
    with ``plugins.load_plugins`` before the command reads its config, and on every Dask worker."""
    return typer.Option(None, "--plugin", metavar="FILE", help="a .py file or module registering parts (repeatable)")
