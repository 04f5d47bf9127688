"""Which tokens a real model's statistics are taken on, and the massive tokens that would otherwise drive them
(docs/real.md, "Token hygiene"; THEORY section 1: the theory's tokens are exchangeable).

A trained transformer parks most of its MLP output on a few tokens: all-MiniLM-L6-v2's [CLS] carries 60-97 % of
``sum_i |f_i|^2`` in blocks 1-4, a decoder's first token up to 100 %. One such token sets the denominators of the
common share and of the kernel curve, which then read about ``1/n`` whatever the other tokens do. ``select``
keeps the content tokens (``TOKEN_RULES``: ``content`` leaves out the tokenizer's special tokens and a causal
model's first token; ``all`` keeps every token); ``massive`` reports, per block, the tokens with
``|f_i|^2 > MASSIVE`` times the sentence's median and their share of ``sum_i |f_i|^2``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..core._errors import ConfigError
from ._load import Capture
from ._stats import bootstrap

TOKEN_RULES = ("content", "all")
MASSIVE = 100.0  # a token is massive in a block when |f|^2 exceeds this many times the sentence's median


def check_rule(rule: str) -> str:
    """``rule`` if it is one of ``TOKEN_RULES``; ConfigError naming ``tokens`` otherwise."""
    if rule not in TOKEN_RULES:
        raise ConfigError("tokens", rule, f"one of {list(TOKEN_RULES)}")
    return rule


def special_mask(ids: Sequence[int], special_ids: set[int], causal: bool) -> torch.Tensor:
    """``(n,)`` True for a special token (its id among the tokenizer's special ids) and, in a causal model, for
    the first token (the attention sink of a decoder, whatever its id)."""
    mask = torch.tensor([int(i) in special_ids for i in ids], dtype=torch.bool)
    if causal and len(mask):
        mask[0] = True
    return mask


def select(cap: Capture, rule: str) -> Capture:
    """The capture restricted to the tokens of ``rule`` (``all``: ``cap`` itself). A sentence with fewer than 2
    content tokens is left out (no pair to measure)."""
    if check_rule(rule) == "all":
        return cap
    out = Capture([], [], [], [], truncated=cap.truncated)
    for k, h in enumerate(cap.hidden):
        keep = ~cap.special[k] if k < len(cap.special) else torch.ones(h.shape[-2], dtype=torch.bool)
        if int(keep.sum()) < 2:
            continue
        for target, source in zip((out.hidden, out.attn, out.mlp_in, out.mlp_out), cap.parts(k), strict=True):
            target.append(source[..., keep, :])
        out.special.append(torch.zeros(int(keep.sum()), dtype=torch.bool))
    if len(out.hidden) < 2:
        raise ConfigError("tokens", rule, "leaves fewer than 2 sentences with 2 or more tokens: use --tokens all")
    return out


def massive(mlp_out: Sequence[torch.Tensor], special: Sequence[torch.Tensor], seed: int = 0) -> dict:
    """Per block (``mlp_out[k]`` ``(L, n, d)``, all tokens): the share of ``sum_i |f_i|^2`` carried by the
    massive tokens (``|f_i|^2 > MASSIVE x`` the sentence's median), averaged over sentences with its 95 %
    interval; the mean number of massive tokens per sentence and the fraction of them that are special."""
    share, count, flagged = [], [], []
    for k, f in enumerate(mlp_out):
        sq = f.double().pow(2).sum(-1)  # (L, n)
        big = sq > MASSIVE * sq.median(-1, keepdim=True).values  # (L, n)
        share.append(((sq * big).sum(-1) / sq.sum(-1)).numpy())
        count.append(big.sum(-1).double().numpy())
        spec = special[k] if k < len(special) else torch.zeros(sq.shape[-1], dtype=torch.bool)
        flagged.append((big & spec).sum(-1).double().numpy())
    share_, count_ = np.stack(share), np.stack(count)  # (S, L)
    lo, hi = bootstrap(share_, seed=seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        special_fraction = np.stack(flagged).sum(0) / count_.sum(0)
    return {
        "massive_share": share_.mean(0).tolist(),
        "massive_share_interval": [lo.tolist(), hi.tolist()],
        "massive_count": count_.mean(0).tolist(),
        "massive_special_fraction": [None if not np.isfinite(v) else float(v) for v in special_fraction],
        "massive_threshold": MASSIVE,
    }
