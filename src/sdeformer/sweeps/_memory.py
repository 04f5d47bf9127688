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


LAYER_TEMPORARIES = 4  # (N, d) temporaries of a layer besides its hidden block (3-5 measured at d = 64)
OBSERVABLE_BYTES = 20  # bytes per entry of the states whose observables run: 2.5 float64 copies (measured at d = 64)


def run_bytes(cfg: ModelConfig, *, cosines: bool = False) -> int:
    """Bytes the arrays of one run of ``cfg`` take at their peak: the saved states (every segment's, in memory
    throughout) and the largest of four phases that do not overlap: a layer (its MLP draws, 3 of (m, d), the hidden
    layer (N, m), a block of it from ``BLOCK_FROM`` tokens, and ``LAYER_TEMPORARIES`` (N, d); attention holds
    O(N d): sdpa never forms the N x N scores, the harmonic method O(N) features), a segment's states stacked, the
    observables (``OBSERVABLE_BYTES`` per entry of ``METRIC_CHUNK`` states; their cosines go in row blocks of a
    fixed size, counted in the process's base; on S^1, S^2 the forms' working memory, ``_spheresums.forms_bytes``:
    the energy's feature rows, the clusters' cubes, from ``SPHERE_ABS_MIN_TOKENS`` the mean |cosine| octree) and the
    states gathered once for the result. With ``cosines``, the three (N, N) float64 matrices a sweep's observables
    form per run (``sweeps.evaluate``) instead of the forms. Fitted to peaks measured with a fixed allocator
    threshold (docs/scaling.md, "Memory estimate")."""
    n, d, m = cfg.tokens, cfg.dim, cfg.width
    item = torch.tensor([], dtype=cfg.torch_dtype).element_size()
    per_segment = -(-min(cfg.layers, CHECKPOINT_LAYERS) // cfg.save_every)  # saved by a segment's steps
    saved = 1 + -(-cfg.layers // cfg.save_every)  # the start, every save_every-th layer and the last
    held = item * n * d * saved + 8 * (len(METRICS) + 2) * saved
    hidden = n if n < BLOCK_FROM else TOKEN_BLOCK  # MLPNoise.apply's hidden layer: (block, m) from BLOCK_FROM
    layer = item * (3 * m * d + hidden * m + LAYER_TEMPORARIES * n * d)
    segment = 5 * item * n * d * (per_segment + 1) // 4  # stacked with its start, or compressed for its file
    pairs = 3 * 8 * n * n if cosines else forms_bytes(n, d)
    observables = OBSERVABLE_BYTES * min(METRIC_CHUNK, per_segment) * n * d + pairs
    gathered = 5 * held // 4  # the states in one array, then compressed for the trajectory file
    return held + max(layer, segment, observables, gathered)
