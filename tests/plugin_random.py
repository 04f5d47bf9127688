"""A plugin part that draws its own normals (docs/extending.md, "Randomness"): a common random linear field.

Each call draws one d x d matrix A of standard normals per run from ``source`` (the same A for every token of a
run: common noise) and moves token y by sqrt(f dt) P_y A y, with P_y = I - y y^T the tangent projection and f
its own parameter ``noise.strength``. ``source.randn(shape, dtype)`` returns ``(*batch, *shape)``: one
independent stream per run of a batch, so a batched run equals its runs alone.
"""

from __future__ import annotations

import math

import torch

from sdeformer.registry import NOISES, Param


class RandomLinear:
    def __init__(self, strength: float = 1.0):
        self.strength = strength

    @classmethod
    def from_config(cls, p) -> RandomLinear:
        return cls(p.strength)

    def increment(self, y: torch.Tensor, dt: float, source) -> torch.Tensor:
        d = y.shape[-1]
        a = source.randn((d, d), y.dtype)  # (*batch, d, d): one matrix per run; never torch.randn
        a = a.reshape(*a.shape[:-2], *[1] * (y.dim() - 2 - len(source.batch)), d, d)  # beside y's own axes
        ay = y @ a.transpose(-1, -2)  # (..., N, d): A y for every token, the same A
        tangent = ay - (ay * y).sum(-1, keepdim=True) * y  # P_y A y
        return math.sqrt(self.strength * dt) * tangent


NOISES.register(
    "random_linear", RandomLinear, random=True, doc="a common random linear field (a plugin drawing its normals)",
    params=(Param("strength", float, 1.0, low=0.0, doc="f in sqrt(f dt) P_y A y"),),
)  # fmt: skip
