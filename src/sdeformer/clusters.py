"""Cluster criteria beside the connected-components ``diagnostics.cluster_count`` (BEYOND section 5).

``one_cluster``: every pair's cosine is at least ``threshold`` (an all-pairs criterion: a chain of close
tokens is not one cluster). ``antipodal_pairs``: the fraction of pairs with cosine at most -``threshold``.
Inputs ``(..., N, d)``.
"""

from __future__ import annotations

import torch

from .diagnostics import pairwise_cosines


def one_cluster(x: torch.Tensor, threshold: float = 0.999) -> torch.Tensor:
    """True where all pairs have cos(x_i, x_j) >= threshold, ``(...)`` bool (N = 1: True)."""
    cos = pairwise_cosines(x)  # (..., P)
    return (cos >= threshold).all(-1) if cos.shape[-1] else torch.ones(x.shape[:-2], dtype=torch.bool)


def antipodal_pairs(x: torch.Tensor, threshold: float = 0.999) -> torch.Tensor:
    """Fraction of pairs with cos(x_i, x_j) <= -threshold, ``(...)``."""
    return (pairwise_cosines(x) <= -threshold).double().mean(-1)
