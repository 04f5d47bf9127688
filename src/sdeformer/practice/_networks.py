"""Small pre-norm transformers for the practice tasks: a causal character model and a ViT for MNIST.

Both are ``TinyTransformer``s (embeddings -> ``blocks`` -> final norm), so ``sdeformer.nn.attach`` finds
their blocks like a Hugging Face model's. Two training-time methods live inside the model because they
act on its internals: NEFTune embedding noise (uniform in [-1, 1] times ``alpha / sqrt(N d)``) and
stochastic depth (each residual branch dropped per sequence with probability ``drop_path``, kept
branches divided by the keep probability). Both are off in eval mode. Their randomness comes from
``model.generator`` (set by the trainer), never from the global RNG.

The attention kernel of every block is ``attention_fn(q, k, v, causal)`` with q, k, v ``(B, H, N, dh)``;
``sdeformer.practice._inference`` swaps it for random-batch attention.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

AttentionFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, bool], torch.Tensor]


def full_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """Exact softmax attention, ``(B, H, N, dh)`` -> ``(B, H, N, dh)``."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


@dataclass(frozen=True)
class NetConfig:
    """The shape of a trained practice network (not ``sdeformer.config.ModelConfig``, the simulated model)."""

    dim: int = 128  # token dimension d
    layers: int = 4  # number of blocks L
    heads: int = 4  # attention heads
    mlp_ratio: int = 4  # MLP hidden width / d
    drop_path: float = 0.0  # stochastic depth: drop probability of the last block (linear in depth)
    neftune_alpha: float = 0.0  # NEFTune embedding-noise strength (0 = off)


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, causal: bool):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.attention_fn: AttentionFn = full_attention

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)  # 3 x (B, H, N, dh)
        y = self.attention_fn(q, k, v, self.causal)  # (B, H, N, dh)
        return self.out(y.transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    """x <- x + Attn(LN x); x <- x + MLP(LN x), with optional stochastic depth on both branches."""

    def __init__(self, cfg: NetConfig, causal: bool, drop_path: float):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(cfg.dim), nn.LayerNorm(cfg.dim)
        self.attn = SelfAttention(cfg.dim, cfg.heads, causal)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.dim, cfg.mlp_ratio * cfg.dim), nn.GELU(), nn.Linear(cfg.mlp_ratio * cfg.dim, cfg.dim)
        )
        self.drop_path = drop_path
        self.generator: torch.Generator | None = None

    def _branch(self, h: torch.Tensor) -> torch.Tensor:
        if not self.training or self.drop_path == 0.0:
            return h
        keep = 1.0 - self.drop_path
        mask = torch.rand(h.shape[0], 1, 1, generator=self.generator, device=h.device) < keep  # (B, 1, 1)
        return h * mask.to(h.dtype) / keep

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self._branch(self.attn(self.norm1(x)))  # (B, N, d)
        return x + self._branch(self.mlp(self.norm2(x)))


class TinyTransformer(nn.Module):
    """Blocks with stochastic depth rates ``drop_path * (l + 1) / L`` and NEFTune on the input embeddings."""

    def __init__(self, cfg: NetConfig, causal: bool):
        super().__init__()
        self.cfg = cfg
        rates = [cfg.drop_path * (i + 1) / cfg.layers for i in range(cfg.layers)]
        self.blocks = nn.ModuleList(Block(cfg, causal, r) for r in rates)
        self.norm = nn.LayerNorm(cfg.dim)
        self.generator: torch.Generator | None = None

    def set_generator(self, generator: torch.Generator) -> None:
        """The source of NEFTune and stochastic-depth randomness."""
        self.generator = generator
        for b in self.blocks:
            cast(Block, b).generator = generator

    def embed_noise(self, e: torch.Tensor) -> torch.Tensor:
        """NEFTune: ``e + alpha / sqrt(N d) * Uniform(-1, 1)`` in training. ``(B, N, d)``."""
        if not self.training or self.cfg.neftune_alpha == 0.0:
            return e
        n, d = e.shape[-2:]
        u = torch.rand(e.shape, generator=self.generator, device=e.device, dtype=e.dtype) * 2 - 1  # (B, N, d)
        return e + self.cfg.neftune_alpha / math.sqrt(n * d) * u

    def encode(self, e: torch.Tensor) -> torch.Tensor:
        x = self.embed_noise(e)  # (B, N, d)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)

    def set_attention(self, fn: AttentionFn) -> None:
        for b in self.blocks:
            cast(Block, b).attn.attention_fn = fn


class CharTransformer(TinyTransformer):
    """Causal character language model: ``forward(idx (B, N)) -> logits (B, N, vocab)``."""

    def __init__(self, cfg: NetConfig, vocab: int, context: int):
        super().__init__(cfg, causal=True)
        self.context = context
        self.tok = nn.Embedding(vocab, cfg.dim)
        self.pos = nn.Parameter(torch.randn(context, cfg.dim) * 0.02)
        self.head = nn.Linear(cfg.dim, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        e = self.tok(idx) + self.pos[: idx.shape[-1]]  # (B, N, d)
        return self.head(self.encode(e))


class ViT(TinyTransformer):
    """Vision transformer for 28 x 28 images: ``patch`` x ``patch`` patches plus a class token."""

    def __init__(self, cfg: NetConfig, patch: int = 7, classes: int = 10, side: int = 28):
        super().__init__(cfg, causal=False)
        self.patch = patch
        n = (side // patch) ** 2
        self.proj = nn.Linear(patch * patch, cfg.dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, cfg.dim))
        self.pos = nn.Parameter(torch.randn(n + 1, cfg.dim) * 0.02)
        self.head = nn.Linear(cfg.dim, classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        b, p = images.shape[0], self.patch
        patches = images.unfold(1, p, p).unfold(2, p, p).reshape(b, -1, p * p)  # (B, n, p^2)
        e = torch.cat([self.cls.expand(b, -1, -1), self.proj(patches)], dim=1) + self.pos  # (B, n + 1, d)
        return self.head(self.encode(e)[:, 0])
