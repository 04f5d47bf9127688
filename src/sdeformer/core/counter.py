"""Counter-based standard normals: a ``contracts.RandomSource`` without a Python loop over the batch (issue 18;
THEORY section 1: one noise stream per run; docs/design.md: no global RNG).

``CounterStreams(seed, batch, device)`` takes its seeds exactly as ``core.rng.Streams`` does (``rng.seed_list``)
and returns the same shapes, ``randn(shape, dtype)`` -> ``(*batch, *shape)``, but every number is a pure
function of (the run's seed, the run's draw counter, the index in the draw):

- the bits: Philox-4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11; the generator of cuRAND and of torch's CUDA
  RNG) with key = the 63-bit seed (low, high 32 bits) and counter = (block q, draw counter low, high, 0); one
  block gives four 32-bit words (lanes). It is written in int64 torch ops on the tensors' device (a 32 x 32 ->
  64-bit product wraps in int64; its high and low words come out by shift and mask), for the whole batch at
  once, in place, in cache-sized chunks of ``CHUNK_BLOCKS`` blocks; ``philox`` reproduces the published
  known-answer vectors (tests/test_counter_rng.py).
- the transform: inverse CDF, z = sqrt(2) erfinv(x) with x = (2k + 1 - 2^b) / 2^b exactly representable,
  symmetric, never +-1: in float32 k = the top 24 bits of one word (|z| <= 5.42), in float64 53 bits of two
  words (lanes 2i, 2i + 1; |z| <= 8.29). bfloat16 and float16 draws are the float32 normals rounded. A draw of
  n normals uses Q = ceil(n / p) blocks (p = 4 in float32, 2 in float64), lane-major: normal j comes from
  block j mod Q, lane j div Q (so the layout needs no interleaving pass); the numbers are a pure function of
  (seed, draw counter, n, j).
- the state: one int64 draw counter per stream (``get_state`` / ``set_state``, the interface of
  ``rng.Streams`` that ``experiments.simulate`` checkpoints); each ``randn`` call advances it by one. A stream
  holds up to 2^63 draws of up to 2^34 (float32) or 2^33 (float64) normals each.

Which forms are bitwise equal (tested): the integer words are exact on every device. On one device type and
torch build, element k of a batched draw equals the draw of stream k alone (``CounterStreams(seeds[k], ())``
for an unbatched run), for any batch shape, grouping, chunking, executor, worker count and thread count,
because every float operation here (conversion, multiplication by a power of two, erfinv) is elementwise and
torch evaluates it lane by lane (its vectorised and tail loops use the same SLEEF/VML function on this build,
checked by the test of groupings). CPU and CUDA share the words but may round erfinv differently (last ulp).

Batch of one against no batch dimension: the streams give the same numbers in both forms (seed s alone and
``[s]`` as a batch of one; an int seed of a batched source is the root of ``rng.derive_seeds``, as in
``Streams``). The issue's 3.6e-7 (float32) between a run ``(N, d)`` and the same run ``(1, N, d)`` was not
reproduced on this build (torch 2.13 CPU, MKL, 1 and 2 threads): every noise with every attention of the
registries in float32 (N = 8 ... 256, m = 64 ... 2048, direct and conditional sampling, the paper's grid) and
every SDE solver with the Gaussian (all roots) and random-feature fields are equal bit for bit in both forms,
at this commit and at cdb52de. Where such a difference appears it comes from a float op of the model (a BLAS
that picks another kernel for a 2-D product than for a batched one), never from the numbers drawn. By design
different: an attention that draws its own matrices (``attention="random"``) built unbatched for seed s and
then run as a batch of one draws them from ``derive_seeds(s, 1)``; the engine passes every run's seed and
equals the unbatched run bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import torch

from .errors import ConfigError
from .rng import Seeds, seed_list

MASK = 0xFFFFFFFF
PHILOX_M = (0xD2511F53, 0xCD9E8D57)  # the Philox-4x32 multipliers
PHILOX_W = (0x9E3779B9, 0xBB67AE85)  # its Weyl key increments
ROUNDS = 10
CHUNK_BLOCKS = 1 << 17  # Philox blocks per chunk: five int64 buffers of 1 MB (cache-sized), ~100 ops per chunk
SQRT2 = math.sqrt(2.0)

Word = torch.Tensor | int
K = TypeVar("K", int, torch.Tensor)


def key_schedule(k0: K, k1: K) -> list[tuple[K, K]]:
    """The ROUNDS round keys (k0 + r W0, k1 + r W1) mod 2^32 of the key (k0, k1) (ints or int64 tensors)."""
    return [((k0 + r * PHILOX_W[0]) & MASK, (k1 + r * PHILOX_W[1]) & MASK) for r in range(ROUNDS)]


def _round(c: list[torch.Tensor], k0: Word, k1: Word, t: torch.Tensor) -> list[torch.Tensor]:
    """One Philox round in place, (c0, c1, c2, c3) -> (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1,
    lo(M0 c0)): c0, c2 stay exact (32 bits); the words from the products keep garbage above bit 31, cleared
    where they are next used. ``t``: a scratch buffer of the words' shape."""
    c0, c1, c2, c3 = c
    c0.mul_(PHILOX_M[0])  # p0
    c2.mul_(PHILOX_M[1])  # p1
    torch.bitwise_right_shift(c2, 32, out=t)
    c1.bitwise_xor_(t).bitwise_xor_(k0).bitwise_and_(MASK)  # the new c0
    torch.bitwise_right_shift(c0, 32, out=t)
    c3.bitwise_xor_(t).bitwise_xor_(k1).bitwise_and_(MASK)  # the new c2
    return [c1, c2, c3, c0]


