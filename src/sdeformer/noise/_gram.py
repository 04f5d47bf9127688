"""The width-m MLP field drawn through its Gram matrix (THEORY section 3), for the width coupling of
``dynamics._coupling``: a ``contracts.Replayable`` field, so that the same standard normals drive the MLP at
width m and the limit field."""

from __future__ import annotations

import math

import torch

from ..contracts import RandomSource
from ..core._activations import Activation, get_activation
from ..core._validate import positive_int
from ._fields import FromNormals, check_bias_stds
from ._roots import psd_sqrt


class GramMLPField(FromNormals):
    """The width-m MLP block at the tokens, drawn as ``sqrt(dt) Sigma_m(y)^{1/2} z`` (THEORY section 1).

    Given the hidden layer (U, bU), the outputs m^{-1/2} W act(.) + bW at the N tokens are Gaussian with
    covariance Sigma_m = phi phi^T / m + sW^2 in every output coordinate, so this is exact in law for the
    MLP; (U, bU) are fresh each layer (from ``source``) and z ``(..., N, d)`` is the shared standard normal.
    """

    def __init__(self, activation="relu", width: int = 2048, su: float = 0.0, sw: float = 0.0):
        width = positive_int("width", width)
        check_bias_stds(su, sw)
        self.activation: Activation = get_activation(activation)
        self.width, self.su, self.sw = width, float(su), float(sw)

    def normal_shape(self, y: torch.Tensor) -> tuple[int, ...]:
        return tuple(y.shape[-2:])

    def apply(self, y: torch.Tensor, dt: float, z: torch.Tensor, source: RandomSource) -> torch.Tensor:
        """sqrt(dt) Sigma_m(y)^{1/2} z with a fresh hidden layer from ``source``. ``(..., N, d) -> (..., N, d)``."""
        d, m = y.shape[-1], self.width
        U = source.randn((m, d), y.dtype)  # (..., m, d)
        bU = source.randn((m,), y.dtype) * self.su  # (..., m)
        phi = self.activation(y @ U.transpose(-1, -2) / math.sqrt(d) + bU.unsqueeze(-2))  # (..., N, m)
        gram = phi @ phi.transpose(-1, -2) / m + self.sw**2  # (..., N, N)
        return math.sqrt(dt) * (psd_sqrt(gram) @ z)
