"""Counter-based standard normals: a ``contracts.RandomSource`` without a Python loop over the batch
(THEORY section 1: one noise stream per run; docs/design.md: no global RNG). ``ModelConfig(rng="counter")``
selects it (``core._rng.make_streams``).

``CounterStreams(seed, batch, device)`` takes its seeds exactly as ``core._rng.Streams`` does (``rng.seed_list``)
and returns the same shapes, ``randn(shape, dtype)`` -> ``(*batch, *shape)``, but every number is a pure
function of (the run's seed, the run's draw counter, the draw's size, the index in the draw):

- the bits: Philox-4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11; the generator of cuRAND and of torch's CUDA
  RNG) with key = the 63-bit seed (low, high 32 bits) and counter = (draw counter low, block q, draw counter
  high, 0); one block gives four 32-bit words. It runs in int64 torch ops on the tensors' device for the whole
  batch at once, in place, in chunks of ``CHUNK_BLOCKS`` blocks (``CUDA_CHUNK_BLOCKS`` on a GPU). Only the
  block word c1 varies inside a stream, so rounds 1-4 are mostly per-stream work (``row_terms``): 80 passes over
  a chunk instead of 104. ``philox`` reproduces the published known-answer vectors (tests/test_counter_rng.py).
- the transform: inverse CDF, z = sqrt(2) erfinv(x) with x = (2k + 1 - 2^b) / 2^b exactly representable,
  symmetric, never +-1. float32: b = 24 and five normals per block (k = the low 24 bits of words 0-3, and the
  top bytes of words 0, 1, 2; |z| <= 5.42); float64: b = 53 and two normals per block (21 high bits of word 2i,
  the 32 of word 2i + 1; |z| <= 8.29). bfloat16 and float16 draws are the float32 normals rounded. A draw of n
  normals uses Q = ceil(n / p) blocks (p = 5 or 2) lane-major: normal j comes from block j mod Q, lane j div Q,
  so each lane is a contiguous run of the output and nothing is copied after the transform.
- the state: one int64 draw counter per stream (``get_state`` / ``set_state``, the interface of
  ``rng.Streams`` that ``experiments._simulate`` checkpoints); each ``randn`` call advances it by one. A stream
  holds up to 2^63 draws of up to 5 (2^32 - 1) (float32) or 2 (2^32 - 1) (float64) normals each.

Speed (docs/benchmarks.md, "Counter-based randomness"; one CPU thread): 2.4x torch.randn's time at 1,024 runs
and 1.9x at 8,192 in float32, 1.1x in float64; the generator loop is faster on a CPU (1.6-1.9x at those
batches). On a GPU the loop is one kernel launch per run and draw, the counter ~130 per draw for any batch.

Which forms are bitwise equal (tested): the integer words are exact on every device. On one device type and
torch build, element k of a batched draw equals the draw of stream k alone (``CounterStreams(seeds[k], ())``
for an unbatched run), for any batch shape, grouping, chunking, executor, worker count and thread count,
because every float operation here (conversion, multiplication by a power of two, an exact addition, erfinv)
is elementwise and torch evaluates erfinv by one scalar function in its vectorised and tail loops (checked by
the test of groupings). CPU and CUDA share the words but may round erfinv differently (last ulp).

Batch of one against no batch dimension: the streams give the same numbers in both forms (seed s alone and
``[s]`` as a batch of one; an int seed of a batched source is the root of ``rng.derive_seeds``, as in
``Streams``). Where a run ``(N, d)`` and the same run ``(1, N, d)`` differ, the difference comes from a float
op of the model (a BLAS that picks another kernel for a 2-D product than for a batched one), never from the
numbers drawn; the engine passes every run's seed and equals the unbatched run bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import torch

from ._errors import ConfigError
from ._rng import Seeds, seed_list
from ._shapes import broadcast_shape

MASK = 0xFFFFFFFF
PHILOX_M = (0xD2511F53, 0xCD9E8D57)  # the Philox-4x32 multipliers
PHILOX_W = (0x9E3779B9, 0xBB67AE85)  # its Weyl key increments
ROUNDS = 10
CHUNK_BLOCKS = 1 << 17  # blocks per chunk on a CPU: ~100 torch ops of 1 MB each (docs/benchmarks.md: 2^15-2^19)
CUDA_CHUNK_BLOCKS = 1 << 22  # on a GPU: each of the ~100 kernels of a chunk then moves 32 MB
SQRT2 = math.sqrt(2.0)
LANES = {torch.float32: 5, torch.float64: 2}  # normals per Philox block
LOWEST_POINT = torch.tensor(2.0**-24 - 1)  # the float32 transform's point for k = 0 (a 0-dim tensor, made once)

Word = torch.Tensor | int
K = TypeVar("K", int, torch.Tensor)


def key_schedule(k0: K, k1: K) -> list[tuple[K, K]]:
    """The ROUNDS round keys (k0 + r W0, k1 + r W1) mod 2^32 of the key (k0, k1) (ints or int64 tensors)."""
    return [((k0 + r * PHILOX_W[0]) & MASK, (k1 + r * PHILOX_W[1]) & MASK) for r in range(ROUNDS)]


def _hi(p: torch.Tensor) -> torch.Tensor:
    """The high word of 64-bit products (int64 wraps: shift, then clear the sign's copies)."""
    return (p >> 32) & MASK


def row_terms(c0: Word, c2: Word, c3: Word, keys: Sequence[tuple[Word, Word]]) -> list[torch.Tensor]:
    """The part of Philox rounds 1-4 that does not depend on the block word c1: from the per-stream words
    (c0, c2, c3) and the round keys (ints or int64 tensors, e.g. ``(B, 1)``), the terms [t1, r2, r3a, r3b, r4]
    with round 1 c0' = t1 ^ c1, round 2 c2'' = hi(M0 c0') ^ r2, round 3 c0''' = hi(M1 c2'') ^ r3a and
    c2''' = lo(M0 c0') ^ r3b, round 4 c2'''' = hi(M0 c0''') ^ r4 (``philox_words``)."""
    c0, c2, c3 = (torch.as_tensor(w, dtype=torch.int64) for w in (c0, c2, c3))
    (a0, b0), (a1, b1), (a2, b2), (_, b3) = keys[:4]
    p0, p1 = c0 * PHILOX_M[0], c2 * PHILOX_M[1]  # round 1
    t1, c1r, c2r, c3r = _hi(p1) ^ a0, p1 & MASK, _hi(p0) ^ c3 ^ b0, p0 & MASK
    p1 = c2r * PHILOX_M[1]  # round 2: c0'', c1'' are per-stream words
    c0r, c1r = _hi(p1) ^ c1r ^ a1, p1 & MASK
    p0 = c0r * PHILOX_M[0]  # round 3: c3''' = lo(p0) is a per-stream word
    return [torch.as_tensor(t) for t in (t1, c3r ^ b1, c1r ^ a2, _hi(p0) ^ b2, (p0 & MASK) ^ b3)]


def philox_words(
    terms: Sequence[torch.Tensor],
    c1: torch.Tensor,
    keys: Sequence[tuple[Word, Word]],
    shape: tuple[int, ...],
    scratch: torch.Tensor,
) -> list[torch.Tensor]:
    """Philox-4x32-10 of the counters with block word ``c1`` (int64) and the rest given by ``row_terms``, in
    place in ``scratch`` (flat int64, >= 5 prod(shape) elements; ``shape``: the broadcast of c1, the terms and
    the keys): the four words, ``shape`` each; words 0 and 2 in [0, 2^32), words 1 and 3 (the last products)
    with the high word above bit 31, to be cleared where they are used."""
    t1, r2, r3a, r3b, r4 = terms
    size = math.prod(shape)
    s = [scratch[i * size : (i + 1) * size].view(shape) for i in range(5)]
    c3 = torch.bitwise_xor(t1, c1, out=s[0]).mul_(PHILOX_M[0])  # c0' (round 1), its product (round 2)
    c2 = torch.bitwise_right_shift(c3, 32, out=s[1]).bitwise_xor_(r2).bitwise_and_(MASK)
    c1 = c2.mul_(PHILOX_M[1])  # round 3
    c0 = torch.bitwise_right_shift(c1, 32, out=s[2]).bitwise_xor_(r3a).bitwise_and_(MASK)
    c2 = c3.bitwise_xor_(r3b).bitwise_and_(MASK)
    c0.mul_(PHILOX_M[0])  # round 4: c3''' is in r4
    c2.mul_(PHILOX_M[1])
    t = s[3]
    c1.bitwise_xor_(torch.bitwise_right_shift(c2, 32, out=t)).bitwise_xor_(keys[3][0]).bitwise_and_(MASK)
    n2 = torch.bitwise_right_shift(c0, 32, out=s[4]).bitwise_xor_(r4).bitwise_and_(MASK)
    c0, c1, c2, c3 = c1, c2, n2, c0
    for k0, k1 in keys[4:]:  # (c0, c1, c2, c3) -> (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0))
        c0.mul_(PHILOX_M[0])
        c2.mul_(PHILOX_M[1])
        c1.bitwise_xor_(torch.bitwise_right_shift(c2, 32, out=t)).bitwise_xor_(k0).bitwise_and_(MASK)
        c3.bitwise_xor_(torch.bitwise_right_shift(c0, 32, out=t)).bitwise_xor_(k1).bitwise_and_(MASK)
        c0, c1, c2, c3 = c1, c2, c3, c0
    return [c0, c1, c2, c3]


def philox(counter: Sequence[Word], keys: Sequence[tuple[Word, Word]]) -> torch.Tensor:
    """Philox-4x32-10 of the counter words (c0, c1, c2, c3) (ints or int64 tensors that broadcast, each in
    [0, 2^32)) under the round keys ``key_schedule(k0, k1)``: the four output words stacked, ``(4, *shape)``
    int64, each in [0, 2^32)."""
    c0, c1, c2, c3 = (torch.as_tensor(w, dtype=torch.int64) for w in counter)
    terms = row_terms(c0, c2, c3, keys)
    shape = broadcast_shape(c1.shape, *(t.shape for t in terms))
    if shape is None:
        raise ConfigError("counter", [tuple(w.shape) for w in (c0, c1, c2, c3)], "words whose shapes broadcast")
    scratch = torch.empty(5 * math.prod(shape), dtype=torch.int64, device=c1.device)
    return torch.stack(philox_words(terms, c1, keys, shape, scratch)) & MASK


def _lanes(out: torch.Tensor, rows: slice, q0: int, q1: int, blocks: int) -> list[torch.Tensor]:
    """The output columns of blocks q0..q1-1 in each lane of ``out`` ``(B, n)`` (lane i: columns i Q + q), each
    ``(r, L)`` with L <= q1 - q0 (the last lanes may be short or empty)."""
    n = out.shape[1]
    return [out[rows, i * blocks + q0 : min(i * blocks + q1, n)] for i in range(-(-n // blocks))]


def _normals32(words: list[torch.Tensor], lanes: list[torch.Tensor], spare: torch.Tensor) -> None:
    """float32 integers k in [0, 2^24) into the lane views from one chunk's words (changed in place); ``spare``:
    >= 4 prod(F) uint8 scratch, zero beyond the bytes written here. Lanes 0-3: the low 24 bits of words 0-3; lane
    4: the top bytes of words 0, 1, 2 (byte 3 of each little-endian int64 word), read first."""
    sources = list(words)
    if len(lanes) == 5:
        b = spare[: 4 * words[0].numel()].view(*words[0].shape, 4)  # (r, q, 4): an int32 per block
        for i in range(3):
            b[..., i].copy_(words[i].view(torch.uint8)[..., 3::8])
        sources.append(b.view(torch.int32)[..., 0])
    for i, (src, lane) in enumerate(zip(sources, lanes)):
        if lane.numel():
            lane.copy_((src.bitwise_and_(0xFFFFFF) if i < 4 else src)[:, : lane.shape[1]])


def _normals64(words: list[torch.Tensor], lanes: list[torch.Tensor]) -> None:
    """float64 odd integers 2k + 1 - 2^53 into the lane views, k = 21 high bits of word 2i, 32 bits of word 2i + 1
    (every step exact in int64)."""
    for i, lane in enumerate(lanes):
        if lane.numel():
            hi, lo = words[2 * i], words[2 * i + 1]
            hi.bitwise_right_shift_(11).bitwise_left_shift_(33).add_(lo.bitwise_and_(MASK), alpha=2)
            lane.copy_(hi.sub_((1 << 53) - 1)[:, : lane.shape[1]])


def _inverse_cdf(x: torch.Tensor) -> None:
    """In place: the integer k (float32: 24 bits) or odd 2k + 1 - 2^53 (float64) -> sqrt(2) erfinv of the
    symmetric point (2k + 1 - 2^b) 2^-b; every step exact up to erfinv."""
    if x.dtype == torch.float64:
        x.mul_(2.0**-53)
    else:  # (2^-24 - 1) + 2^-23 k in one pass: k 2^-23 is exact, so is the sum
        torch.sub(LOWEST_POINT, x, alpha=-(2.0**-23), out=x)
    x.erfinv_().mul_(SQRT2)


class DrawCounted:
    """The state and interface both counter-based sources share (``CounterStreams``, ``_splitmix.SplitMixStreams``):
    one stream per batch element, seeded as ``rng.Streams`` (an int for one run or the root of a batch, a list of
    one seed per element, None = 0), and one int64 draw counter per stream that every ``randn`` call advances by
    one. A subclass fills ``_fill(out)``: ``out`` ``(B, n)`` in float32 or float64, row k from stream k's seed and
    counter. Raises ConfigError for bad seeds, a non-floating dtype and a state of another kind."""

    def __init__(self, seed: Seeds, batch: tuple[int, ...], device: str | torch.device = "cpu"):
        self.batch = tuple(batch)
        self.device = torch.device(device)
        self.seeds = seed_list(seed, self.batch)
        self.draws = torch.zeros((len(self.seeds), 1), dtype=torch.int64, device=self.device)  # (B, 1)

    def get_state(self) -> list[torch.Tensor]:
        """Each stream's draw counter, an int64 tensor ``(1,)`` on the CPU (for checkpoints; a copy, which later
        draws leave as it is); see ``set_state``."""
        return list(self.draws.cpu().clone().unbind(0))

    def set_state(self, states: Sequence[torch.Tensor]) -> None:
        """Restore ``get_state()``: one draw counter per stream (int64, one entry each)."""
        if len(states) != len(self.seeds) or any(
            s.dtype != torch.int64 or s.numel() != 1 or int(s) < 0 for s in states
        ):
            raise ConfigError(
                "state", f"{len(states)} states", f"one int64 draw counter >= 0 per stream ({len(self.seeds)})"
            )
        self.draws = torch.stack([s.reshape(1) for s in states]).to(self.device)

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """Standard normals ``(*batch, *shape)``; row k from stream k's seed and draw counter (then advanced)."""
        shape, work = self._draw_shape(shape, dtype)
        out = torch.empty((len(self.seeds), math.prod(shape)), dtype=work, device=self.device)  # (B, n)
        if out.numel():
            self._fill(out)
        self._advance()
        return out.reshape(self.batch + shape).to(dtype)

    def skip(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> None:
        """Count one draw of ``shape`` without making its numbers (``core._rng.skip``): the counters advance as
        ``randn`` advances them."""
        self._draw_shape(shape, dtype)
        self._advance()

    def _draw_shape(self, shape: tuple[int, ...], dtype: torch.dtype) -> tuple[tuple[int, ...], torch.dtype]:
        """The shape as ints and the dtype the normals are made in; ConfigError for a non-floating dtype."""
        if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
            raise ConfigError("dtype", dtype, "a floating torch dtype (float32, float64, bfloat16, float16)")
        shape = tuple(int(n) for n in shape)
        work = torch.float64 if dtype == torch.float64 else torch.float32
        self._check_size(shape, math.prod(shape), work)
        return shape, work

    def _advance(self) -> None:
        self.draws += 1  # one draw done

    def _check_size(self, shape: tuple[int, ...], n: int, work: torch.dtype) -> None:
        """ConfigError naming ``shape`` where one draw of ``n`` normals exceeds the source's counter layout."""

    def _fill(self, out: torch.Tensor) -> None:
        raise NotImplementedError


class CounterStreams(DrawCounted):
    """One Philox stream per batch element: ``randn(shape, dtype)`` -> ``(*batch, *shape)`` (a
    ``contracts.RandomSource``; ``DrawCounted``). Raises ConfigError as ``DrawCounted`` does and for a draw too
    large for the counter layout."""

    def __init__(self, seed: Seeds, batch: tuple[int, ...], device: str | torch.device = "cpu"):
        super().__init__(seed, batch, device)
        s = torch.tensor(self.seeds, dtype=torch.int64, device=self.device).reshape(-1, 1)  # (B, 1)
        self.keys = key_schedule(s & MASK, s >> 32)  # ROUNDS pairs of (B, 1)
        self._buffers: tuple[torch.Tensor, torch.Tensor] | None = None

    def _check_size(self, shape: tuple[int, ...], n: int, work: torch.dtype) -> None:
        if -(-n // LANES[work]) > MASK:
            raise ConfigError("shape", shape, f"at most {MASK * LANES[work]} normals per stream and draw")

    def _scratch(self, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """int64 (>= 5 size) and zeroed uint8 (>= 4 size) buffers, kept from call to call: no fresh pages per draw."""
        if self._buffers is None or self._buffers[1].numel() < 4 * size:
            self._buffers = (
                torch.empty(5 * size, dtype=torch.int64, device=self.device),
                torch.zeros(4 * size, dtype=torch.uint8, device=self.device),
            )
        return self._buffers

    def _fill(self, out: torch.Tensor) -> None:
        """``out`` ``(B, n)`` chunk by chunk: rows of streams times ranges of blocks, at most a chunk's blocks."""
        rows, blocks = out.shape[0], -(-out.shape[1] // LANES[out.dtype])
        chunk = CUDA_CHUNK_BLOCKS if self.device.type == "cuda" else CHUNK_BLOCKS
        row_step, block_step = max(1, chunk // blocks), min(blocks, chunk)
        scratch, spare = self._scratch(min(rows, row_step) * block_step)
        spare = spare if out.dtype == torch.float32 else None
        d = self.draws
        terms = row_terms(d & MASK, d >> 32, 0, self.keys)  # (B, 1) each
        for r0 in range(0, rows, row_step):
            r = slice(r0, min(rows, r0 + row_step))
            part = [t[r] for t in terms] if row_step < rows else terms
            keys = [(k0[r], k1[r]) for k0, k1 in self.keys] if row_step < rows else self.keys
            for q0 in range(0, blocks, block_step):
                q1 = min(blocks, q0 + block_step)
                c1 = torch.arange(q0, q1, dtype=torch.int64, device=self.device).unsqueeze(0)  # (1, q)
                words = philox_words(part, c1, keys, (r.stop - r.start, q1 - q0), scratch)
                lanes = _lanes(out, r, q0, q1, blocks)
                if spare is None:
                    _normals64(words, lanes)
                else:
                    _normals32(words, lanes, spare)
                for lane in [out[r]] if q1 - q0 == blocks else lanes:  # whole rows: one pass each
                    _inverse_cdf(lane)
