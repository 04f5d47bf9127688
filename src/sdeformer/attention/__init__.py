"""Attention drifts Attn_X(x) ``(..., N, d) -> (..., N, d)`` (THEORY section 1; BEYOND section 5): the paper's
softmax (``softmax``) and its variants (``variants``)."""
