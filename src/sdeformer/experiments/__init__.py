"""One module per experiment: settings -> a typed result (``results.Result``) with ``to_json()``.

Each check has one ``run_and_write(out, ...)`` that runs it, writes its JSON and .npz files and returns the
result; the commands (``sdeformer.cli``) and the reproduce report (``reproduce``, ``theorems``) both call it.
The experiments never draw: ``sdeformer.plots`` draws their results, called by the commands and by
the report's orchestrators (``reproduce`` and the registered run functions of ``steps``, the modules here that
import ``plots``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._architectures.checks import duration_exponent, plateau_durations
    from ._architectures.report import SADDLE, ArchitecturesResult
    from ._beyond.report import check_specs
    from ._figure1 import Figure1Result
    from ._grid import COSINE_BINS, MLP_CHOICES, GridResult, grid_configs
    from ._lyapunov import LyapunovRow, lyapunov
    from ._parts import parts_section
    from ._phase import PhaseResult
    from ._rates.measure import RatesResult
    from ._registry import EXPERIMENTS, Context, Experiment
    from ._reproduce import reproduce
    from ._simulate import FIGURE, SimulateResult, check_fits, memory_estimate, simulate
    from ._spde.run import SpdeReport, SpdeRun, SpdeSettings, claim, run_spde
    from ._spde.study import check_records
    from ._sync.architecture import CELL_VERDICTS, NOT_APPLICABLE, cell_verdict, kernel_reasons, part_reasons
    from ._sync.check import VERDICTS, SyncResult, sync_check
    from ._sync.eps import (
        adversarial_starts,
        certified_eps,
        energy_rate,
        growth_rate,
        is_certified,
        resolution_floor,
        stable_energy,
    )
    from ._sync.settings import HELP, SyncSettings
    from ._table1 import Table1Result, section
    from ._theorems import SYNC_FIGURES, SYNC_QUICK, SYNC_SETTINGS, TheoremResults

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
