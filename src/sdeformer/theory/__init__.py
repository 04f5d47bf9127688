"""The checks of the theory, above the parts they check: exact two-token quadratures, one-step moments, Monte Carlo of
small runs and the checks of the noise family (BEYOND sections 0-5); the normalization schemes' moment test and
clustering laws (BEYOND section 6); the retrieval profile of causal ALiBi (BEYOND section 7); the SPDE solver's checks
(docs/spde.md sections 7-9: linear theory, particles on one path, covariance, propagation of chaos in W_2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._checks import SIGMAS, SIZES, Check, Power
    from ._checks_partial import partial_model
    from ._checks_quadratic import autocorrelation
    from ._checks_value import antipode_exponent
    from ._coupled import Recorder, coupled, single
    from ._energy_law import energy_law
    from ._moments import PairMoments, measured_pair_moments, predicted_pair_moments
    from ._montecarlo import Estimate, run_steps, two_tokens
    from ._norm_moments import Moments, measured_moments, predicted_moments
    from ._norm_rates import TOLERANCE, clustering_check, predicted_law, radius_check, radius_constant, radius_slope
    from ._quadrature import value_noise_beta_c
    from ._retrieval import threshold
    from ._spde.chaos import SUBLEVELS, chaos_w2, density_quantile, r_d, w2_check, w2_circle
    from ._spde.chaos_sphere import chaos_w2_sphere, density_atoms, grid_error, qmc_vmf, vmf_points, w2_sphere
    from ._spde.checks import measured_rates, moment_check, rates_pass
    from ._spde.coupled import particle_convergence, record
    from ._spde.sliced_sphere import chaos_sliced_models, slice_coefficients, sliced_w2, sphere_sliced_table

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
