"""Theory checks of the noise family (BEYOND sections 0-5): exact two-token quadratures, one-step moments,
Monte Carlo of small runs and the checks that compare them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._checks import SIGMAS, SIZES, Check, Power
    from ._checks_partial import partial_model
    from ._checks_quadratic import autocorrelation
    from ._checks_value import antipode_exponent
    from ._coupled import Recorder, coupled, single
    from ._moments import PairMoments, measured_pair_moments, predicted_pair_moments
    from ._montecarlo import Estimate, run_steps, two_tokens
    from ._quadrature import value_noise_beta_c

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
