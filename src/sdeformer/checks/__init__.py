"""The checks of the theory: each runs a model at a fixed setting against ``sdeformer.theory``'s prediction at the
same inputs and records its verdict with its power (the catch rates of named wrong models over seeds, both signs:
``Check``, ``Power``). The noise family (BEYOND sections 0-5), the normalization schemes' clustering laws (BEYOND
section 6), and the SPDE solver (docs/spde.md sections 7-9: linear theory, particles on one path, covariance,
propagation of chaos in W_2). Part of the lab: it runs experiments; the library states what they should find."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._norm_rates import TOLERANCE, clustering_check, predicted_law, radius_check, radius_constant, radius_slope
    from ._partial import partial_model
    from ._quadratic import autocorrelation
    from ._record import SIGMAS, SIZES, Check, Power
    from ._spde.chaos import SUBLEVELS, chaos_w2, density_quantile, r_d, w2_check, w2_circle
    from ._spde.chaos_independent import independent_check
    from ._spde.chaos_large import energy_paths, energy_rows, large_check, limit_h_sd, w2_paths
    from ._spde.chaos_scheme import FiniteVolume, circle_spectrum
    from ._spde.chaos_sphere import chaos_w2_sphere, density_atoms, grid_error, qmc_vmf, vmf_points, w2_sphere
    from ._spde.checks import measured_rates, moment_check, rates_pass
    from ._spde.coupled import particle_convergence, record
    from ._spde.sliced_sphere import chaos_sliced_models, slice_coefficients, sliced_w2, sphere_sliced_table
    from ._value import antipode_exponent

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
