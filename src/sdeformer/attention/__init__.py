"""Attention drifts Attn_X(x) ``(..., N, d) -> (..., N, d)`` (THEORY section 1; BEYOND section 5): the paper's
softmax (``softmax``) and its variants (``variants``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._alibi import ALiBiAttention, PositionalALiBiAttention
    from ._masks import (
        ARCHITECTURE_DEFAULTS,
        MaskedAttention,
        allowed,
        check_architecture,
        graph_adjacency,
        spectral_gap,
    )
    from ._positional import PositionalAttention
    from ._sinkhorn import SinkhornAttention, SinkhornWarning
    from ._softmax import (
        MultiHeadAttention,
        NoAttention,
        RandomBatchAttention,
        SoftmaxAttention,
        random_batch_attention,
        softmax_attention,
    )
    from ._variants import (
        QK_KINDS,
        V_KINDS,
        CausalSoftmaxAttention,
        L2Attention,
        RandomMatrixAttention,
        UnnormalizedAttention,
        random_qk,
        random_value,
    )

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
