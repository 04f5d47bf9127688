"""A plugin defined outside the package (docs/extending.md): a noise field, an attention drift and a sweep
observable, each registered with one call. ``tests/test_plugin.py`` runs them through every part of sdeformer.

- ``half_gaussian``: the exact Gaussian limit field of the MLP kernel at a fraction of its strength, C = f kappa
  (f = ``noise.fraction``, a parameter of its own, 1/2 by default; it declares its variance, its one-point law
  and its pair covariance, so the SDE's Ito correction, partial sharing and the BEYOND section 0 moment test
  use them);
- ``shifted_softmax``: softmax attention at inverse temperature beta + shift (``attention.shift``, its own
  parameter, SHIFT by default, one value per run in a batch; batched over beta and s too);
- ``order``: the order parameter |mean_i x_i| of each run.
"""

from __future__ import annotations

import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.noise._fields import GaussianField
from sdeformer.registry import ATTENTIONS, NOISES, OBSERVABLES, Param

SHIFT = 0.5


class HalfGaussian:
    """GaussianField with its covariance scaled by ``fraction`` (1/2): increments sqrt(f dt) R z."""

    def __init__(self, activation="relu", su: float = 0.0, sw: float = 0.0, beta: float = 1.0, fraction: float = 0.5):
        self.inner, self.fraction = GaussianField(activation, su, sw, beta=beta), fraction

    @classmethod
    def from_config(cls, p) -> HalfGaussian:
        return cls(p.activation, p.su, p.sw, p.beta, p.fraction)

    def increment(self, y: torch.Tensor, dt: float, source) -> torch.Tensor:
        return self.inner.increment(y, dt * self.fraction, source)  # (..., N, d)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        return self.inner.variance(y) * self.fraction

    def increment_and_variance(self, y: torch.Tensor, dt: float, source) -> tuple[torch.Tensor, torch.Tensor]:
        return self.increment(y, dt, source), self.variance(y)

    def one_point(self, y: torch.Tensor, dt: float, source) -> torch.Tensor:
        return self.inner.one_point(y, dt * self.fraction, source)

    def pair_covariance(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner.pair_covariance(x) * self.fraction  # (..., N, N, d, d)


class ShiftedSoftmax:
    """Softmax attention with Q^T K = (beta + shift) I, V = s I (each a number or one per run, ``(G,)``)."""

    def __init__(self, beta=1.0, scale=1.0, shift=SHIFT):
        self.beta, self.scale, self.shift = beta, scale, shift

    @classmethod
    def from_config(cls, p) -> ShiftedSoftmax:
        return cls(p.beta, p.attention_scale, p.shift)

    def drift(self, x: torch.Tensor, source=None) -> torch.Tensor:
        return SoftmaxAttention(self.beta + self.shift, self.scale).drift(x)


def order(x: torch.Tensor, beta: torch.Tensor, spec) -> torch.Tensor:
    """|mean_i x_i| per run, ``(..., N, d) -> (...)``."""
    return torch.linalg.vector_norm(x.mean(-2), dim=-1)


NOISES.register(
    "half_gaussian", HalfGaussian, reads=("activation", "su", "sw", "beta"), random=True,
    claims=("limit", "one_point", "pair_covariance"), doc="the Gaussian limit field at a fraction of its strength",
    params=(Param("fraction", float, 0.5, low=0.0, high=1.0, doc="f in C = f kappa"),),
)  # fmt: skip
ATTENTIONS.register(
    "shifted_softmax", ShiftedSoftmax, reads=("beta", "attention_scale"), batched=("beta", "attention_scale"),
    doc="softmax attention at beta + shift (a plugin)",
    params=(Param("shift", float, SHIFT, low=0.0, batched=True, doc="added to beta"),),
)  # fmt: skip
OBSERVABLES.register("order", order, doc="the order parameter |mean_i x_i| (a plugin)")
