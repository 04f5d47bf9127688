"""Config hashes and run-folder claims (``io.store``): a run folder belongs to one config (``run.json``: its
hash and values); the same config resumes, another is refused unless forced."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._formats import to_jsonable, write_json


def config_hash(config: Any) -> str:
    """Short stable hash of a config: the key of a cached result."""
    blob = json.dumps(to_jsonable(config), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def write_run_metadata(folder: str | Path, config: Mapping[str, Any], seed: Any) -> Path:
    """``config.json`` with the resolved config, seed and package version."""
    from .. import __version__

    return write_json(Path(folder) / "config.json", {"config": config, "seed": seed, "version": __version__})


RUN_MARKER = "run.json"  # {"config_hash", "config"}: ties a run folder to one config


def ensure_writable(folder: str | Path, name: str = "out") -> Path:
    """Create ``folder`` if needed and check a file can be written there, before any work starts.

    Raises ConfigError naming ``name`` and the user's path when it cannot."""
    from ..core.errors import ConfigError

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError(name, str(folder), f"cannot write there ({exc.strerror or exc})") from None
    return folder


def claim_run_folder(
    folder: str | Path, config: Any, *, force: bool = False, name: str = "out", marker_name: str = RUN_MARKER
) -> bool:
    """Tie ``folder`` to ``config`` (by ``config_hash``) before a run writes into it; True when the folder already
    belongs to this config (resume), False when it is new (or ``force`` takes it over).

    A folder holding another config's run raises ConfigError unless ``force``; so does one holding files but no
    marker, when the marker is the default ``run.json`` (a command with its own ``marker_name`` shares its folder
    with other commands' outputs, e.g. ``results/`` of ``reproduce`` and ``results/practice``)."""
    from ..core.errors import ConfigError

    folder = ensure_writable(folder, name)
    key, marker = config_hash(config), folder / marker_name
    if marker.exists():
        try:
            saved = json.loads(marker.read_text(encoding="utf-8"))
            held, held_config = saved.get("config_hash"), saved.get("config")
        except (ValueError, AttributeError, OSError):
            held = held_config = None
        if held == key:
            return True
        if not force:
            raise ConfigError(
                name,
                str(folder),
                f"holds a run of another config ({differences(held_config, to_jsonable(config))}); "
                "pass --force to overwrite it, or choose another folder",
            )
    elif marker_name == RUN_MARKER and any(p.name != RUN_MARKER for p in folder.iterdir()) and not force:
        raise ConfigError(name, str(folder), "is not empty and holds no sdeformer run; pass --force to write there")
    write_json(marker, {"config_hash": key, "config": config})
    return False


def _short(value: Any, most: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= most else text[: most - 3] + "..."


def differences(held: Any, config: Any) -> str:
    """What differs between a folder's recorded config and this one, for a refusal: ``seed 0 there, 1 here``
    per differing key (both mappings), else the two values."""
    if not isinstance(held, dict) or not isinstance(config, dict):
        return f"{_short(held)} there, {_short(config)} here"
    keys = [k for k in {**held, **config} if held.get(k) != config.get(k)]
    shown = [f"{k} {_short(held.get(k, '(unset)'))} there, {_short(config.get(k, '(unset)'))} here" for k in keys[:4]]
    return "; ".join(shown + ([f"and {len(keys) - 4} more"] if len(keys) > 4 else [])) or "same values"
