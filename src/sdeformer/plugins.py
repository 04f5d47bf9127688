"""Plugins: modules or ``.py`` files whose import registers parts (docs/extending.md, "Using a plugin").

``load_plugins`` imports them (``--plugin FILE`` on every command); ``loaded_plugins`` lists them for the Dask
workers (``sweeps._worker.LoadPlugins``); ``entry_point_plugins`` imports the modules of installed packages'
``sdeformer.plugins`` entry points, once per process, at the first registry lookup. No environment variable.
``run_time_error`` names the plugin, the part and the call behind an exception raised in a plugin's own code
while a command runs (the command line prints it as one line, exit 2). ``limited`` runs a plugin's import and the
first call of each of its parts' methods (``_plugin_checks``) under a time limit (``TIMEOUT_S``) with ``os._exit``
refused; every later call of a part's code has the same limit from a watchdog (``_plugin_watchdog``).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from ._plugin_watchdog import paused
from .core._errors import ConfigError

ENTRY_POINTS = "sdeformer.plugins"  # the package entry-point group whose modules every process loads
_loaded: list[str] = []
_sources: dict[str, str] = {}  # a plugin's source file, or its package's folder -> the plugin as loaded
_entry_points_read = False
TIMEOUT_S = 60.0  # seconds for a plugin's import (``limited``) and for each call of its parts' code (the watchdog)


class PluginStopped(BaseException):
    """Raised inside a plugin's code: by ``limited`` (past its time limit, or a call of ``os._exit``), or by the
    watchdog on every plugin call (``_plugin_watchdog``), then with ``error``, the one line naming the plugin."""

    def __init__(self, message: str, error: ConfigError | None = None):
        super().__init__(message)
        self.error = error


@contextlib.contextmanager
def limited(plugin: str, call: str, seconds: float | None = None) -> Iterator[None]:
    """Run the block (a plugin's import or call) under a time limit (``TIMEOUT_S``; SIGALRM, so in the main
    thread only, and only when no other limit is running) with ``os._exit`` raising instead of ending the process;
    ConfigError naming the plugin and the call for either. Elsewhere the block runs as it is."""
    seconds = TIMEOUT_S if seconds is None else seconds
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with paused():  # the watchdog of every call (``_plugin_watchdog``) gives the timer to this block
        if signal.getitimer(signal.ITIMER_REAL)[0]:
            yield
        else:
            with _limit(plugin, call, seconds):
                yield


@contextlib.contextmanager
def _limit(plugin: str, call: str, seconds: float) -> Iterator[None]:
    """``limited``'s one-shot SIGALRM and ``os._exit`` refused, in the main thread with the timer free."""

    def stop(_signum, _frame):
        raise PluginStopped(f"ran past the plugins' time limit of {seconds:g} s")

    def no_exit(code: int = 0) -> None:
        raise PluginStopped(f"called os._exit({code}), which would end the command with no output")

    exit_, handler = os._exit, signal.signal(signal.SIGALRM, stop)
    os._exit = no_exit  # type: ignore[assignment]
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except PluginStopped as exc:
        raise ConfigError("plugin", plugin, f"{call} {exc}") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
        os._exit = exit_  # type: ignore[assignment]


def load_plugins(plugins: Iterable[str]) -> None:
    """Import each plugin (a module name or a ``.py`` file), whose import registers its parts; the executors
    load ``loaded_plugins()`` on their workers too. Raises ConfigError naming a plugin that cannot be imported
    (any exception, ``sys.exit`` included, at its import; Ctrl-C stays an interrupt)."""
    for plugin in plugins:
        _load(str(plugin))


def loaded_plugins() -> tuple[str, ...]:
    """The plugins loaded in this process by ``load_plugins``, in load order (the executors hand them on)."""
    return tuple(_loaded)


def _load(plugin: str) -> None:
    plugin = str(Path(plugin).resolve()) if plugin.endswith(".py") else plugin
    if plugin in _loaded:
        return
    try:
        with limited(plugin, "import"):
            module = _import(plugin)
    except ConfigError as exc:
        if exc.parameter == "plugin" and exc.value == plugin:
            raise ConfigError("plugin", plugin, f"cannot be imported ({exc.allowed})") from None
        raise ConfigError("plugin", plugin, f"registers a bad part ({exc})") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # an error, sys.exit or GeneratorExit at its import: it cannot be imported
        why = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError("plugin", plugin, f"cannot be imported ({why})") from None
    _loaded.append(plugin)
    source = Path(getattr(module, "__file__", None) or plugin).resolve()
    _sources[str(source.parent if source.name == "__init__.py" else source)] = plugin


def _import(plugin: str):
    if not plugin.endswith(".py"):
        return importlib.import_module(plugin)
    path = Path(plugin)
    spec = importlib.util.spec_from_file_location(f"sdeformer_plugin_{path.stem}", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ImportError(f"no such file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run_time_error(exc: BaseException | None) -> ConfigError | None:
    """``exc`` (or an exception it was raised from) as one line naming the plugin whose own code raised it, the
    registered part (``attention 'NAME'``) and the call sdeformer made into the plugin (its outermost frame), the
    raising line and the exception; None when no loaded plugin's code is in the traceback."""
    if isinstance(exc, PluginStopped) and exc.error is not None:  # the watchdog's line names the call already
        return exc.error
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames = [(tb.tb_frame, tb.tb_lineno) for tb in _tracebacks(exc)]
        own = [(f, line, _owner(f.f_code.co_filename)) for f, line in frames]
        own = [(f, line, plugin) for f, line, plugin in own if plugin is not None]
        if own:
            (outer, _, plugin), (inner, line, _) = own[0], own[-1]
            part = next((p for p in (_part(f) for f, _, _ in reversed(own)) if p), "")
            where = f"{Path(inner.f_code.co_filename).name}:{line}"
            what = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
            call = outer.f_code.co_qualname
            return ConfigError("plugin", plugin, f"{part}failed in {call}() ({where}): {what}")
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return None


def _tracebacks(exc: BaseException):
    tb = exc.__traceback__
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _owner(filename: str) -> str | None:
    """The loaded plugin whose source file (or package folder) holds ``filename``, else None."""
    path = Path(filename).resolve()
    return next((p for s, p in _sources.items() if str(path) == s or path.is_relative_to(s)), None)


def _part(frame) -> str:
    """``'KIND 'NAME' '`` for the registered part whose method (or function) ``frame`` runs, else ''."""
    from .registry import ATTENTIONS, NOISES, NORMS, OBSERVABLES, SOLVERS

    owner = frame.f_locals.get("self", frame.f_locals.get("cls"))
    cls = owner if isinstance(owner, type) else type(owner) if owner is not None else None
    for registry in (NOISES, ATTENTIONS, NORMS, SOLVERS, OBSERVABLES):
        for entry in registry.entries.values():
            target = entry.target
            if isinstance(target, str):
                continue
            if (cls is not None and target is cls) or getattr(target, "__code__", None) is frame.f_code:
                return f"{registry.kind} {entry.name!r} "
    return ""


def entry_point_plugins() -> None:
    """Load the modules of installed packages' ``sdeformer.plugins`` entry points (once per process)."""
    global _entry_points_read
    if _entry_points_read:
        return
    _entry_points_read = True
    from importlib.metadata import entry_points

    load_plugins(ep.value.partition(":")[0] for ep in entry_points(group=ENTRY_POINTS))
