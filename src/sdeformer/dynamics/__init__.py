"""Dynamics: the one time loop (``loop``), the discrete model (THEORY section 1), the limit SDE and its solvers
(THEORY section 3), couplings and the mean field as particles (THEORY section 4). The time loop runs built parts
(noise, attention, norm); a config's parts, and the batched runs of many configs, are built by
``sdeformer.config``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._coupling import depth_coupled, width_coupled
    from ._discrete import StochasticTransformer
    from ._labels import Runs
    from ._loop import Observer, SaveAt, Trajectory, as_saveat, integrate
    from ._meanfield import run_clouds, sup_w2_sq
    from ._norms import NGPT, MixLN, PeriLN, PostLN, PreLN, SqrtScaling
    from ._norms.limits import mean_cosine
    from ._norms.schemes import Normalization, unit
    from ._sde import (
        NO_FIELD,
        EulerMaruyama,
        GeodesicEuler,
        LimitSDE,
        ProjectedEulerMaruyama,
        RungeKutta4,
        make_solver,
        norm_scheme,
    )
    from ._species import SpeciesNoise, TwoSpecies, cross_energy, species_observables
    from ._step_guard import ATTENTION_LIMIT, NOISE_LIMIT, check_step, step_ratios

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
