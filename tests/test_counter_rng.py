"""Counter-based normals (``core._counter``): the Philox known answers, the bitwise guarantees (batched
equals unbatched, any grouping, chunking and thread count, another process), resuming from the counter, the
layout (which bit of a block feeds which float32 normal), the law (moments, KS, tail frequencies) and
independence (neighbouring seeds, consecutive draws, the lanes of one block), each check shown to fail for a
named wrong generator."""

from __future__ import annotations

import hashlib
import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from hang_guard import HANG_S
from scipy import stats

import sdeformer.core._counter as counter
from sdeformer.core._counter import MASK, CounterStreams, key_schedule, philox
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.noise._mlp import MLPNoise
from sdeformer.noise._sources import BulkSource

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

SEEDS = [3, 2**62 + 5, 17, 0, 4, 2**32 + 3]
SHAPES = [(7, 3), (5,), (), (1,), (64, 8), (0, 4), (2, 2, 2)]


@pytest.mark.parametrize(
    "counter_words, key, expected",
    [  # Random123's kat_vectors for philox4x32_10
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((MASK,) * 4, (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
            (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ],
)
def test_philox_reproduces_the_known_answers(counter_words, key, expected):
    out = philox(counter_words, key_schedule(*key))
    assert tuple(int(w) for w in out.flatten()) == expected
    assert tuple(int(w) for w in philox(counter_words, key_schedule(*key)[:9]).flatten()) != expected  # 9 rounds


def _draws(source, dtype) -> list[torch.Tensor]:
    return [source.randn(shape, dtype) for shape in SHAPES]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_batched_equals_unbatched_bit_for_bit_in_any_grouping(dtype):
    batched = _draws(CounterStreams(SEEDS, (6,)), dtype)
    for k, s in enumerate(SEEDS):  # element k of the batch = stream k alone
        for z, alone in zip(batched, _draws(CounterStreams(s, ()), dtype)):
            assert torch.equal(z[k], alone)
    for a, b in zip(_draws(CounterStreams(SEEDS, (2, 3)), dtype), batched):  # another batch shape
        assert torch.equal(a.reshape(b.shape), b)
    halves = zip(_draws(CounterStreams(SEEDS[:2], (2,)), dtype), _draws(CounterStreams(SEEDS[2:], (4,)), dtype))
    for (a, b), z in zip(halves, batched):  # another grouping
        assert torch.equal(torch.cat([a, b]), z)
    assert all(z.dtype == dtype and z.shape == (6, *shape) for z, shape in zip(batched, SHAPES))
    assert CounterStreams([], (0,)).randn((3,), dtype).shape == (0, 3)  # an empty batch


def _both(seeds=SEEDS) -> tuple[torch.Tensor, torch.Tensor]:
    s = CounterStreams(seeds, (len(seeds),))
    return s.randn((333, 5)), s.randn((333, 5), torch.float64)  # (6, 333, 5) each


def test_chunks_and_threads_do_not_change_a_number(monkeypatch):
    expected = _both()  # one chunk
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)  # elementwise ops split between threads at other offsets
        assert all(torch.equal(a, b) for a, b in zip(_both(), expected))
    finally:
        torch.set_num_threads(threads)
    for blocks in (13, 100, 400):  # row groups and block ranges of other sizes: vector tails everywhere
        monkeypatch.setattr(counter, "CHUNK_BLOCKS", blocks)
        assert all(torch.equal(a, b) for a, b in zip(_both(), expected))


def test_a_shared_generator_is_not_batched_equals_unbatched():
    """The check above fails for the wrong model of one generator filling the whole batch (``BulkSource``)."""
    batched = BulkSource.seeded(3, (6,)).randn((7, 3))
    assert not torch.equal(batched[1], BulkSource.seeded(3, ()).randn((7, 3)))


def test_same_seed_same_numbers_in_another_process_and_whatever_the_global_rng():
    torch.manual_seed(123)
    here = CounterStreams([5, 6], (2,)).randn((1000,)).numpy().tobytes()
    torch.manual_seed(456)
    assert CounterStreams([5, 6], (2,)).randn((1000,)).numpy().tobytes() == here
    code = (
        "import hashlib, torch; from sdeformer.core._counter import CounterStreams; torch.manual_seed(9);"
        "print(hashlib.sha256(CounterStreams([5, 6], (2,)).randn((1000,)).numpy().tobytes()).hexdigest())"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=HANG_S)
    assert other.stdout.strip() == hashlib.sha256(here).hexdigest()


def test_the_state_is_a_counter_that_resumes_a_run():
    a = CounterStreams(SEEDS, (6,))
    a.randn((4, 4))
    saved = np.stack([s.numpy() for s in a.get_state()])  # as experiments._simulate checkpoints it
    assert saved.tolist() == [[1]] * 6
    expected = [a.randn((4, 4)), a.randn((9,), torch.float64)]
    b = CounterStreams(SEEDS, (6,))
    b.set_state([torch.from_numpy(s) for s in saved])
    assert all(torch.equal(x, y) for x, y in zip(expected, [b.randn((4, 4)), b.randn((9,), torch.float64)]))
    with pytest.raises(ConfigError, match="state"):  # a generator's state (another source's checkpoint)
        b.set_state(Streams(SEEDS, (6,)).get_state())
    with pytest.raises(ConfigError, match="state"):
        b.set_state(b.get_state()[:5])


def test_bad_input_raises_one_line_config_errors():
    for call, name in [
        (lambda: CounterStreams(-1, ()), "seed"),
        (lambda: CounterStreams([1, 2], (3,)), "seed"),
        (lambda: CounterStreams(0, ()).randn((2,), torch.int64), "dtype"),
        (lambda: CounterStreams(0, ()).randn((2**33, 3)), "shape"),  # refused before any allocation
    ]:
        with pytest.raises(ConfigError) as info:
            call()
        assert name in str(info.value) and "\n" not in str(info.value)


def _transform(words: list[int] | list[list[int]], n: int, dtype: torch.dtype) -> torch.Tensor:
    """The normals ``(n,)`` of one stream's blocks whose four words are given (block by block, lane-major)."""
    w = [torch.tensor(x, dtype=torch.int64).reshape(1, -1) for x in words]  # 4 words (1, Q)
    out = torch.empty(1, n, dtype=dtype)
    lanes = counter._lanes(out, slice(0, 1), 0, w[0].shape[1], w[0].shape[1])
    if dtype == torch.float32:
        counter._normals32(w, lanes, torch.zeros(4 * w[0].numel(), dtype=torch.uint8))
    else:
        counter._normals64(w, lanes)
    counter._inverse_cdf(out)
    return out[0]


@pytest.mark.parametrize("dtype, bits", [(torch.float32, 24), (torch.float64, 53)])
def test_the_transform_is_exact_symmetric_and_bounded(dtype, bits):
    """The lowest and highest fields give -+sqrt(2) erfinv(1 - 2^-b), the fields just above and below the middle
    +-sqrt(2) erfinv(2^-b): exactly opposite numbers; the product words' bits above 31 are ignored; no draw
    exceeds the extreme."""
    junk = 123 << 32  # what a product word holds above bit 31
    if dtype == torch.float32:  # lanes 0-3: low 24 bits of words 0-3; lane 4: their top bytes (words 0, 1, 2)
        top = 0xFF000000
        words = [[0, top], [0xFFFFFF | junk, top | junk], [0x800000, top], [0x7FFFFF | junk, junk]]
        z = _transform(words, 10, dtype)  # lane i, block q -> normal 2 i + q
        low, high, above, below, lane4 = z[0], z[2], z[4], z[6], z[8:]
        assert z[9] == -lane4[0] == high  # lane 4: k = 0 in block 0, 2^24 - 1 in block 1
    else:  # lanes (2i, 2i + 1) of block q -> normal i of block q: 21 high bits of word 2i, 32 of word 2i + 1
        words = [[0, 0x80000000], [junk, junk], [MASK, 0x7FFFFFFF], [MASK | junk, MASK]]
        z = _transform(words, 4, dtype)
        low, above, high, below = z
    extreme = math.sqrt(2) * float(torch.erfinv(torch.tensor(1 - 2.0**-bits, dtype=torch.float64)))
    assert float(high) == pytest.approx(extreme, rel=1e-6) and low == -high
    assert 0 < float(above) < 1e-6 and below == -above
    assert float(CounterStreams(8, ()).randn((10**5,), dtype).abs().max()) <= extreme * (1 + 1e-6)


def _feeds(normals32) -> dict[tuple[int, int], list[int]]:
    """For each (word, bit) of a block, the float32 lanes whose integer k changes when that bit flips."""

    def ks(words):
        w = [torch.tensor([[x]], dtype=torch.int64) for x in words]
        out = torch.empty(1, 5)
        normals32(w, counter._lanes(out, slice(0, 1), 0, 1, 1), torch.zeros(4, dtype=torch.uint8))
        return out[0]

    base = [0x12345678, 0x9ABCDEF0, 0x0F1E2D3C, 0x4B5A6978]
    ref = ks(base)
    return {
        (i, b): torch.nonzero(ks([x ^ (1 << b) if j == i else x for j, x in enumerate(base)]) != ref).flatten().tolist()
        for i in range(4)
        for b in range(32)
    }


def test_every_bit_of_a_block_feeds_at_most_one_float32_lane():
    """Five 24-bit fields on disjoint bits of the 128: the low 24 of each word are lanes 0-3, the top bytes of
    words 0, 1, 2 lane 4, the top byte of word 3 is unused. The check fails for the wrong model of a fifth lane
    made from the low bytes, which lanes 0-2 already use."""
    feeds = _feeds(counter._normals32)
    for (word, bit), lanes in feeds.items():
        expected = [word] if bit < 24 else [4] if word < 3 else []
        assert lanes == expected, (word, bit, lanes)

    def low_bytes(words, lanes, spare):
        b = spare[:4].view(1, 1, 4)
        for i in range(3):
            b[..., i].copy_(words[i].view(torch.uint8)[..., 0::8])  # byte 0 instead of byte 3
        words = [w.clone() for w in words]
        counter._normals32(words[:4], lanes[:4], spare)
        lanes[4].copy_(b.view(torch.int32)[..., 0])

    assert any(len(lanes) > 1 for lanes in _feeds(low_bytes).values())


def _standardised_moments(z: torch.Tensor) -> list[float]:
    """(mean, variance - 1, skewness, excess kurtosis) over their standard errors for i.i.d. N(0, 1)."""
    x = z.double().flatten()
    n = x.numel()
    m, v = x.mean(), x.var()
    skew, kurt = ((x - m) ** 3).mean() / v**1.5, ((x - m) ** 4).mean() / v**2 - 3
    return [
        float(m) * n**0.5,
        float(v - 1) / (2 / n) ** 0.5,
        float(skew) / (6 / n) ** 0.5,
        float(kurt) / (24 / n) ** 0.5,
    ]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_moments_and_ks_against_the_standard_normal(dtype):
    z = CounterStreams(11, ()).randn((2**20,), dtype)
    assert max(abs(s) for s in _standardised_moments(z)) < 5
    assert stats.kstest(z.double().numpy(), "norm").pvalue > 1e-3
    wrong = z * 1.01  # a transform 1% too wide: the variance check sees it
    assert max(abs(s) for s in _standardised_moments(wrong)) > 5


def _tail_scores(z: torch.Tensor) -> list[float]:
    """The counts beyond |z| = 2, 3, 4 against the normal's, in binomial standard deviations."""
    x, n = z.double().abs(), z.numel()
    scores = []
    for t in (2.0, 3.0, 4.0):
        p = math.erfc(t / math.sqrt(2))
        scores.append((float((x > t).sum()) - n * p) / math.sqrt(n * p * (1 - p)))
    return scores


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tail_frequencies_match_the_normal(dtype):
    z = CounterStreams(list(range(8)), (8,)).randn((2**17,), dtype)  # 2^20 normals, 8 streams
    assert max(abs(s) for s in _tail_scores(z)) < 5
    assert max(abs(s) for s in _tail_scores(z * 0.97)) > 5  # wrong: a transform 3% too narrow thins the tails


def _max_corr(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest |correlation| of the rows of a and b (each (k, n)) in units of 1/sqrt(n)."""
    a, b = a.double(), b.double()
    a, b = a - a.mean(-1, keepdim=True), b - b.mean(-1, keepdim=True)
    r = (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))
    return float(r.abs().max()) * a.shape[-1] ** 0.5


def test_no_correlation_between_neighbouring_seeds_consecutive_draws_and_lanes():
    s = CounterStreams(list(range(64)) + [2**32], (65,))
    first, second = s.randn((2**14,)), s.randn((2**14,))  # (65, n) each
    assert _max_corr(first[:-2], first[1:-1]) < 4.5  # seeds s and s + 1
    assert _max_corr(first[:1], first[-1:]) < 4.5  # seeds 0 and 2^32 (the key's high word)
    assert _max_corr(first, second) < 4.5  # consecutive draws of each seed
    q = -(-(2**14) // 5)  # lane-major: normals j, j + Q, ..., j + 4Q come from one Philox block
    assert _max_corr(first[:, :q], first[:, q : 2 * q]) < 4.5
    for lane in range(3):  # lane 4 takes the top bytes of the words of lanes 0-2
        assert _max_corr(first[:, lane * q : (lane + 1) * q][:, : 2**14 - 4 * q], first[:, 4 * q :]) < 4.5
    assert _max_corr(first[:, :-1], first[:, 1:]) < 4.5  # neighbouring indices


def test_the_independence_check_fails_for_a_stream_whose_counter_does_not_advance():
    class Stuck(CounterStreams):
        def randn(self, shape, dtype=torch.float32):
            out = super().randn(shape, dtype)
            self.draws -= 1  # the wrong model: the draw counter never moves
            return out

    s = Stuck(list(range(8)), (8,))
    assert _max_corr(s.randn((2**14,)), s.randn((2**14,))) > 100


def test_a_model_run_on_counter_streams_is_batched_equals_unbatched_bit_for_bit(one_thread):
    model = StochasticTransformer(6, 1.0, noise=MLPNoise("relu", 64, 0.1, 0.1))
    x0 = uniform_sphere(5, 4, batch=(3,), seed=1)  # (3, N, d), float32
    seeds = [7, 8, 9]
    batched = model.run(x0, streams=CounterStreams(seeds, (3,))).x
    for k, s in enumerate(seeds):
        alone = model.run(x0[k], streams=CounterStreams(s, ())).x
        one = model.run(x0[k : k + 1], streams=CounterStreams([s], (1,))).x[:, 0]  # a batch of one
        assert torch.equal(batched[:, k], alone) and torch.equal(one, alone)
    loop = model.run(x0, seed=seeds).x  # the loop RNG: the same law, other numbers
    assert not torch.equal(loop, batched)
