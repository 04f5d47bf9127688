"""Every command bounded before it allocates: a request whose memory estimate exceeds the limit (``--max-memory``
or ``SDEFORMER_MAX_MEMORY``, default the memory available now) is refused in one line with the estimate and the
limit; the estimates bound what the runs really use (peak resident memory of a fresh process)."""

from __future__ import annotations

import os

import pytest
from peak_memory import check_estimate
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.core._errors import ConfigError
from sdeformer.core._validate import MEMORY_ENV, fits_in_memory, memory_limit, memory_size


def test_memory_sizes_and_their_one_line_refusals():
    assert memory_size("m", "4G") == 4 * 2**30 and memory_size("m", "2GiB") == 2 * 2**30
    assert memory_size("m", "512MB") == 512 * 2**20 and memory_size("m", 1e9) == 10**9
    for bad in ("abc", "-1", "0", "nanG", "G", "inf"):
        with pytest.raises(ConfigError, match="a memory size such as 8G") as info:
            memory_size("--max-memory", bad)
        assert "\n" not in str(info.value)


def test_the_limit_comes_from_the_environment_else_the_machine(monkeypatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    assert memory_limit()[1] == "available now"
    monkeypatch.setenv(MEMORY_ENV, "1M")
    assert memory_limit() == (2**20, f"{MEMORY_ENV} / --max-memory")
    with pytest.raises(ConfigError, match=r"needs about 0.00195 GiB of memory, 0.000977 GiB allowed"):
        fits_in_memory("tokens", 8, 2 * 2**20)
    fits_in_memory("tokens", 8, 2**19)  # below the limit: nothing


def one_line_refusal(args: list[str]) -> str:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    (line,) = res.output.strip().splitlines()
    return line


@pytest.mark.parametrize(
    "args, names",
    [
        (["sync-check", "--runs", "100000", "--tokens", "100000", "--steps", "2"], "runs/tokens/dim"),
        (["lyapunov", "--runs", "100000000", "--dim", "64", "--steps", "2", "--activation", "relu"], "runs/dim"),
        (["rates", "width", "--runs", "4", "--x", "100,100000000"], "runs/x/dim"),
        (["rates", "depth", "--runs", "4", "--x", "16,32", "--dim", "100000000"], "runs/x/dim"),
        (["simulate", "--tokens", "1000000", "--dim", "64"], "tokens/dim/width/layers"),
    ],
)
def test_commands_that_size_arrays_refuse_a_request_above_the_memory_available(tmp_path, args, names):
    line = one_line_refusal([*args, *(["--out", str(tmp_path / "o")] if args[0] != "sync-check" else [])])
    assert f"invalid {names}=" in line and "GiB of memory" in line and "GiB allowed (available now)" in line
    assert not (tmp_path / "o").exists()  # refused before any folder was made


def test_the_global_max_memory_option_bounds_every_command(tmp_path, monkeypatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    line = one_line_refusal(["--max-memory", "100M", "sync-check", "--runs", "64", "--tokens", "1024", "--steps", "2"])
    assert "0.0977 GiB allowed (SDEFORMER_MAX_MEMORY / --max-memory)" in line
    line = one_line_refusal(["--max-memory", "1K", "simulate", "--tokens", "8", "--layers", "2"])
    assert "invalid tokens/dim/width/layers" in line
    line = one_line_refusal(["--max-memory", "1M", "ode", "--set", "tokens=4096", "--out", str(tmp_path / "ode")])
    assert "invalid tokens/dim/starts=(4096, 4, 4)" in line and not (tmp_path / "ode" / "ode").exists()
    assert MEMORY_ENV not in os.environ  # restored after the command
    assert "--max-memory" in one_line_refusal(["--max-memory", "lots", "simulate"])


IMPORTS = "import sdeformer.sweeps"
CASES = {
    "rates width": (
        "from sdeformer.experiments._rates import measure as rates\n"
        "s = rates.settings_for('width', False, runs=4, x=[16, 200000])\n"
        "estimate = rates.memory_estimate('width', s)",
        "rates.measure('width', s)",
    ),
    "sync-check": (
        "from sdeformer.experiments._sync.check import sync_check\n"
        "from sdeformer.experiments._sync.settings import SyncSettings, memory_estimate\n"
        "s = SyncSettings(runs=4, tokens=1000, steps=2, dim=8, chunk=4).check()\n"
        "estimate = memory_estimate(s.model(), dict(runs=4, tokens=1000, chunk=4), None)",
        "sync_check(s)",
    ),
    "lyapunov": (
        "from sdeformer.experiments._lyapunov import check_memory, lyapunov\nestimate = check_memory(200000, 8)",
        "lyapunov(dim=8, runs=200000, steps=2)",
    ),
}


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="peak memory read from /proc")
@pytest.mark.parametrize("case", list(CASES))
def test_the_estimates_bound_the_peak_memory_of_a_run(case):
    check_estimate(case, IMPORTS, *CASES[case])
