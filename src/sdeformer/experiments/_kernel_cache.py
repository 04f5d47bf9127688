"""One ``KernelTheory`` per setting for the whole reproduction (THEORY section 2).

Table 1 and the panels of Figures 2-6 ask for the same 24 (activation, d, sigma) settings, and each panel's
verdict needs lambda_bar_prime (a quadrature on a grid of u, about a second each); memoising the instances
(their constants are ``cached_property``s) computes each setting once per process.
"""

from __future__ import annotations

from functools import lru_cache

from ..core._kernel import KernelTheory, kernel_theory as _kernel_theory


@lru_cache(maxsize=256)
def kernel_theory(activation: str, dim: int, *, bias_std: float | None = None, beta: float = 1.0) -> KernelTheory:
    """``sdeformer.core._kernel.kernel_theory`` for a named activation, memoised (the instance is shared: read only)."""
    return _kernel_theory(activation, dim, bias_std=bias_std, beta=beta)
