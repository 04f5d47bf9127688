"""SplitMix-keyed normals (``core._splitmix``, ``rng="splitmix"``): SplitMix64's reference outputs, the tensor mixer
against the integer one, the layout (which bits feed which normal; every output bit balanced), the bitwise
guarantees (batched equals unbatched in any grouping, chunking and thread count; another process; resuming, with
equal and unequal counters), the law (moments, KS, tails) and independence (neighbouring seeds, consecutive draws,
neighbouring indices), each check shown to fail for a named wrong generator. The statistics helpers are those of
the Philox source's tests."""

from __future__ import annotations

import hashlib
import math
import subprocess
import sys

import pytest
import torch
from hang_guard import HANG_S
from scipy import stats
from test_counter_rng import SEEDS, SHAPES, _draws, _max_corr, _standardised_moments, _tail_scores

import sdeformer.core._splitmix as splitmix
from sdeformer.config import ModelConfig
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams, make_streams
from sdeformer.core._sphere import uniform_sphere
from sdeformer.core._splitmix import U64, WEYL, SplitMixStreams, mix, mix_int, signed

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

# The first five outputs of splitmix64.c seeded with 1234567 (Rosetta Code, "Pseudo-random numbers/Splitmix64";
# the same vectors are in the test suites of several public SplitMix64 ports).
REFERENCE = [6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821]


def test_mix_is_splitmix64s_output_function_and_the_tensor_form_equals_the_integer_one():
    state, outputs = 1234567, []
    for _ in range(5):
        state = (state + WEYL) & U64
        outputs.append(mix_int(state))
    assert outputs == REFERENCE
    words = [0, 1, U64, WEYL, 1 << 63, (1 << 63) - 1, 0x0123456789ABCDEF] + [(k * 0x9E3779B1) << 17 for k in range(50)]
    z = torch.tensor([signed(w) for w in words], dtype=torch.int64)
    assert [int(v) & U64 for v in mix(z.clone(), torch.empty_like(z))] == [mix_int(w & U64) for w in words]
    arithmetic = z.clone()  # the wrong model: arithmetic shifts (the sign's copies left in)
    for shift, multiplier in splitmix.MIX:
        arithmetic ^= arithmetic >> shift
        arithmetic = arithmetic * signed(multiplier) if multiplier is not None else arithmetic
    assert [int(v) & U64 for v in arithmetic] != [mix_int(w & U64) for w in words]


def test_the_words_follow_the_documented_keys():
    """Word j of draw c of a stream is mix(K ^ D_c ^ (j + 1) G): recomputed here from Python integers."""
    seed, s = 2**40 + 7, SplitMixStreams(2**40 + 7, ())
    key = mix_int((seed + WEYL) & U64)
    for c in range(3):
        z = s.randn((6,), torch.float64)  # 6 words, one normal each: k = top 53 bits
        d = mix_int((c + 1) * WEYL & U64)
        ks = [mix_int(key ^ d ^ ((j + 1) * WEYL & U64)) >> 11 for j in range(6)]
        x = torch.tensor([(2 * k + 1 - 2**53) * 2.0**-53 for k in ks], dtype=torch.float64)
        assert torch.equal(z, x.erfinv() * math.sqrt(2))


