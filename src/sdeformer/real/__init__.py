"""A real pretrained transformer held against the theory (THEORY sections 1, 2 and 5; BEYOND section 1).

``load`` finds a local model's sublayers and captures the stream, the attention's and the MLP's outputs;
``stats``, ``kernel`` and ``attention`` measure them per layer; ``synthetic`` runs the stochastic transformer and
recovers its parameters with the same estimators; ``measure`` and ``write`` make the record, its files and its
report section. The library never imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .measure import measure
    from .write import report_section, run_and_write

__all__ = ["measure", "report_section", "run_and_write"]


def __getattr__(name: str):
    if name == "measure":
        from .measure import measure

        return measure
    if name in ("report_section", "run_and_write"):
        from . import write

        return getattr(write, name)
    raise AttributeError(name)
