"""Commands generated from the experiment registry: ``sdeformer NAME`` for every registered experiment
(``experiments.EXPERIMENTS``; docs/extending.md).

``experiment_command(experiment)`` builds the command from the entry alone: one ``--NAME`` per declared setting
(``Experiment.params``, a tuple of ``params.Param``: its type, its doc as the help, its default shown once, and
the quick size's value beside it where the experiment has one, ``Experiment.quick``), then ``--out`` (default
``results/NAME``: never the full report's page), ``--seed``, ``--quick``, ``--force``, ``--set NAME=VALUE``
(the same settings by name), ``--json`` where the entry has a ``summary``, and ``--plugin FILE`` (the user's own
file, imported before the run, as ``reproduce --plugin``). A setting given is checked against its declaration
(one line naming it, exit 2) and reaches the run function as ``ctx.settings``; a setting not given is not
passed, so the experiment's own (or quick) size applies and its cache key is unchanged. An entry with a
``command`` of its own (``Experiment.command``: train, rates, peer, ...) gets its declared settings as options
(the first ``arguments`` positional, a required one where its default is ``...``), ``--json`` and ``--plugin``
(``command_callback``).

The commands are listed in ``sdeformer --help`` by their doc and built when run (``LazyCommand``): the modules
that declare the settings (which may import torch) are imported by ``sdeformer NAME`` only, never by the
top-level ``--help``. ``sdeformer NAME --plugin FILE`` also runs an experiment that FILE registers.
"""

from __future__ import annotations

import enum
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import typer
from typer.core import TyperCommand
from typer.models import ParameterInfo

from ..experiments._registry import EXPERIMENTS, Experiment
from ..params import Param
from ._common import GENERATED, app, cli_errors, plugin_option

OWN = ("out", "seed", "quick", "force", "setting", "json", "plugin")  # the options every generated command has


def with_default(text: str, default: str) -> str:
    """``text`` with its default at the end, ``[default: X]`` with no-break spaces (click never wraps inside)."""
    return f"{text.rstrip()}  [default:\u00a0{default.replace(' ', chr(160))}]"


# "help text [64]", "help [300; quick: 20]", "help (default: relu, silu)": a default written in the help text
_BRACKET = re.compile(r"\s*(?:\[([^\[\]]+)\]|\(default:? ([^()]*(?:\([^()]*\)[^()]*)*)\))\s*$")


def _default_text(info: ParameterInfo) -> str | None:
    """The default ``--help`` shows for an option: typer's own, 'off' for a False flag, the '[...]' at the end of
    the help text of a None default (taken out of the text) or 'unset'; None for an option that shows none."""
    if info.show_default is False or info.default is ...:  # ...: a required option (click says so)
        return None
    if isinstance(info.show_default, str):
        return info.show_default
    if isinstance(info.default, bool):
        return "on" if info.default else "off"
    if info.default is None:
        match = _BRACKET.search(info.help or "")
        if not match:
            return "unset"
        info.help = (info.help or "")[: match.start()]
        return match.group(1) or match.group(2)
    return str(info.default.value if isinstance(info.default, enum.Enum) else info.default)


def _typers(root: typer.Typer) -> list[typer.Typer]:
    found = [root]
    for group in root.registered_groups:
        if group.typer_instance is not None:
            found += _typers(group.typer_instance)
    return found


def show_all_defaults(root: typer.Typer = app) -> None:
    """Give every option of every command its default at the end of its help text, ``[default: X]`` with a
    no-break space (click's wrapping keeps it whole), instead of click's ``[default: (X)]`` for a text
    default; see ``_default_text``."""
    for sub in _typers(root):
        for command in sub.registered_commands:
            if command.callback is None:
                continue
            for param in inspect.signature(command.callback).parameters.values():
                info: Any = param.default
                if isinstance(info, ParameterInfo):
                    text = _default_text(info)
                    if text is not None:
                        info.help = with_default(info.help or "", text)
                        info.show_default = False


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _parameter(name: str, annotation: Any, option: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)


