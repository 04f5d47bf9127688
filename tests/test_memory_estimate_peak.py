"""simulate's memory estimate within 1.5x of the peak resident memory it estimates, both ways (issue 42): the
N x N attention scores sdpa never forms are not charged, the saved states are (a fresh process per run, glibc's
mmap threshold held fixed: under its default identical runs peak up to 2.6x apart; docs/scaling.md, "Memory
estimate")."""

from __future__ import annotations

import subprocess
import sys

import pytest
from benchmarks.memory import PEAK, allocator_env, measure

from sdeformer import _spheresums
from sdeformer.config import ModelConfig
from sdeformer.experiments._simulate import memory_estimate


def _run(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter under the fixed allocator threshold."""
    cmd = [sys.executable, "-W", "ignore", "-c", code]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=allocator_env("fixed"))


def test_the_estimate_charges_no_n_by_n_matrix():
    """Quadrupling N at d = 3 grows the estimate about 4x (N m, N d terms), not 16x (an N^2 term would); both
    sizes past the S^2 octree's switch (its working memory is O(N))."""
    small, big = (memory_estimate(ModelConfig(tokens=n, dim=3, width=1024, layers=4)) for n in (131072, 524288))
    assert big < 4.5 * small
    # N = 10,000 at d = 64 was refused under 16 GB (19.5 GiB estimated, the N x N charges): a few hundred MB
    assert memory_estimate(ModelConfig(tokens=10_000, dim=64, layers=4, save_every=4)) < 2**29


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("layers", [1, 15])  # 2 and 16 saved states
@pytest.mark.parametrize("n, d, m", [(8192, 3, 1024), (2048, 64, 2048), (8192, 64, 2048)])
def test_the_estimate_is_within_one_and_a_half_of_the_measured_peak(n, d, m, layers):
    """Measured 0.98-1.15x; the former formula (every saved state three times, 8 layer temporaries, 24 MiB base)
    gave 1.83x at N = 8,192, d = 64, 2 states: fails."""
    estimate, used = measure(n, d, m, layers, 1)
    assert used / 1.5 <= estimate <= 1.5 * used, (estimate, used)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_estimate_counts_the_s2_octree_within_one_and_a_half_of_the_measured_peak():
    """From ``SPHERE_ABS_MIN_TOKENS`` on S^2 mean |cosine| takes the octree, whose tree and levels (~N) dominate
    the observables' memory: at N = 2^16, d = 3 (harmonic attention, 2 saved states) the estimate with
    ``_abscos.working_bytes`` is within 1.5x of the peak (measured 137.6 / 129.2 MB, 1.07x; with the forms' 40 MiB
    in its place 0.89x, inside: the octree term's own test below is the one that fails without it)."""
    estimate, used = measure(1 << 16, 3, 1024, 1, 1, method="harmonic")
    assert used / 1.5 <= estimate <= 1.5 * used, (estimate, used)


OCTREE = (
    PEAK
    + """
import numpy as np, torch
from sdeformer import observables
torch.set_num_threads(1)
g = np.random.default_rng(0)
x = g.standard_normal(({n}, 3))
if {clustered}:
    x = g.standard_normal((64, 3))[g.integers(0, 64, {n})] + 0.02 * x
x = torch.from_numpy(x / np.linalg.norm(x, axis=1, keepdims=True))
observables.mean_abs_cosine(x[:4096])
base = peak()
observables.mean_abs_cosine(x)
print(peak() - base)
"""
)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("clustered", [False, True])
def test_the_octree_term_is_within_one_and_a_half_of_the_octree_peak(clustered):
    """Mean |cosine| of N = 2^16 tokens on S^2 (the octree) alone, spread or in 64 clusters: its peak above the
    tokens within 1.5x of ``abs_cosine_bytes`` both ways (the estimate without it charged nothing: fails)."""
    n = _spheresums.SPHERE_ABS_MIN_TOKENS
    out = _run(OCTREE.format(n=n, clustered=clustered))
    used, modelled = int(out.stdout.split()[-1]), _spheresums.abs_cosine_bytes(n, 3)
    assert used / 1.5 <= modelled <= 1.5 * used, (modelled, used)
