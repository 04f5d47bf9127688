"""Figures (matplotlib, Agg backend): ``paper`` draws the paper's Figures 1-6 and single runs (THEORY section 6),
``checks`` the theorem checks (THEORY sections 2-5). Every drawing function writes one PNG atomically.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ..store import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def save_figure(fig: Figure, path: Path, dpi: int = 90) -> Path:
    """PNG bytes rendered in memory, then written atomically."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())
