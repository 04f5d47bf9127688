"""Partial (per-token) noise: a sharing fraction rho for any noise field (BEYOND section 1).

    xi_i = sqrt(rho) G(x_i) + sqrt(1 - rho) G_i(x_i)

G common to all tokens, G_1..G_N independent copies with the same law, all fresh in each layer (or step).
rho = 1 is the paper's common noise (the wrapped field's draws, unchanged); rho = 0 is independent noise per
token. Only the value of G_i at its own token is needed, so the idiosyncratic part is drawn from the field's
one-point law, the field's ``one_point`` (``contracts.OnePoint``): for ``MLPNoise`` the conditional law at one
point; for the isotropic Gaussian fields k(y_i, y_i)^{1/2} z_i (``covariance.IsotropicKernel``); a field whose
value at token i depends on y_i alone may use ``per_token`` (one whole draw per token). A field without
``one_point`` is refused for rho < 1 (ConfigError naming the method).
Covariances: C_ii = C(x_i, x_i), C_ij = rho C(x_i, x_j) (i != j).
"""

from __future__ import annotations

import math

import torch

from ..contracts import NoiseField, OnePoint, RandomSource, require
from ..core._errors import ConfigError
from ._covariance import pair_covariance, tangential_variance
from ._sources import PerToken


def one_point(field: object, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
    """An independent copy G_i of the field's increment at each token i only (``contracts.OnePoint``).
    ``(..., N, d) -> (..., N, d)``."""
    require(field, OnePoint)
    assert isinstance(field, OnePoint)
    return field.one_point(y, dt, source)


def per_token(field: NoiseField, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
    """A one-point law for any field whose value at token i depends on y_i alone: one whole draw of the field
    per token (``sources.PerToken``). A field may implement ``one_point`` with it. ``(..., N, d)``."""
    out = field.increment(y.unsqueeze(-2), dt, PerToken(source, y.shape[-2]))  # (..., N, 1, d)
    return out.squeeze(-2)


class PartialNoise:
    """The field ``field`` shared by the tokens with fraction ``share`` = rho in [0, 1] (BEYOND section 1).

    ``increment(y, dt, source)`` ``(..., N, d) -> (..., N, d)``: at rho = 1 exactly ``field.increment`` (the
    same numbers); else sqrt(rho) (common draw, skipped at rho = 0) + sqrt(1 - rho) (one-point draws).
    A LimitField when ``field`` has a kernel (``variance``: C_ii is the field's). Raises ConfigError for a
    share outside [0, 1].
    """

    def __init__(self, field: NoiseField, share: float = 1.0):
        share = float(share)
        if not 0.0 <= share <= 1.0:
            raise ConfigError("share", share, "sharing fraction rho must be in [0, 1]")
        if share < 1.0:
            require(field, OnePoint)
        self.field, self.share = field, share

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        rho = self.share
        if rho == 1.0:
            return self.field.increment(y, dt, source)
        if rho == 0.0:
            return one_point(self.field, y, dt, source)
        common = self.field.increment(y, dt, source)  # (..., N, d), drawn first as at rho = 1
        own = one_point(self.field, y, dt, source)  # (..., N, d)
        return common.mul_(math.sqrt(rho)).add_(own, alpha=math.sqrt(1.0 - rho))

    def one_point(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        return one_point(self.field, y, dt, source)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        """tr(P C_ii) / (d - 1), the wrapped field's (sharing does not change C_ii)."""
        return tangential_variance(self.field, y)

    def increment_and_variance(
        self, y: torch.Tensor, dt: float, source: RandomSource
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.increment(y, dt, source), self.variance(y)

    def pair_covariance(self, x: torch.Tensor) -> torch.Tensor:
        """C_ij = rho C(x_i, x_j) for i != j, C(x_i, x_i) on the diagonal, ``(..., N, N, d, d)``."""
        c = pair_covariance(self.field, x)  # (..., N, N, d, d)
        n = x.shape[-2]
        eye = torch.eye(n, dtype=torch.bool, device=x.device)[..., None, None]  # (N, N, 1, 1)
        return torch.where(eye, c, self.share * c)
