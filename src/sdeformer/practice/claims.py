"""Output files tied to the settings that produced them (issue "nothing lost").

Folders are tied to a config by ``store.claim_run_folder`` (a ``run.json`` marker). The practice commands
that write one JSON record into a shared folder (``probe --out FILE``, ``infer-practice``'s
``RESULTS/inference.json``) cannot claim the folder: several records of different settings live side by side
there (``make practice`` writes four probes into ``results/practice``). Each record is tied to its own
settings instead: the settings are read back from the record, and another command's settings are refused
unless ``force``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..io.store import config_hash, ensure_writable


def claim_record(
    path: str | Path,
    settings: dict,
    settings_of: Callable[[dict], dict | None],
    what: str,
    *,
    force: bool = False,
    name: str = "out",
) -> Path:
    """Check, before any work, that the JSON record ``path`` may be (re)written with ``settings``.

    A missing file, or one whose ``settings_of(record)`` equals ``settings`` (by ``config_hash``), is fine.
    ``settings_of`` returns None for a record of this kind that carries no settings (written before records
    did): it is taken over. It raises KeyError (or TypeError, ...) for a file that is no such record. A record
    of other settings, or a file that is no such record, raises ConfigError naming ``name`` and the user's
    path unless ``force``. Also checks the folder is writable (``store.ensure_writable``)."""
    path = Path(path)
    ensure_writable(path.parent, name)
    if force or not path.exists():
        return path
    try:
        record: Any = json.loads(path.read_text(encoding="utf-8"))
        held = settings_of(record) if isinstance(record, dict) else False
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        held = False
    if held is False:
        raise ConfigError(name, str(path), f"exists and is not a {what} record; pass --force to overwrite it")
    if held is not None and config_hash(held) != config_hash(settings):
        raise ConfigError(
            name,
            str(path),
            f"holds a {what} of other settings ({config_hash(held)}, these {config_hash(settings)}); "
            "pass --force to overwrite it, or choose another file",
        )
    return path
