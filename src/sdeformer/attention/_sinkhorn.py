"""Sinkhorn (doubly stochastic) attention (BEYOND section 5): the doubly stochastic matrix of e^{beta <x_i, x_j>}
by the symmetric Sinkhorn iteration in the log domain until every row (= column) sums to 1 within ``tol``, or a
``SinkhornWarning`` after ``iterations`` rounds (never a silent result); each run of a batch stops on its own, so
batched equals unbatched.
"""

from __future__ import annotations

import warnings

import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ._variants import _check_beta

SINKHORN_ITERATIONS = 1000  # most rounds (the symmetric iteration needs ~10-20 at N = 32, beta = 50)
SINKHORN_TOL = 1e-6  # row (= column) sums within this of 1 stop the iteration


class SinkhornWarning(RuntimeWarning):
    """Sinkhorn attention stopped at its iteration limit before its tolerance: the matrix is not doubly
    stochastic to ``tol`` (the warning gives the error; ``SinkhornAttention.last_error`` keeps it)."""


class SinkhornAttention:
    """Doubly stochastic attention: the Sinkhorn scaling P = diag(e^f) K diag(e^f) of the symmetric
    K = e^{beta <x_i, x_j>}, then D_i = sum_j P_ij scale x_j (BEYOND section 5).

    The symmetric iteration in the log domain, f <- (f - logsumexp_j(beta <x_i, x_j> + f_j)) / 2 (each run of a
    batch stops on its own once its row sums are within ``tol`` of 1, so batched equals unbatched), converges in
    tens of rounds where alternate row and column normalisation needs thousands (clustered tokens, large beta);
    ``tolerance``: ``tol``, or the dtype's resolution of a sum of N entries if larger (float32).
    P is symmetric, so its columns sum as its rows; a final row normalisation makes the rows exact to rounding.
    A run still outside ``tol`` after ``iterations`` rounds raises a ``SinkhornWarning``, never a silent result;
    ``last_error`` is the largest |column sum - 1| of the last call (a sweep column)."""

    @classmethod
    def from_config(cls, p) -> SinkhornAttention:
        """The attention of a config (``registry.Params``)."""
        return cls(p.beta, p.attention_scale)

    def __init__(
        self, beta: float = 1.0, scale: float = 1.0, *, iterations: int = SINKHORN_ITERATIONS, tol: float = SINKHORN_TOL
    ):
        if int(iterations) < 1:
            raise ConfigError("iterations", iterations, "must be a positive integer")
        if not tol > 0:
            raise ConfigError("tol", tol, "must be > 0")
        self.beta, self.scale, self.iterations, self.tol = _check_beta(beta), float(scale), int(iterations), tol
        self.last_error = 0.0

    def tolerance(self, x: torch.Tensor) -> float:
        """``tol``, or the resolution of a sum of N entries in x's dtype (4 N eps) if that is larger."""
        return max(self.tol, 4 * x.shape[-2] * torch.finfo(x.dtype).eps)

    def weights(self, x: torch.Tensor) -> torch.Tensor:
        """The Sinkhorn matrix P ``(..., N, N)``."""
        tol = self.tolerance(x)
        g = self.beta * (x @ x.transpose(-1, -2))  # (..., N, N), symmetric
        f = torch.zeros(g.shape[:-1], dtype=g.dtype, device=g.device)  # (..., N)
        lse = torch.logsumexp(g, dim=-1)  # (..., N): log of the row sums of K diag(e^f), f = 0
        done = torch.zeros(g.shape[:-2], dtype=torch.bool, device=g.device)  # (...): converged runs stay put
        for _ in range(self.iterations):
            done = done | ((lse + f).exp() - 1).abs().amax(-1).le(tol / 2)  # rows of P = e^(f_i + lse_i)
            if bool(done.all()):
                break
            f = torch.where(done[..., None], f, 0.5 * (f - lse))
            lse = torch.logsumexp(g + f.unsqueeze(-2), dim=-1)
        logp = g + f.unsqueeze(-1) + f.unsqueeze(-2)
        p = (logp - torch.logsumexp(logp, dim=-1, keepdim=True)).exp()  # rows exact to rounding
        self.last_error = float((p.sum(-2) - 1).abs().max())
        if self.last_error > tol:
            warnings.warn(
                f"Sinkhorn attention did not converge in {self.iterations} iterations: column sums off by "
                f"{self.last_error:.2g} > tol {tol:g}",
                SinkhornWarning,
                stacklevel=2,
            )
        return p

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        return self.weights(x) @ x * self.scale
