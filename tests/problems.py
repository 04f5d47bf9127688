"""Small cases with exact answers (docs/design.md: tests/problems.py)."""

from __future__ import annotations

import torch


def relu_kappa1(d: int, su: float, sw: float) -> float:
    """ReLU: kappa(1) = E[relu(Z)^2] + sW^2 = (1/d + sU^2) / 2 + sW^2."""
    return (1.0 / d + su**2) / 2 + sw**2


def relu_dkappa1(d: int) -> float:
    """ReLU: kappa'(1) = (1/d) P(Z > 0) = 1 / (2 d)."""
    return 0.5 / d


def relu_lambda_bar(d: int, su: float, sw: float) -> float:
    """THEORY section 2: lambda_bar = 1/d - (sU^2 + 2 sW^2)(d-3)/2."""
    return 1.0 / d - (su**2 + 2 * sw**2) * (d - 3) / 2


def relu_lambda1(d: int, su: float, sw: float) -> float:
    """THEORY section 2: lambda_1 = (d-3)/2 kappa'(1) - (d-1)/2 kappa(1) with the ReLU closed forms above."""
    return (d - 3) / 2 * relu_dkappa1(d) - (d - 1) / 2 * relu_kappa1(d, su, sw)


def antipodal_pair(d: int, dtype=torch.float64) -> torch.Tensor:
    """Two antipodal tokens (2, d)."""
    x = torch.zeros(d, dtype=dtype)
    x[0] = 0.6
    x[1] = 0.8
    return torch.stack([x, -x])


def three_clusters(dtype=torch.float64) -> torch.Tensor:
    """9 tokens in 3 tight clusters around e1, e2, -e1 in R^3: cluster count 3."""
    centres = torch.tensor([[1.0, 0, 0], [0, 1.0, 0], [-1.0, 0, 0]], dtype=dtype)
    jitter = 1e-3 * torch.tensor([[0, 1.0, 0], [0, 0, 1.0], [0, -1.0, 0]], dtype=dtype)
    return torch.cat([centres + j for j in jitter]).div(1.0)


def energy_bruteforce(x: torch.Tensor, beta: float) -> float:
    """E_beta by the double sum of THEORY section 5, token by token."""
    import math

    u = x / x.norm(dim=-1, keepdim=True)
    n = len(u)
    total = 0.0
    for i in range(n):
        for j in range(n):
            total += math.exp(beta) - math.exp(beta * float(u[i] @ u[j]))
    return total / (2 * n * n)


class Interrupted(Exception):
    """Raised by ``interrupt_after``: stands in for a kill in the middle of a run."""


def interrupt_after(calls: int):
    """A progress callback that raises ``Interrupted`` on its ``calls``-th call (a run killed mid-way)."""
    seen = [0]

    def progress(_n: int = 1) -> None:
        seen[0] += 1
        if seen[0] == calls:
            raise Interrupted

    return progress
