"""simulate's memory estimate within 1.5x of the peak resident memory it estimates, both ways (issue 42): the
N x N attention scores sdpa never forms are not charged, the saved states are (a fresh process per run)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sdeformer.config import ModelConfig
from sdeformer.experiments._simulate import memory_estimate

SCRIPT = """
import torch
from sdeformer.config import ModelConfig
from sdeformer.experiments._simulate import memory_estimate, simulate
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
torch.set_num_threads(1)
cfg = ModelConfig(tokens={n}, dim={d}, width={m}, layers={layers})
torch.zeros(1)
base = peak()
simulate(cfg)
print(memory_estimate(cfg), peak() - base)
"""


def test_the_estimate_charges_no_n_by_n_matrix():
    """Quadrupling N at d = 3 grows the estimate about 4x (N m, N d terms), not 16x (an N^2 term would)."""
    small, big = (memory_estimate(ModelConfig(tokens=n, dim=3, width=1024, layers=4)) for n in (32768, 131072))
    assert big < 4.5 * small
    # N = 10,000 at d = 64 was refused under 16 GB (19.5 GiB estimated, the N x N charges): a few hundred MB
    assert memory_estimate(ModelConfig(tokens=10_000, dim=64, layers=4, save_every=4)) < 2**29


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("layers", [1, 15])  # 2 and 16 saved states
@pytest.mark.parametrize("n, d, m", [(8192, 3, 1024), (2048, 64, 2048)])
def test_the_estimate_is_within_one_and_a_half_of_the_measured_peak(n, d, m, layers):
    code = SCRIPT.format(n=n, d=d, m=m, layers=layers)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=600)
    estimate, used = map(int, out.stdout.split()[-2:])
    assert used / 1.5 <= estimate <= 1.5 * used, (estimate, used)
