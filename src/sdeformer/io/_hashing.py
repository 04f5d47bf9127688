"""Config hashes (DESIGN: outputs): the key that ties a cached result or a run folder to its settings, and the
one-line account of what differs between two configs for a refusal."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ._formats import to_jsonable


def config_hash(config: Any) -> str:
    """Short stable hash of a config: the key of a cached result."""
    blob = json.dumps(to_jsonable(config), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


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
