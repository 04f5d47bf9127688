"""Points on the unit sphere S^{d-1} (THEORY section 1): sampling, LN projection, tangent projection.

Every function takes tensors shaped ``(..., N, d)`` and keeps dtype and device.
"""

from __future__ import annotations

import torch

from ._errors import ConfigError
from ._rng import Seeds, randn
from ._validate import device as check_device, dimension, float_dtype, positive_int


def uniform_sphere(
    n: int,
    d: int,
    *,
    batch: tuple[int, ...] = (),
    seed: Seeds = None,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device = "cpu",
) -> torch.Tensor:
    """I.i.d. uniform points on S^{d-1}: normalised standard Gaussians.

    Returns ``(*batch, n, d)``. Randomness comes from ``generator`` or ``seed`` (see :mod:`sdeformer.core._rng`);
    batch element k uses its own stream, so a batched draw equals the unbatched draws stacked.
    Raises ConfigError for n < 1, d < 2, a non-floating or float16 dtype, a device this machine lacks, or a
    bad seed.
    """
    n, d = positive_int("tokens", n), dimension("dim", d)
    dtype, device = float_dtype("dtype", dtype), check_device("device", device)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise ConfigError("generator", type(generator).__name__, "must be a torch.Generator")
    g = randn(batch, (n, d), seed=seed, generator=generator, dtype=dtype, device=device)
    return project(g)


def project(v: torch.Tensor) -> torch.Tensor:
    """LN(v) = v / |v| along the last axis (radial projection, RMS-norm style). ``(..., d) -> (..., d)``."""
    return v / torch.linalg.vector_norm(v, dim=-1, keepdim=True)


def tangent(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """P_x v = v - <x, v> x, the projection of v onto the tangent space at x. Both ``(..., d)``."""
    return v - (x * v).sum(-1, keepdim=True) * x
