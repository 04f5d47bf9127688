"""Normalization schemes of a layer and their limit SDEs with common noise (BEYOND section 6).

- ``schemes``: where one layer normalizes around its attention and noise sub-steps (Post-LN, Pre-LN, Mix-LN,
  Peri-LN, nGPT, sqrt-scaling; the parts of ``registry.NORMS``);
- ``limits``: the derived limit of each scheme (direction and radius), the normalized field's covariance and
  where the synchronization theorem applies;
- ``limit_sde``: the limit SDE of each scheme as the solvers of ``dynamics._sde`` step it (state with radius).

Only ``schemes`` is imported here (``dynamics._discrete`` uses it; the others import the model). Their checks (the
one-step moment test with the radius, the noiseless clustering laws of arXiv:2510.22026) are in ``theory``.
"""

from ...contracts import NormScheme
from .schemes import NGPT, MixLN, PeriLN, PostLN, PreLN, SqrtScaling

__all__ = ["NGPT", "MixLN", "NormScheme", "PeriLN", "PostLN", "PreLN", "SqrtScaling"]
