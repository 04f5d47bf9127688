"""The family of stochastic transformer noise models of BEYOND.md, each a noise field of the generic layer
``x_i <- LN(x_i + h D_i(X) + xi_i)`` with its limit covariance C_ij (BEYOND section 0):

- ``PartialNoise(field, share)``: per-token noise, a sharing fraction rho for any field (BEYOND 1);
- ``ValueNoise``: random value matrices (BEYOND 2); ``ResampledHeads``: random attention heads (BEYOND 3);
- ``QuadraticForm``: a random symmetric linear layer, with optional forcing gamma (BEYOND 4);
- ``Scaled``: any field at a chosen strength.

Each has ``increment`` (the discrete chain), ``variance`` (tr(P C_ii) / (d - 1), the Ito correction of
``sde.LimitSDE``), ``pair_covariance`` (the moment test of ``moments``) and ``one_point`` (its per-token copy).
``quadrature`` holds the exact two-token answers, ``checks*`` the Monte Carlo checks against them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._covariance import pair_covariance
    from ._fields import GaussianField, LimitFromNormals, RandomFeatureField
    from ._gram import GramMLPField
    from ._heads import ResampledHeads
    from ._mlp import SAMPLING_MODES, MLPNoise, root_pays
    from ._partial import PartialNoise
    from ._quadratic import QuadraticForm, forcing_rate_bound
    from ._replay import BrownianPath, ReplayedNoise
    from ._roots import psd_sqrt
    from ._scaled import Scaled
    from ._sources import Antithetic, BulkSource, PerToken
    from ._value import ValueNoise

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
