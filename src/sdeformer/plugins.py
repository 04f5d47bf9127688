"""Plugins: modules or ``.py`` files whose import registers parts (docs/extending.md, "Using a plugin").

``load_plugins`` imports them (``--plugin FILE`` on every command); ``loaded_plugins`` lists them for the Dask
workers (``sweeps.worker.LoadPlugins``); ``entry_point_plugins`` imports the modules of installed packages'
``sdeformer.plugins`` entry points, once per process, at the first registry lookup. No environment variable.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path

from .core.errors import ConfigError

ENTRY_POINTS = "sdeformer.plugins"  # the package entry-point group whose modules every process loads
_loaded: list[str] = []
_entry_points_read = False


def load_plugins(plugins: Iterable[str]) -> None:
    """Import each plugin (a module name or a ``.py`` file), whose import registers its parts; the executors
    load ``loaded_plugins()`` on their workers too. Raises ConfigError naming a plugin that cannot be imported
    (an error or ``sys.exit`` at its import)."""
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
        if plugin.endswith(".py"):
            path = Path(plugin)
            spec = importlib.util.spec_from_file_location(f"sdeformer_plugin_{path.stem}", path)
            if spec is None or spec.loader is None or not path.is_file():
                raise ImportError(f"no such file {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            importlib.import_module(plugin)
    except ConfigError as exc:
        raise ConfigError("plugin", plugin, f"registers a bad part ({exc})") from None
    except (Exception, SystemExit) as exc:
        raise ConfigError("plugin", plugin, f"cannot be imported ({type(exc).__name__}: {exc})") from None
    _loaded.append(plugin)


def entry_point_plugins() -> None:
    """Load the modules of installed packages' ``sdeformer.plugins`` entry points (once per process)."""
    global _entry_points_read
    if _entry_points_read:
        return
    _entry_points_read = True
    from importlib.metadata import entry_points

    load_plugins(ep.value.partition(":")[0] for ep in entry_points(group=ENTRY_POINTS))
