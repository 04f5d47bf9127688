"""The shared base of the typed experiment results (DESIGN: outputs).

Every experiment returns a frozen dataclass derived from ``Result``; ``to_json()`` is the JSON object its
``run_and_write`` writes and its command prints with ``--json``. Large arrays stay out of it (they go to .npz).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from ..store import to_jsonable


@dataclass(frozen=True)
class Result:
    """Base of the results. ``JSON_KEYS`` names the fields and properties of ``to_json()`` (empty: all fields)."""

    JSON_KEYS: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (tensors and arrays as lists, nested results as their ``to_json()``)."""
        keys = self.JSON_KEYS or tuple(f.name for f in fields(self))
        return {k: to_jsonable(getattr(self, k)) for k in keys}
