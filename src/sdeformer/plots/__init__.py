"""Figures (matplotlib; the ``sdeformer`` entry point selects the off-screen Agg backend, never an import):
``paper`` draws the paper's Figures 1-6 and single runs (THEORY section 6),
``checks`` the theorem checks (THEORY sections 2-5). Every drawing function writes one PNG atomically.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt

from .._lazy import lazy_exports
from ..io._atomic import atomic_write_bytes

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._architectures import architecture_figures
    from ._beyond import write_figures
    from ._checks import energy_figure, lyapunov_figure, phase_figure, rate_figure, theorem_figures
    from ._ode import order_figure
    from ._paper import energy_plot, grid_figure
    from ._practice import inference_figure, methods_figure, probe_figure
    from ._real import attention_figure, kernel_figure, share_figure, statistics_figure
    from ._spde import report_figures, run_figure

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)


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