def philox(
    counter: Sequence[Word], keys: Sequence[tuple[Word, Word]], scratch: torch.Tensor | None = None
) -> torch.Tensor:
    """Philox-4x32-10 of the counter words (c0, c1, c2, c3) (int64 tensors that broadcast, or ints; each in
    [0, 2^32)) under the round keys ``key_schedule(k0, k1)``: the four output words stacked, ``(4, *shape)``
    int64, each in [0, 2^32). ``scratch``: a flat int64 tensor of at least 5 x prod(shape) elements to compute
    in (large fresh tensors cost page faults); the result is a view of its start."""
    words = [torch.as_tensor(w, dtype=torch.int64) for w in counter]
    rank = max(w.dim() for w in words)  # the broadcast shape (torch.broadcast_shapes imports sympy at first use)
    shape = tuple(max(sizes) for sizes in zip(*((1,) * (rank - w.dim()) + tuple(w.shape) for w in words)))
    size = math.prod(shape)
    if scratch is None:
        scratch = torch.empty(5 * size, dtype=torch.int64, device=words[0].device)
    slots = [scratch[i * size : (i + 1) * size].view(shape) for i in range(5)]
    # a round moves word i into the buffer of word i + 1: start word j in slot j - ROUNDS, end in slot order
    c = [slots[(j - len(keys)) % 4] for j in range(4)]
    for buf, w in zip(c, words):
        buf.copy_(w)  # broadcast to the full shape
    for k0, k1 in keys:
        c = _round(c, k0, k1, slots[4])
    out = scratch[: 4 * size].view(4, *shape)
    out[1::2].bitwise_and_(MASK)  # the low words of the last products
    return out


def _to_normals(w: torch.Tensor, f: torch.Tensor, dest: torch.Tensor) -> None:
    """Standard normals into ``dest`` ``(p, r, q)`` (p = 4 lanes in float32, 2 in float64) from the words ``w``
    ``(4, r, q)`` (int64, changed in place) through ``f`` (scratch of dest's dtype, >= p r q elements):
    z = sqrt(2) erfinv(x), x = (2k + 1 - 2^b) 2^-b, every step exact up to erfinv."""
    p = dest.shape[0]
    x = f[: w[:p].numel()].view(p, *w.shape[1:])  # (p, r, q)
    if p == 2:  # float64: k = 21 high bits of word 2i, then the 32 bits of word 2i + 1
        hi, lo = w[0::2], w[1::2]
        hi.bitwise_right_shift_(11).bitwise_left_shift_(33).bitwise_or_(lo.bitwise_left_shift_(1)).bitwise_or_(1)
        x.copy_(hi.sub_(1 << 53)).mul_(2.0**-53)  # |2k + 1 - 2^53| < 2^53: exact in float64
    else:  # float32: k = the top 24 bits of word i; k 2^-23 + (2^-24 - 1) is exact
        x.copy_(w.bitwise_right_shift_(8)).mul_(2.0**-23).add_(2.0**-24 - 1)
    torch.mul(x.erfinv_(), SQRT2, out=dest)


