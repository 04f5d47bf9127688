"""The content of a run's input files, for the keys that tie result folders to their inputs (DESIGN: outputs).

A result folder is tied to its config by ``io._claims.claim_run_folder`` and a sweep folder to its spec; both
name files by path. ``input_digests(config)`` adds the sha256 of what those paths hold at the time of the run:
every loaded plugin (its ``.py`` file, or every ``.py`` file of its package) and every file a config names under
``FILE_KEYS`` (``x0`` tokens, a ``mask`` file), so that an input edited in place gives another key: the folder is
refused in one line (or recomputed with ``--force``), never returned stale. Empty when a run reads no file (the
keys of such runs are unchanged).
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FILE_KEYS = ("x0", "mask")  # config fields whose value may name a file the run reads


def file_digest(path: Path) -> str:
    """The sha256 of a regular file's bytes (16 hex digits); of a folder, of its ``.py`` files in order."""
    digest = hashlib.sha256()
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    for f in files:
        digest.update(f.relative_to(path).as_posix().encode() if path.is_dir() else b"")
        digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


def _plugin_source(plugin: str) -> Path | None:
    if plugin.endswith(".py"):
        return Path(plugin)
    try:
        spec = importlib.util.find_spec(plugin)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return None
    origin = Path(spec.origin)
    return origin.parent if origin.name == "__init__.py" else origin


def _named_files(value: Any, found: dict[str, Path]) -> None:
    """The files named under ``FILE_KEYS`` anywhere in a (nested) config mapping or list."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            names = [item] if isinstance(item, str) else item if isinstance(item, (list, tuple)) else []
            for name in names if key in FILE_KEYS else []:
                path = Path(name.partition("#")[0]) if isinstance(name, str) and name else None
                if path is not None and path.is_file():
                    found[f"{key}:{path.resolve()}"] = path
            if key not in FILE_KEYS:
                _named_files(item, found)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _named_files(item, found)


def input_digests(config: Any) -> dict[str, str]:
    """{"plugin:NAME" or "KEY:PATH": sha256} of the loaded plugins and the files ``config`` names."""
    from ..plugins import loaded_plugins

    found: dict[str, Path] = {}
    for plugin in loaded_plugins():
        source = _plugin_source(plugin)
        if source is not None and source.exists():
            found[f"plugin:{plugin}"] = source
    _named_files(config, found)
    return {key: file_digest(path) for key, path in sorted(found.items())}
