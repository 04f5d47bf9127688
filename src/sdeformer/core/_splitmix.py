"""Counter-based standard normals from SplitMix64's output function: ``rng="splitmix"`` (``core._rng.make_streams``),
the source for many small runs in one batch (THEORY section 1: one noise stream per run; docs/design.md: no
global RNG). Like ``core._counter.CounterStreams`` (the same seeds, shapes, state and guarantees: ``DrawCounted``),
every number is a pure function of (the run's seed, the run's draw counter, the index in the draw), computed for
the whole batch in vectorised integer ops, with 6 integer passes per float32 normal where Philox takes 16: its
draws are 3x faster (docs/benchmarks.md, "Many small runs in one batch").

- the bits: ``mix`` is SplitMix64's output function (Stafford's Mix13: z ^= z >> 30, z *= M0, z ^= z >> 27,
  z *= M1, z ^= z >> 31, all mod 2^64; Steele, Lea, Flood, OOPSLA 2014; Vigna's splitmix64.c), a bijection of
  64-bit words. Word j of draw c of a stream is mix(K ^ D_c ^ (j + 1) G), with the stream's key K = mix(seed + G)
  (SplitMix64's first output from the seed), the draw's key D_c = mix((c + 1) G) and G = 0x9E3779B97F4A7C15 (the
  golden-ratio Weyl increment). The inputs of one draw are distinct (a Weyl sequence under a fixed mask); two
  draws, or two streams, share an input only at isolated indices, never a run of them (the keys are XORed, not
  added, so no draw is a shifted copy of another). D_c is one Python int while every stream has drawn equally
  often (always, unless ``set_state`` gave unequal counters; then one per stream, the same numbers).
- the transform: float32 takes two normals per word, the low 24 bits of each 32-bit half (normal 2j: bits 0-23,
  normal 2j + 1: bits 32-55); float64 one, the top 53 bits. Each integer k becomes sqrt(2) erfinv((2k + 1 - 2^b)
  2^-b), b = 24 or 53 (``core._counter``'s exact, symmetric inverse CDF; |z| <= 5.42 or 8.29). bfloat16 and
  float16 draws are the float32 normals rounded.
- the state: one int64 draw counter per stream (``DrawCounted``).

Its quality is checked, not certified: SplitMix64 passes BigCrush as a sequence generator (Steele et al.), but
this keyed use of its mixer has no published Crush result. tests/test_splitmix_rng.py checks the reference outputs,
every output bit's balance, the law (moments, KS, tails) and the independence of neighbouring seeds, consecutive
draws and neighbouring indices, each check failing for a named wrong generator. Batched equals unbatched bit for
bit (integer ops, then elementwise float ops), on any chunking, thread count and device type up to erfinv's last
ulp across devices.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ._counter import DrawCounted, _inverse_cdf
from ._rng import Seeds

U64 = (1 << 64) - 1
WEYL = 0x9E3779B97F4A7C15  # SplitMix64's increment G
MIX = ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None))  # Mix13: shift, then multiplier
CHUNK_WORDS = 1 << 16  # words per chunk on a CPU: a chunk's int64 buffers stay in the L2 cache
CUDA_CHUNK_WORDS = 1 << 22


def signed(u: int) -> int:
    """The 64-bit word ``u`` (mod 2^64) as the int64 torch holds it."""
    u &= U64
    return u - (1 << 64) if u >> 63 else u


def mix(z: torch.Tensor, scratch: torch.Tensor) -> torch.Tensor:
    """Mix13 of int64 words ``z`` (any shape), in place; ``scratch``: an int64 tensor of z's shape. Shifts are
    logical (the sign's copies cleared), products wrap mod 2^64."""
    for shift, multiplier in MIX:
        torch.bitwise_right_shift(z, shift, out=scratch).bitwise_and_((1 << (64 - shift)) - 1)
        z.bitwise_xor_(scratch)
        if multiplier is not None:
            z.mul_(signed(multiplier))
    return z


def mix_int(z: int) -> int:
    """Mix13 of one 64-bit word as Python ints (the reference ``mix`` is tested against)."""
    for shift, multiplier in MIX:
        z ^= z >> shift
        z = z * multiplier & U64 if multiplier is not None else z
    return z


class SplitMixStreams(DrawCounted):
    """One SplitMix-keyed stream per batch element: ``randn(shape, dtype)`` -> ``(*batch, *shape)`` (a
    ``contracts.RandomSource``; ``DrawCounted``: seeds, state and errors)."""

    def __init__(self, seed: Seeds, batch: tuple[int, ...], device: str | torch.device = "cpu"):
        super().__init__(seed, batch, device)
        s = torch.tensor(self.seeds, dtype=torch.int64, device=self.device).add_(signed(WEYL)).reshape(-1, 1)
        self.keys = mix(s, torch.empty_like(s))  # (B, 1): mix(seed + G), the sum wrapping mod 2^64
        self._count: int | None = 0  # the streams' common draw counter (None where they differ)
        self._buffers: tuple[torch.Tensor, torch.Tensor] | None = None
        self._weyls: dict[tuple[int, int], torch.Tensor] = {}

    def _advance(self) -> None:
        super()._advance()
        self._count = None if self._count is None else self._count + 1

    def set_state(self, states: Sequence[torch.Tensor]) -> None:
        super().set_state(states)
        first = int(self.draws[0, 0]) if len(self.seeds) else 0
        self._count = first if bool((self.draws == first).all()) else None

    def row_keys(self) -> torch.Tensor:
        """K ^ D_c of each stream at its current draw counter c, ``(B, 1)`` int64."""
        if self._count is not None:
            return torch.bitwise_xor(self.keys, signed(mix_int((self._count + 1) * WEYL & U64)))
        d = (self.draws + 1).mul_(signed(WEYL))
        return mix(d, torch.empty_like(d)).bitwise_xor_(self.keys)

    def _scratch(self, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Two int64 buffers of >= ``size`` words, kept from draw to draw (a small run draws many times a layer)."""
        if self._buffers is None or self._buffers[0].numel() < size:
            z = torch.empty(size, dtype=torch.int64, device=self.device)
            self._buffers = (z, torch.empty_like(z))
        return self._buffers

    def _weyl(self, q0: int, q1: int) -> torch.Tensor:
        """(j + 1) G for the words j = q0 .. q1 - 1 of a draw, ``(q,)`` int64, kept per range."""
        if (q0, q1) not in self._weyls:
            self._weyls[q0, q1] = torch.arange(q0 + 1, q1 + 1, dtype=torch.int64, device=self.device).mul_(signed(WEYL))
        return self._weyls[q0, q1]

    def _fill(self, out: torch.Tensor) -> None:
        """``out`` ``(B, n)`` chunk by chunk: rows of streams times ranges of words, at most a chunk's words."""
        rows, per_word = out.shape[0], 2 if out.dtype == torch.float32 else 1
        words = -(-out.shape[1] // per_word)
        chunk = CUDA_CHUNK_WORDS if self.device.type == "cuda" else CHUNK_WORDS
        row_step, word_step = max(1, chunk // words), min(words, chunk)
        keys = self.row_keys()  # (B, 1)
        z, scratch = self._scratch(min(rows, row_step) * word_step)
        for q0 in range(0, words, word_step):
            q1 = min(words, q0 + word_step)
            weyl = self._weyl(q0, q1)  # (q,)
            for r0 in range(0, rows, row_step):
                r1 = min(rows, r0 + row_step)
                shape = (r1 - r0, q1 - q0)
                w = torch.bitwise_xor(keys[r0:r1], weyl, out=z[: shape[0] * shape[1]].view(shape))  # (r, q)
                mix(w, scratch[: w.numel()].view(shape))
                _integers(w, scratch[: w.numel()].view(shape), out[r0:r1, per_word * q0 : per_word * q1])
        _inverse_cdf(out)


def _integers(w: torch.Tensor, scratch: torch.Tensor, out: torch.Tensor) -> None:
    """The transform's integers of words ``w`` ``(r, q)`` into ``out`` (float32: ``(r, <= 2q)``, k = the low 24 bits
    of each 32-bit half, little-endian; float64: ``(r, q)``, 2k + 1 - 2^53 with k = the top 53 bits)."""
    if out.dtype == torch.float32:
        halves = scratch.view(torch.int32)  # (r, 2q): (low, high) of each word
        torch.bitwise_and(w.view(torch.int32), 0xFFFFFF, out=halves)
        out.copy_(halves[:, : out.shape[1]])
    else:
        k = torch.bitwise_right_shift(w, 11, out=scratch).bitwise_and_((1 << 53) - 1)
        out.copy_(k.mul_(2).sub_((1 << 53) - 1))