def test_every_output_bit_is_balanced_and_the_float32_normals_take_the_low_24_bits_of_each_half():
    s = SplitMixStreams(list(range(16)), (16,))
    n = 2**14
    words = mix(s.row_keys() ^ torch.arange(1, n + 1).mul_(signed(WEYL)), torch.empty(16, n, dtype=torch.int64))
    bits = torch.stack([(words >> b) & 1 for b in range(64)])  # (64, 16, n)
    share = bits.double().mean((1, 2))
    assert float((share - 0.5).abs().max()) < 5 * 0.5 / math.sqrt(16 * n)
    unmixed = torch.arange(1, n + 1).mul_(signed(WEYL))  # the wrong model: the Weyl counter without the mixer
    assert abs(float(torch.corrcoef(torch.stack([unmixed[:-1] & 0xFF, unmixed[1:] & 0xFF]).double())[0, 1])) > 0.1
    z = SplitMixStreams(3, ()).randn((4,))
    w = mix_int(mix_int((3 + WEYL) & U64) ^ mix_int(WEYL) ^ WEYL)  # word 0 of draw 0
    k = torch.tensor([w & 0xFFFFFF, (w >> 32) & 0xFFFFFF], dtype=torch.float64)
    expected = ((2 * k + 1 - 2**24) * 2.0**-24).erfinv() * math.sqrt(2)
    assert torch.allclose(z[:2].double(), expected, rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_batched_equals_unbatched_bit_for_bit_in_any_grouping(dtype):
    batched = _draws(SplitMixStreams(SEEDS, (6,)), dtype)
    for k, s in enumerate(SEEDS):
        for z, alone in zip(batched, _draws(SplitMixStreams(s, ()), dtype)):
            assert torch.equal(z[k], alone)
    halves = zip(_draws(SplitMixStreams(SEEDS[:2], (2,)), dtype), _draws(SplitMixStreams(SEEDS[2:], (2, 2)), dtype))
    for (a, b), z in zip(halves, batched):
        assert torch.equal(torch.cat([a, b.reshape(4, *b.shape[2:])]), z)
    assert all(z.dtype == dtype and z.shape == (6, *shape) for z, shape in zip(batched, SHAPES))
    assert SplitMixStreams([], (0,)).randn((3,), dtype).shape == (0, 3)


def test_chunks_threads_and_unequal_counters_do_not_change_a_number(monkeypatch):
    def both():
        s = SplitMixStreams(SEEDS, (6,))
        return s.randn((333, 5)), s.randn((333, 5), torch.float64)

    expected = both()
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert all(torch.equal(a, b) for a, b in zip(both(), expected))
    finally:
        torch.set_num_threads(threads)
    for words in (7, 100, 800):  # row groups and word ranges of other sizes
        monkeypatch.setattr(splitmix, "CHUNK_WORDS", words)
        assert all(torch.equal(a, b) for a, b in zip(both(), expected))
    s = SplitMixStreams(SEEDS, (6,))  # the per-stream path (unequal counters) gives the common path's numbers
    s.set_state([torch.tensor([1 + (k % 2)]) for k in range(6)])
    uneven = s.randn((40,))
    for k, seed in enumerate(SEEDS):
        alone = SplitMixStreams(seed, ())
        for _ in range(1 + k % 2):
            alone.randn((1,))
        assert torch.equal(alone.randn((40,)), uneven[k])


def test_same_seed_same_numbers_in_another_process_and_resuming_from_the_counter():
    torch.manual_seed(123)
    here = SplitMixStreams([5, 6], (2,)).randn((1000,)).numpy().tobytes()
    code = (
        "import hashlib, torch; from sdeformer.core._splitmix import SplitMixStreams; torch.manual_seed(9);"
        "print(hashlib.sha256(SplitMixStreams([5, 6], (2,)).randn((1000,)).numpy().tobytes()).hexdigest())"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=HANG_S)
    assert other.stdout.strip() == hashlib.sha256(here).hexdigest()
    a = SplitMixStreams(SEEDS, (6,))
    a.randn((4, 4))
    saved = a.get_state()
    expected = [a.randn((4, 4)), a.randn((9,), torch.float64)]
    b = SplitMixStreams(SEEDS, (6,))
    b.set_state(saved)
    assert all(torch.equal(x, y) for x, y in zip(expected, [b.randn((4, 4)), b.randn((9,), torch.float64)]))
    with pytest.raises(ConfigError, match="state"):
        b.set_state(Streams(SEEDS, (6,)).get_state())
    for call, name in [(lambda: SplitMixStreams(-1, ()), "seed"), (lambda: b.randn((2,), torch.int64), "dtype")]:
        with pytest.raises(ConfigError, match=name):
            call()
    with pytest.raises(ConfigError, match="rng"):
        make_streams("splitmixx", 0, ())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_law_moments_ks_and_tails(dtype):
    z = SplitMixStreams(list(range(8)), (8,)).randn((2**17,), dtype)  # 2^20 normals
    assert max(abs(s) for s in _standardised_moments(z)) < 5
    assert stats.kstest(z.double().flatten().numpy(), "norm").pvalue > 1e-3
    assert max(abs(s) for s in _tail_scores(z)) < 5
    assert max(abs(s) for s in _standardised_moments(z * 1.01)) > 5  # a transform 1 % too wide
    assert max(abs(s) for s in _tail_scores(z * 0.97)) > 5  # 3 % too narrow
    bits = 24 if dtype == torch.float32 else 53
    extreme = math.sqrt(2) * float(torch.erfinv(torch.tensor(1 - 2.0**-bits, dtype=torch.float64)))
    assert float(z.abs().max()) <= extreme * (1 + 1e-6)


def test_no_correlation_between_neighbouring_seeds_consecutive_draws_and_indices():
    s = SplitMixStreams(list(range(64)) + [2**32], (65,))
    first, second = s.randn((2**14,)), s.randn((2**14,))  # (65, n) each
    assert _max_corr(first[:-2], first[1:-1]) < 4.5  # seeds s and s + 1
    assert _max_corr(first, second) < 4.5  # consecutive draws
    assert _max_corr(first[:, 0::2], first[:, 1::2]) < 4.5  # the two halves of one word
    assert _max_corr(first[:, :-1], first[:, 1:]) < 4.5  # neighbouring indices

    class Stuck(SplitMixStreams):  # the wrong model: the draw counter never moves
        def randn(self, shape, dtype=torch.float32):
            out = super().randn(shape, dtype)
            self.draws -= 1
            self._count = 0
            return out

    t = Stuck(list(range(8)), (8,))
    assert _max_corr(t.randn((2**14,)), t.randn((2**14,))) > 100


def test_a_model_run_on_splitmix_streams_is_batched_equals_unbatched_bit_for_bit(one_thread):
    model = ModelConfig(tokens=5, dim=4, width=16, layers=6, su=0.1, sw=0.1).build()
    x0 = uniform_sphere(5, 4, batch=(3,), seed=1)
    seeds = [7, 8, 9]
    batched = model.run(x0, seed=seeds, rng="splitmix").x
    for k, s in enumerate(seeds):
        assert torch.equal(batched[:, k], model.run(x0[k], seed=s, rng="splitmix").x)
    assert not torch.equal(batched, model.run(x0, seed=seeds, rng="counter").x)
