"""Run folders tied to one config (DESIGN: outputs): ``claim_run_folder`` writes ``run.json`` (the config, the
content hashes of the files it reads, ``io._inputs``, and its hash, with its sha256 file) before a run writes into
a folder, so that a rerun of the same config and inputs resumes and another is refused instead of mixing two runs'
files. A ``run.json`` that fails its checksum, cannot
be parsed or whose hash does not match its own config is damaged: it is moved into ``damaged/`` and the folder
counts as holding no run (refused unless ``force``, which recomputes there)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._atomic import ensure_writable
from ._checksums import CHECKSUMS, Damaged
from ._damage import DAMAGED, move_aside
from ._formats import read_json, to_jsonable, write_json
from ._hashing import config_hash, differences
from ._inputs import input_digests
from ._lock import LOCK_FILE

RUN_MARKER = "run.json"  # {"config_hash", "config"}: ties a run folder to one config
BOOKKEEPING = (CHECKSUMS, DAMAGED, LOCK_FILE)  # the store's own entries: a folder holding only them is empty


def write_run_metadata(folder: str | Path, config: Mapping[str, Any], seed: Any) -> Path:
    """``config.json`` with the resolved config, seed and package version."""
    from .. import __version__

    return write_json(Path(folder) / "config.json", {"config": config, "seed": seed, "version": __version__})


def read_marker(marker: Path) -> tuple[Any, Any]:
    """(hash, config) recorded in a run folder's marker; ``Damaged`` when it fails its checksum, is not a JSON
    object or records a hash that is not its config's."""
    saved = read_json(marker)
    if not isinstance(saved, dict) or "config_hash" not in saved:
        raise Damaged(marker, "holds no config_hash")
    held, held_config = saved.get("config_hash"), saved.get("config")
    if held != config_hash(held_config):
        raise Damaged(marker, f"its config_hash {held!r} is not the hash of the config it records")
    return held, held_config


def claim_run_folder(
    folder: str | Path, config: Any, *, force: bool = False, name: str = "out", marker_name: str = RUN_MARKER
) -> bool:
    """Tie ``folder`` to ``config`` (by ``config_hash``) before a run writes into it; True when the folder already
    belongs to this config (resume), False when it is new (or ``force`` takes it over).

    A folder holding another config's run raises ConfigError unless ``force``; so does one holding files but no
    marker (or a damaged one, moved aside), when the marker is the default ``run.json`` (a command with its own
    ``marker_name`` shares its folder with other commands' outputs, e.g. ``results/`` of ``reproduce``)."""
    from ..core._errors import ConfigError

    folder = ensure_writable(folder, name)
    inputs = input_digests(config)  # the content of its plugin and token files: an edited one is another run
    config = {**to_jsonable(config), "inputs": inputs} if inputs else config
    key, marker = config_hash(config), folder / marker_name
    damaged = ""
    if marker.exists():
        try:
            held, held_config = read_marker(marker)
        except Damaged as damage:
            move_aside(damage, folder)
            damaged = f"its {marker_name} was damaged (moved to {DAMAGED}/), so it holds no known run"
        except OSError as exc:
            raise ConfigError(name, str(folder), f"cannot read its {marker_name} ({exc.strerror or exc})") from None
        else:
            if held == key:
                return True
            if not force:
                raise ConfigError(
                    name,
                    str(folder),
                    f"holds a run of another config ({differences(held_config, to_jsonable(config))}); "
                    "pass --force to overwrite it, or choose another folder",
                )
    others = any(p.name not in (marker_name, *BOOKKEEPING) for p in folder.iterdir())
    if marker_name == RUN_MARKER and others and not force:
        held_none = damaged or "is not empty and holds no sdeformer run"
        raise ConfigError(name, str(folder), f"{held_none}; pass --force to write there")
    write_json(marker, {"config_hash": key, "config": config}, checksum=True)
    return False
