"""The SPDE of THEORY section 4 as a density on the circle and the 2-sphere, coupled to particles on one noise
path (docs/spde.md): ``harmonics``/``legendre`` (the basis and its quadrature), ``fields`` (the truncated noise,
a LimitField), ``attention`` (softmax and USA through the harmonics of e^{beta <x, y>}), ``initial`` (start
laws and samples), ``solver`` (the push-forward scheme), ``diagnostics`` (mass, positivity, E_beta, resolution,
weak distances), ``theory`` (the linear theory). Its checks (the linear theory, particles on one path, the
covariance, propagation of chaos in W_2) are in ``sdeformer.theory``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._attention import KernelAttention, exp_degree
    from ._budget import beta_value
    from ._diagnostics import (
        TAIL_TOL,
        cloud_coefficients,
        density_map,
        energy_beta,
        low_mode_distance,
        min_density,
        negative_sobolev,
        resolution,
        tail_share,
    )
    from ._fields import CircleNoise, SpectralField, mlp_noise
    from ._harmonics import harmonics
    from ._initial import sample_vmf, von_mises_fisher
    from ._solver import ATTENTIONS, DensitySolver
    from ._theory import dominant_mode, linear_rates

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