class CounterStreams:
    """One counter-based stream per batch element: ``randn(shape, dtype)`` -> ``(*batch, *shape)`` (a
    ``contracts.RandomSource``). ``seed``: as ``rng.Streams`` (an int for one run or the root of a batch, a
    list of one seed per element, None = 0). Raises ConfigError for bad seeds, a non-floating dtype, a draw too
    large for the counter layout and a state of another kind."""

    def __init__(self, seed: Seeds, batch: tuple[int, ...], device: str | torch.device = "cpu"):
        self.batch = tuple(batch)
        self.device = torch.device(device)
        self.seeds = seed_list(seed, self.batch)
        s = torch.tensor(self.seeds, dtype=torch.int64, device=self.device).reshape(-1, 1)  # (B, 1)
        self.keys = key_schedule(s & MASK, s >> 32)  # ROUNDS pairs of (B, 1)
        self.draws = torch.zeros((len(self.seeds), 1), dtype=torch.int64, device=self.device)  # (B, 1)

    def get_state(self) -> list[torch.Tensor]:
        """Each stream's draw counter, an int64 tensor ``(1,)`` on the CPU (for checkpoints); see ``set_state``."""
        return list(self.draws.cpu().unbind(0))

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
        if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
            raise ConfigError("dtype", dtype, "a floating torch dtype (float32, float64, bfloat16, float16)")
        shape = tuple(int(n) for n in shape)
        work = torch.float64 if dtype == torch.float64 else torch.float32
        rows, n = len(self.seeds), math.prod(shape)
        per_block = 2 if work == torch.float64 else 4  # normals per Philox block of four words
        blocks = -(-n // per_block)
        if blocks > MASK:
            raise ConfigError("shape", shape, f"at most {MASK * per_block} normals per stream and draw")
        out = torch.empty((rows, per_block, blocks), dtype=work, device=self.device)  # (B, p, Q): lane-major
        row_step, block_step = max(1, CHUNK_BLOCKS // max(blocks, 1)), min(max(blocks, 1), CHUNK_BLOCKS)
        chunk = min(rows * blocks, row_step * block_step)
        scratch = torch.empty(5 * chunk, dtype=torch.int64, device=self.device)
        f = torch.empty(4 * chunk, dtype=work, device=self.device)
        for r0 in range(0, rows if n else 0, row_step):
            r1 = min(rows, r0 + row_step)
            for q0 in range(0, blocks, block_step):
                q1 = min(blocks, q0 + block_step)
                _to_normals(self._words(r0, r1, q0, q1, scratch), f, out[r0:r1, :, q0:q1].transpose(0, 1))
        self.draws += 1
        return out.view(rows, per_block * blocks)[:, :n].reshape(self.batch + shape).to(dtype)

    def _words(self, r0: int, r1: int, q0: int, q1: int, scratch: torch.Tensor) -> torch.Tensor:
        """Philox words of streams r0..r1-1, blocks q0..q1-1 of the current draw, ``(4, r, q)`` int64, computed in
        ``scratch`` (flat, >= 5 r q elements)."""
        blocks = torch.arange(q0, q1, dtype=torch.int64, device=self.device).unsqueeze(0)  # (1, q)
        d = self.draws[r0:r1]  # (r, 1)
        keys = [(k0[r0:r1], k1[r0:r1]) for k0, k1 in self.keys]
        return philox((blocks, d & MASK, d >> 32, 0), keys, scratch)
