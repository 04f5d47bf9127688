"""Peer cells that count pairs of tokens above a cosine threshold (0.999) after float32 steps of a chaotic flow.

Such a count is not a stable function of the arithmetic: a pair whose cosine sits within a rounding of the
threshold crosses it when torch dispatches to other kernels (AVX2, AVX-512, the default scalar ones), and the
dynamics amplifies one rounding by up to 10^6 (docs/peers.md). Measured on one machine under the three
dispatches: every table is the peer's cell for cell under AVX2, and at most one cell differs by one pair under
AVX-512 or the default kernels. The portable claim asserted here is that one: at most ``cells`` cells differ,
each by at most ``pairs`` pairs. A wrong model (another normalization, the corrected Pre-LN radius, another
attention) moves most cells (tests/test_peer_simuformer.py), so the claim keeps its power.
"""

from __future__ import annotations

import numpy as np


def assert_threshold_cells(got, want, cells: int = 1, pairs: int = 1) -> None:
    """``got`` equals ``want`` (integer pair counts, the same shape) but for at most ``cells`` cells, each off by
    at most ``pairs``."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    off = np.abs(got - want)
    assert int((off > 0).sum()) <= cells and int(off.max(initial=0)) <= pairs, (
        f"{int((off > 0).sum())} cells differ (at most {cells} allowed), by up to {int(off.max(initial=0))} pairs "
        f"(at most {pairs}): first at {np.argwhere(off > 0)[:3].tolist()}"
    )
