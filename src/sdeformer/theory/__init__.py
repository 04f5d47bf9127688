"""What the theory predicts, and the exact computations behind it: two-token quadratures, one-step moments, Monte
Carlo of small runs and coupled runs (BEYOND sections 0-5), the normalization schemes' moments (BEYOND section 6),
the retrieval profile of causal ALiBi (BEYOND section 7), the interaction energy's law across N. The checks that
run a model at fixed settings against these predictions, with their power, are the lab's: ``sdeformer.checks``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._coupled import Recorder, coupled, single
    from ._energy_law import energy_law
    from ._moments import PairMoments, measured_pair_moments, predicted_pair_moments
    from ._montecarlo import Estimate, run_steps, two_tokens
    from ._norm_moments import Moments, measured_moments, predicted_moments
    from ._quadrature import value_noise_beta_c
    from ._retrieval import threshold

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
