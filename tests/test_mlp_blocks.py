"""The MLP field in token blocks (issue 42): from ``BLOCK_FROM`` tokens its hidden layer is (block, m), with the
values of the whole (N, m) product, and batched equals unbatched."""

from __future__ import annotations

import pytest
import torch

from sdeformer.core._rng import make_streams
from sdeformer.noise import _mlp
from sdeformer.noise._mlp import BLOCK_FROM, TOKEN_BLOCK, MLPNoise


@pytest.mark.kernels
def test_blocks_give_the_whole_products_values_and_batched_equals_unbatched(monkeypatch):
    n = BLOCK_FROM + TOKEN_BLOCK // 3  # a ragged last block
    noise = MLPNoise("relu", 64, su=0.5, sw=0.5)
    y = torch.nn.functional.normalize(torch.randn(2, n, 3, generator=torch.Generator().manual_seed(0)), dim=-1)
    p = noise.sample(3, make_streams("generator", 0, (2,), y.device), y)
    blocked = noise.apply(p, y)  # (2, N, d)
    one = noise.apply(type(p)(p.U[1], p.bU[1], p.W[1], p.bW[1]), y[1].contiguous())  # pyright: ignore[reportOptionalSubscript]
    assert torch.equal(blocked[1], one)
    monkeypatch.setattr(_mlp, "BLOCK_FROM", n + 1)  # the whole (N, m) hidden layer
    whole = noise.apply(p, y)
    assert torch.equal(blocked, whole)  # row i of a product is row i of its block (seen on default, avx2, avx512)
    assert blocked.abs().max() > 0.1  # not vacuous
