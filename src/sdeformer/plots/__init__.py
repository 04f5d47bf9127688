"""Figures (matplotlib; the ``sdeformer`` entry point selects the off-screen Agg backend, never an import):
``paper`` draws the paper's Figures 1-6 and single runs (THEORY section 6),
``checks`` the theorem checks (THEORY sections 2-5). Every drawing function writes one PNG atomically
(``save_figure``). ``FIGURES`` is the figure registry keyed by experiment: the plots own their figures' names and
import no experiment; the layer above (experiments, cli) draws, and hands the real and practice reports the drawing
functions they need (``real_figures``, ``PRACTICE_FIGURES``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._architectures import architecture_figures
    from ._beyond import write_figures
    from ._checks import energy_figure, lyapunov_figure, phase_figure, rate_figure, theorem_figures
    from ._names import FIGURES, SYNC_PANELS
    from ._ode import order_figure
    from ._paper import energy_plot, grid_figure
    from ._practice import PRACTICE_FIGURES, inference_figure, methods_figure, probe_figure
    from ._real import attention_figure, kernel_figure, models_figure, real_figures, share_figure, statistics_figure
    from ._save import fixed_layout, plt, save_figure
    from ._spde import report_figures, run_figure

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
