"""The memory of one run of the discrete model, below the experiments that run it (THEORY section 5 observables).

A run advances in segments of ``CHECKPOINT_LAYERS`` layers and evaluates its observables ``METRICS`` on
``METRIC_CHUNK`` saved states at a time (``sdeformer simulate``); ``run_bytes`` is the peak of its arrays. The
sweeps size their tasks and refuse a spec that does not fit with it (``limits``, ``task``); ``sdeformer simulate``
adds its process's base to it (``experiments``' memory estimate).
"""

from __future__ import annotations

import torch

from .._spheresums import forms_bytes
from ..config import ModelConfig
from ..noise._mlp import BLOCK_FROM, TOKEN_BLOCK

CHECKPOINT_LAYERS = 500
METRIC_CHUNK = 16  # saved states per observable evaluation: (16, N, N) cosines at a time
METRICS = ("energy", "mean_cos", "mean_abs_cos", "clusters")


def run_bytes(cfg: ModelConfig, *, cosines: bool = False) -> int:
    """Bytes the arrays of one run of ``cfg`` take at their peak: the saved states (a segment's list, then all of
    them in their stacks, then gathered once for the result) and the larger of two phases that do not overlap: a
    layer (its MLP draws, 3 of (m, d), hidden layer (N, m), a block of it from ``BLOCK_FROM`` tokens, and ~8 (N, d)
    temporaries; attention holds O(N d): sdpa never forms the N x N scores, the harmonic method O(N) features)
    and the observables (float64 copies of ``METRIC_CHUNK`` states; their cosines go in row blocks of a fixed
    size, counted in ``BASE_BYTES``; on S^1, S^2 the forms' working memory, ``_spheresums.forms_bytes``: the
    energy's feature rows, the clusters' cubes, from ``SPHERE_ABS_MIN_TOKENS`` the mean |cosine| octree). With
    ``cosines``, the three (N, N) float64 matrices a sweep's observables form per run (``sweeps.evaluate``)
    instead."""
    n, d, m = cfg.tokens, cfg.dim, cfg.width
    item = torch.tensor([], dtype=cfg.torch_dtype).element_size()
    saved = cfg.layers // cfg.save_every + 2
    per_segment = min(cfg.layers, CHECKPOINT_LAYERS) // cfg.save_every + 2
    hidden = n if n < BLOCK_FROM else TOKEN_BLOCK  # MLPNoise.apply's hidden layer: (block, m) from BLOCK_FROM
    layer = item * (3 * m * d + hidden * m + 8 * n * d)
    states = item * n * d * (per_segment + 2 * saved) + 8 * (len(METRICS) + 2) * saved
    pairs = 3 * 8 * n * n if cosines else forms_bytes(n, d)
    observables = 2 * 8 * min(METRIC_CHUNK, per_segment) * n * d + pairs
    return states + max(layer, observables)
