"""A real pretrained transformer held against the theory (THEORY sections 1, 2 and 5; BEYOND section 1).

``load`` finds a local model's sublayers and captures the stream, the attention's and the MLP's outputs;
``stats``, ``kernel`` and ``attention`` measure them per layer; ``synthetic`` runs the stochastic transformer and
recovers its parameters with the same estimators; ``measure`` and ``write`` make the record, its files and its
report section. The library never imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._attention import fit_attention
    from ._attention_full import fit_full
    from ._fitted import fitted_model
    from ._kernel import held_out, kernel_sums, theory_curve
    from ._kernel_ci import r2_intervals
    from ._measure import CONTROLS, analyse, measure, settings, verdict
    from ._stats import common_share
    from ._synthetic import PLANTED, recover, simulate
    from ._write import INTERVALS, report_section, run_and_write, summary

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
