"""simuformer's Pre-LN and Peri-LN as published (docs/peers.md): the residual stream x = r theta, a block's
update ``out = dt A`` moving the direction by the tangent part of A / r (Pre-LN) or by LN(A) / r (Peri-LN), but
the radius by ``r <- r + r sum_k w_k`` (the sum of the update's coordinates times r) instead of the residual
stream's ``|r theta + w|`` (BEYOND section 6: ``dynamics._norms.schemes.PreLN`` / ``PeriLN``). The radius then
drifts to 1e-13 or 1e9 with the coordinate sum of A, which no normalization scheme does. Reproduced to read the
peer's published cells; the corrected schemes are sdeformer's own.
"""

from __future__ import annotations

import torch

from ..core._errors import ConfigError
from ..core._sphere import project
from ..dynamics._norms.schemes import Normalization, unit

EPS = 1e-9  # the peer's guard in its division by the radius


class PublishedRadius(Normalization):
    """simuformer's ``preln`` (``kind="pre"``) or ``periln`` (``kind="peri"``) update, as published. The state is
    the residual stream ``r theta`` ``(..., N, d)``; the blocks read theta. Raises ConfigError for another kind,
    and at a step whose published radius is not positive (r theta can hold only r > 0)."""

    on_sphere = False

    def __init__(self, kind: str):
        if kind not in ("pre", "peri"):
            raise ConfigError("norm", kind, "pre or peri")
        self.kind, self.name = kind, f"{kind}-published"

    def sub(self, x: torch.Tensor, out: torch.Tensor, step: float, t: float) -> torch.Tensor:
        r = torch.linalg.vector_norm(x, dim=-1, keepdim=True)  # (..., N, 1)
        theta = x / r
        w = out if self.kind == "pre" else step * unit(out)  # (..., N, d)
        r = r + r * w.sum(-1, keepdim=True)  # the published line: r * sum_k w_k, not <theta, w>
        if not bool((r > 0).all()):
            raise ConfigError("norm", f"{self.name}", "the published radius turned non-positive at this step")
        move = w - (theta * w).sum(-1, keepdim=True) * theta if self.kind == "pre" else w
        return r * project(theta + move / (r + EPS))

    def __repr__(self) -> str:
        return f"PublishedRadius({self.kind!r})"
