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

from .heads import ResampledHeads
from .partial import PartialNoise
from .quadratic import QuadraticForm
from .scaled import Scaled
from .sources import Antithetic, BulkSource, PerToken
from .value import ValueNoise

__all__ = [
    "Antithetic",
    "BulkSource",
    "PartialNoise",
    "PerToken",
    "QuadraticForm",
    "ResampledHeads",
    "Scaled",
    "ValueNoise",
]
