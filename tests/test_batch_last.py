"""Many small runs batch-last (``core._batch_last``, ``dynamics._batch_last``): every operation and the whole run
equal the usual layout bit for bit, the engine takes only the runs it computes exactly, and each equality check
fails for a named near miss (a fused product, torch's exp, torch's sqrt)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_counter_rng import SEEDS

import sdeformer.dynamics._batch_last as engine
from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.config import ModelConfig
from sdeformer.core import _batch_last as ops
from sdeformer.core._counter import CounterStreams
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import project
from sdeformer.core._splitmix import SplitMixStreams
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.dynamics._engine import build_batched
from sdeformer.dynamics._loop import SaveAt
from sdeformer.dynamics._norms.schemes import PreLN

DTYPES = (torch.float32, torch.float64)


def _last(x: torch.Tensor) -> torch.Tensor:
    return x.permute(1, 2, 0).contiguous()  # (B, I, J) -> (I, J, B)


def _usual(x: torch.Tensor) -> torch.Tensor:
    return x.permute(2, 0, 1)  # (I, J, B) -> (B, I, J)


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.equal(a, b) and torch.equal(a.signbit(), b.signbit())


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_last_is_bmm_for_every_small_product_and_a_fused_product_is_not(dtype):
    g = torch.Generator().manual_seed(1)
    for i, k, j in ((4, 4, 4), (4, 4, 8), (4, 8, 4), (5, 4, 16), (1, 3, 2), (3, 1, 5)):
        a, b = (torch.randn((3000, *s), generator=g, dtype=dtype) for s in ((i, k), (k, j)))
        a[0], b[0] = -0.0, 1.0  # products -0: torch's loop sums them from +0
        assert _same_bits(_usual(ops.matmul_last(_last(a), _last(b))), torch.bmm(a, b)), (i, k, j)
    # the near miss: each product added with one rounding (a fused multiply-add), emulated exactly in float64
    a, b = (torch.randn((3000, 4, 4), generator=g) for _ in range(2))
    fused = torch.zeros(3000, 4, 4, dtype=torch.float64)
    for kk in range(4):
        fused = (fused + a[:, :, kk : kk + 1].double() * b[:, kk : kk + 1].double()).float().double()
    assert not torch.equal(fused.float(), torch.bmm(a, b))


def test_tree_lanes_add_in_order_for_as_many_entries_as_the_tree_allows():
    assert ops.tree_lanes(4, 8) == (0, 4, 2, 1)
    assert ops.tree_lanes(5, 16) == (0, 8, 4, 2, 1)
    assert ops.tree_lanes(1, 8) == (0,) and ops.tree_lanes(5, 8) is None
    lanes = ops.tree_lanes(4, 8)
    assert lanes is not None
    values = np.array([1.0, 2.0**-24, 2.0**-24, 2.0**-24], dtype=np.float32)  # sums that depend on the order
    row = np.zeros(8, dtype=np.float32)
    row[list(lanes)] = values
    for half in (4, 2, 1):  # the halving tree: lane i plus lane i + half
        row = row[:half] + row[half : 2 * half]
    in_order = ((values[0] + values[1]) + values[2]) + values[3]
    assert row[0] == in_order and row[0] != np.float32(1.0) + (values[1] + values[2] + values[3])


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_last_is_torchs_softmax_and_torch_exp_is_not(dtype):
    g = torch.Generator().manual_seed(2)
    for keys in range(1, 7):
        s = torch.randn((2000, 3, keys), generator=g, dtype=dtype) * torch.tensor([0.01, 1.0, 30.0], dtype=dtype).view(
            1, 3, 1
        )
        assert torch.equal(_usual(ops.softmax_last(_last(s))), torch.softmax(s, -1)), keys
    if dtype == torch.float32 and ops.simd_width(dtype) == 8:  # this CPU: the padded form runs for 4 keys
        assert ops.softmax_plan(4, dtype) == ((0, 4, 2, 1), 8)
    s = torch.randn((2000, 4, 4), generator=g, dtype=dtype) * 5
    e = torch.exp(s - s.amax(-1, keepdim=True))  # the near miss: the same steps with torch.exp
    by_hand = e * (1 / (((e[..., :1] + e[..., 1:2]) + e[..., 2:3]) + e[..., 3:]))
    assert not torch.equal(by_hand, torch.softmax(s, -1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_project_last_is_project_for_every_dimension_and_torch_sqrt_is_not(dtype):
    g = torch.Generator().manual_seed(3)
    for d in range(2, 10):
        v = torch.randn((3000, 4, d), generator=g, dtype=dtype) * torch.rand((3000, 4, 1), generator=g, dtype=dtype)
        assert torch.equal(_usual(ops.project_last(_last(v))), project(v)), d
    if ops.simd_width(dtype) in (4, 8):  # an AVX2 CPU (this one): the in-order form serves d = 4
        assert ops.norm_holds(4, dtype)
    v = torch.randn((3000, 4, 4), generator=g, dtype=dtype)
    squares = v * v  # the near miss: the same sum with torch's sqrt
    by_hand = (((squares[..., :1] + squares[..., 1:2]) + squares[..., 2:3]) + squares[..., 3:]).sqrt()
    assert not torch.equal(by_hand, torch.linalg.vector_norm(v, dim=-1, keepdim=True))


@pytest.mark.parametrize("source", [SplitMixStreams, CounterStreams, Streams])
def test_normals_batch_last_are_the_sources_numbers(source):
    a, b = source(SEEDS, (6,)), source(SEEDS, (6,))
    for shape, dtype in (
        ((8, 4), torch.float32),
        ((7,), torch.float32),
        ((3, 3), torch.float64),
        ((5,), torch.bfloat16),
    ):
        usual, last = a.randn(shape, dtype), engine.normals(b, shape, dtype)
        assert last.shape == (*shape, 6) and torch.equal(last.movedim(-1, 0), usual)
    if source is not Streams:  # unequal counters: the per-stream keys
        state = [torch.tensor([k % 3]) for k in range(6)]
        a.set_state(state)
        b.set_state(state)
        assert torch.equal(engine.normals(b, (9,), torch.float32).movedim(-1, 0), a.randn((9,)))


CASES = [
    ({}, "splitmix"),
    ({"su": 0.5, "sw": 0.3}, "splitmix"),
    ({"activation": "leaky_relu:0.1", "beta": 2.5}, "counter"),
    ({"dtype": "float64"}, "splitmix"),
    ({"mlp": False}, "generator"),
    ({"attention": "off"}, "generator"),
    ({"tokens": 3, "dim": 5, "width": 12}, "splitmix"),
]


@pytest.mark.parametrize("kwargs,rng", CASES)
def test_a_run_batch_last_equals_the_usual_layout_bit_for_bit(kwargs, rng, monkeypatch, one_thread):
    monkeypatch.setattr(engine, "MIN_RUNS", 8)
    cfg = ModelConfig(**{"tokens": 4, "dim": 4, "width": 8, "layers": 5, **kwargs})
    model = cfg.build()
    dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
    x0 = torch.randn(40, cfg.tokens, cfg.dim, generator=torch.Generator().manual_seed(0), dtype=dtype)
    assert engine.applies(model, x0, Streams(0, (40,)), ())
    fast = model.run(x0, seed=list(range(40)), rng=rng)
    assert model.clock == 5
    model.batch_last = False
    usual = model.run(x0, seed=list(range(40)), rng=rng)
    assert _same_bits(fast.x, usual.x) and torch.equal(fast.steps, usual.steps)
    for k in (0, 23):  # and batched equals unbatched: run k alone
        assert _same_bits(fast.x[:, k], model.run(x0[k], seed=k, rng=rng).x)
    # a run resumed in two segments from its streams, and only the last state kept
    model.batch_last = True
    streams = SplitMixStreams(list(range(40)), (40,)) if rng == "splitmix" else None
    if streams is not None:
        half = model.run(x0, streams=streams, stop=2, saveat=SaveAt(final_only=True)).final
        rest = model.run(half, streams=streams, start=2, saveat=SaveAt(final_only=True)).final
        assert _same_bits(rest, usual.final)


def test_a_phase_diagrams_batch_one_setting_per_run_equals_the_usual_layout(monkeypatch, one_thread):
    monkeypatch.setattr(engine, "MIN_RUNS", 8)
    configs = [
        ModelConfig(
            tokens=4, dim=4, width=8, layers=4, beta=b, su=su, sw=0.1 * k, attention_scale=s, seed=k, rng="splitmix"
        )
        for k, (b, su, s) in enumerate((b, su, s) for b in (0.5, 1.0, 3.7) for su in (0.0, 0.3) for s in (1.0, -0.6))
    ]
    model = build_batched(configs)
    assert isinstance(model, StochasticTransformer)
    x0 = torch.stack([c.initial_tokens("cpu") for c in configs])
    streams = [SplitMixStreams([c.seed for c in configs], (len(configs),)) for _ in range(2)]
    assert engine.applies(model, x0, streams[0], ())
    fast = model.run(x0, streams=streams[0])
    model.batch_last = False
    assert _same_bits(fast.x, model.run(x0, streams=streams[1]).x)


def test_the_engine_takes_only_the_runs_it_computes_exactly(monkeypatch):
    monkeypatch.setattr(engine, "MIN_RUNS", 8)
    x = torch.randn(16, 4, 4)
    source = Streams(0, (16,))
    base = ModelConfig(tokens=4, dim=4, width=8, layers=3)
    assert engine.applies(base.build(), x, source, ())
    refused = {
        "an observer": (base.build(), x, source, (lambda k, t, s: None,)),
        "too few runs": (base.build(), x[:4], Streams(0, (4,)), ()),
        "a batch of batches": (base.build(), x.reshape(4, 4, 4, 4), Streams(0, (4, 4)), ()),
        "another source batch": (base.build(), x, Streams(0, (2, 8)), ()),
        "a causal mask": (base.replace(causal=True).build(), x, source, ()),
        "Pre-LN": (base.replace(norm="pre").build(), x, source, ()),
        "a wide MLP (N d m >= 400)": (base.replace(width=32).build(), x, source, ()),
        "a smooth activation": (base.replace(activation="tanh").build(), x, source, ()),
        "float16 tokens": (base.build(), x.half(), source, ()),
        "gradients": (base.build(), x.clone().requires_grad_(), source, ()),
    }
    for why, (model, tokens, src, observers) in refused.items():
        assert not engine.applies(model, tokens, src, observers), why
    model = base.build()
    model.attention = SoftmaxAttention(beta=torch.ones(5))  # per-run values for another batch: the usual error
    assert not engine.applies(model, x, source, ())
    model.attention = SoftmaxAttention(Q=torch.eye(4), K=torch.eye(4), V=torch.eye(4))
    assert not engine.applies(model, x, source, ())
    model.norm = PreLN()
    assert not engine.applies(model, x, source, ())
