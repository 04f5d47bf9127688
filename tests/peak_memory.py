"""A memory estimate held against the peak resident memory of the run it estimates, in a fresh process (the
slow tests of test_memory_bounds.py and test_command_bounds.py). Linux only: the peak is read from /proc."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from hang_guard import HANG_S

SCRIPT = """
import sys, tempfile
from pathlib import Path
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
import torch
{imports}
torch.zeros(1)
{setup}
base = peak()
{run}
print(estimate, peak() - base)
"""


def check_estimate(case: str, imports: str, setup: str, run: str) -> None:
    """Run ``setup`` (which sets ``estimate``, in bytes), then ``run``: the run's peak above its start must not
    exceed the estimate (a bound) and must reach a tenth of it (not a vacuous one)."""
    code = textwrap.dedent(SCRIPT).format(imports=imports, setup=setup, run=run)
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=2 * HANG_S
    )
    estimate, used = map(int, out.stdout.split()[-2:])
    assert used <= estimate, (case, used, estimate)
    assert used >= estimate / 10, (case, used, estimate)
