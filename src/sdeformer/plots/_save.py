"""Saving a figure: PNG bytes rendered in memory, written atomically (the one module of ``plots`` that every
drawing module shares; ``plots``' own ``__init__`` imports no matplotlib, so that the figure names of ``names`` cost
nothing to import)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt

from ..io._atomic import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def save_figure(fig: Figure, path: Path, dpi: int = 90, tight: bool | None = None) -> Path:
    """PNG bytes rendered in memory, then written atomically.

    ``tight`` crops to the drawn content (``bbox_inches="tight"``: one extra draw, seconds for a many-panel
    figure); by default figures without a layout engine are cropped. Figures placed with ``fixed_layout``
    (margins in inches) pass ``tight=False``.
    """
    if tight is None:
        tight = fig.get_layout_engine() is None
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight" if tight else None)
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())


def fixed_layout(
    fig: Figure, left: float, right: float, top: float, bottom: float, hspace: float = 0.0, wspace: float = 0.0
) -> None:
    """Place the subplots with margins and gaps in inches (no layout pass; save with ``tight=False``)."""
    w, h = fig.get_size_inches()
    spec = fig.axes[0].get_subplotspec() if fig.axes else None
    rows, cols = spec.get_gridspec().get_geometry() if spec is not None else (1, 1)
    panel_w = (w - left - right - wspace * (cols - 1)) / cols
    panel_h = (h - top - bottom - hspace * (rows - 1)) / rows
    fig.subplots_adjust(
        left=left / w,
        right=1 - right / w,
        top=1 - top / h,
        bottom=bottom / h,
        wspace=wspace / panel_w,
        hspace=hspace / panel_h,
    )