def setting_options(params: Iterable[Param], quick: Mapping[str, Any] | None = None) -> dict[str, tuple[Any, Any]]:
    """One ``--NAME`` per declared setting, unset (None) by default: its help the doc, then the default (a None
    default: the doc's closing ``[...]``, or "unset") and the quick value where ``quick`` has one."""
    quick = quick or {}
    out = {}
    for p in params:
        flag = p.name.replace("_", "-")
        pair = p.kind is bool and p.default is not False and not flag.startswith("no-")  # on, or unset: --no-X too
        flags = (f"--{flag}/--no-{flag}",) if pair else (f"--{flag}",)
        doc, shown = p.doc or p.name, _shown(p.default)
        if p.default is None:  # the doc's closing [...] or (default: ...) says what unset means
            match = _BRACKET.search(doc)
            doc, shown = (doc[: match.start()], match.group(1) or match.group(2)) if match else (doc, "unset")
        shown += f"; quick: {_shown(quick[p.name])}" if p.name in quick else ""
        if p.default is ...:  # a required option
            out[p.name] = (p.kind, typer.Option(..., *flags, help=doc))
            continue
        item = getattr(p.kind, "__args__", None)  # a repeatable option: its item's type as the metavar
        metavar = f"<{item[0].__name__}>" if item else None
        option = typer.Option(None, *flags, metavar=metavar, help=with_default(doc, shown), show_default=False)
        out[p.name] = (p.kind | None, option)
    return out


def _own_options(experiment: Experiment) -> list[inspect.Parameter]:
    """--out, --seed, --quick, --force, --set, --json (where the entry has a summary) and --plugin."""
    name = experiment.name

    def option(default: Any, text: str, *flags: str, shown: str = "none") -> Any:
        shown = shown if default is None else _shown(default)
        metavar = {"--set": "NAME=VALUE", "--plugin": "FILE"}.get(flags[0] if flags else "")
        return typer.Option(default, *flags, metavar=metavar, help=with_default(text, shown), show_default=False)

    own = {
        "out": (Path, option(Path("results") / name, "output folder (cached parts are reused: resumable)")),
        "seed": (int, option(0, "seed of the simulated runs")),
        "quick": (bool, option(False, "smaller sizes where the experiment has them")),  # --quick/--no-quick
        "force": (bool, option(False, "write into a folder that holds another seed's reproduction")),
        "setting": (list[str] | None, option(None, "a declared setting by name", "--set", shown="none")),
        "json": (bool, option(False, "print the experiment's result as one JSON object", "--json")),
        "plugin": (list[str] | None, plugin_option()),
    }
    return [_parameter(n, a, o) for n, (a, o) in own.items() if _applies(n, experiment)]


def _applies(option: str, experiment: Experiment) -> bool:
    """--json only where the entry has a summary, --set only where it declares settings."""
    return {"json": bool(experiment.summary), "setting": bool(experiment.params)}.get(option, True)


def _given(value: Any) -> bool:
    return value is not None and value != [] and value != ()


def command_callback(experiment: Experiment) -> Any:
    """The typer callback of an entry with a ``command`` of its own (``Experiment``): its declared settings as
    options (the first ``arguments`` positional), ``--json`` and ``--plugin``; the body gets every setting (given,
    else declared) and ``json``, and its result is printed by ``show`` or as one JSON object."""
    from ._common import emit_json

    declared = experiment.declared()
    positional = declared[: experiment.arguments]

    def command(**values: Any) -> None:
        from ..plugins import load_plugins

        load_plugins(values.pop("plugin") or ())
        s = {p.name: values[p.name] if _given(values[p.name]) else p.default for p in declared}
        result = experiment.call("command", s | {"json": values["json"]})
        if values["json"]:
            emit_json(result.to_json() if hasattr(result, "to_json") else result)
        elif experiment.show:
            experiment.call("show", result, s)
        if experiment.exit_code and experiment.call("exit_code", result):
            raise typer.Exit(code=experiment.call("exit_code", result))

    arguments = [_parameter(p.name, p.kind, typer.Argument(p.default, help=p.doc)) for p in positional]
    options = setting_options(declared[experiment.arguments :])
    own = {"json": (bool, typer.Option(False, "--json", help="print one JSON object")),
           "plugin": (list[str] | None, plugin_option())}  # fmt: skip
    return _signed(command, experiment, [*arguments, *(_parameter(n, a, o) for n, (a, o) in (options | own).items())])


