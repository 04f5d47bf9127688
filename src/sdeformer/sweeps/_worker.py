"""The set-up of every Dask worker of the sweep executors (imported with Dask only)."""

from __future__ import annotations

from typing import Any

from distributed import WorkerPlugin


class LoadPlugins(WorkerPlugin):
    """A Dask worker plugin: every worker, also one started later (a restart), loads the driver's plugins
    (``plugins.loaded_plugins``) and tunes its heap (``core._memory``) before its first task."""

    name = "sdeformer-plugins"

    def __init__(self, plugins: tuple[str, ...]):
        self.plugins = plugins

    def setup(self, worker: Any) -> None:
        from ..core._memory import keep_freed_memory
        from ..plugins import load_plugins

        keep_freed_memory()
        load_plugins(self.plugins)