def _signed(command: Callable, experiment: Experiment, parameters: list[inspect.Parameter]) -> Any:
    """``command`` with the typer signature ``parameters``, named and documented as ``experiment``."""
    signature = inspect.Signature(parameters)
    cast(Any, command).__signature__ = signature  # what typer reads
    command.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()} | {"return": None}
    command.__name__ = experiment.name
    command.__doc__ = (
        experiment.doc if experiment.command else f"{experiment.doc} (as sdeformer reproduce {experiment.name})"
    )
    return cli_errors(command)


def experiment_command(experiment: Experiment) -> Any:
    """The typer callback of ``sdeformer NAME`` for a registered experiment (module docstring)."""
    if experiment.command:
        return command_callback(experiment)
    from ._reproduce import print_summary, run_part

    declared = [p.name for p in experiment.declared()]
    words = {p.name for p in experiment.declared() if p.kind is str}  # a str setting keeps its text: --set dims=3
    name, quick = experiment.name, experiment.quick_values()

    def command(**values: Any) -> None:
        from ..core._config_files import parse_assignments
        from ..experiments._commands.options import executor
        from ..plugins import load_plugins

        load_plugins(values["plugin"] or ())
        items = values.get("setting") or ()
        given = parse_assignments(items, "set", dotted=False)
        texts = {k.strip(): v.strip() for k, _, v in (item.partition("=") for item in items)}
        given |= {k: texts[k] for k in words & given.keys() if not isinstance(given[k], str)}
        given |= {k: values[k] for k in declared if values[k] is not None}  # an option wins over --set
        out = values["out"]
        jobs = executor({"executor": "local", "workers": 2, "scheduler": None})
        run_part(name, out, values["seed"], values["quick"], jobs, values["force"], given)
        if values.get("json"):
            print_summary(out / experiment.summary)

    clash = [p.name for p in experiment.declared() if p.name in OWN]
    if clash:
        raise typer.BadParameter(f"declared settings {clash} of {name} clash with the command's own options")
    settings = [_parameter(n, a, o) for n, (a, o) in setting_options(experiment.declared(), quick).items()]
    return _signed(command, experiment, [*settings, *_own_options(experiment)])


class LazyCommand(TyperCommand):
    """A command as ``sdeformer --help`` lists it (its doc); ``build()`` makes the command itself from the callback
    that ``callback()`` returns (which may import the modules that declare its settings)."""

    def __init__(self, name: str, doc: str, callback: Callable[[], Callable], short: bool = True) -> None:
        super().__init__(name, help=doc, short_help=doc if short else None)  # None: click's first words
        self.callback_factory = callback

    def build(self) -> Any:
        one = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
        one.command(self.name)(self.callback_factory())
        show_all_defaults(one)
        return typer.main.get_command(one)


def lazy_command(name: str, doc: str, callback: Callable[[], Callable], short: bool = True) -> None:
    """Register ``sdeformer NAME``, listed by ``doc`` (``short``: whole) and built from ``callback()`` when run
    (``LazyCommand``)."""
    GENERATED[name] = LazyCommand(name, doc, callback, short)


def experiment_commands() -> list[str]:
    """``sdeformer NAME`` for every registered experiment without a command of its own (``spde`` and ``real``
    have theirs), listed lazily (``LazyCommand``); returns the names added."""
    taken = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    added = [e.name for e in EXPERIMENTS if e.name not in taken and e.name not in GENERATED and " " not in e.name]
    for name in added:
        e = EXPERIMENTS[name]
        lazy_command(name, e.doc, lambda name=name: experiment_command(EXPERIMENTS[name]), not e.command)
    return added
