"""The density solver bounded before it allocates: the memory estimate of ``spde._budget`` refused in one line
(CLI exit 2, Python ConfigError), beta bounded the same in both, NaN and zero-mass starts refused."""

import math

import pytest
import torch
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.core._errors import ConfigError
from sdeformer.experiments._spde.run import SpdeSettings
from sdeformer.spde import _budget as budget
from sdeformer.spde._diagnostics import energy_beta
from sdeformer.spde._fields import mlp_noise
from sdeformer.spde._initial import von_mises_fisher
from sdeformer.spde._solver import DensitySolver


def one_line_refusal(args: list[str]) -> str:
    res = CliRunner().invoke(app, ["spde", *args])
    assert res.exit_code == 2, res.output
    assert res.output.strip().count("\n") == 0 and "Traceback" not in res.output
    return res.output


@pytest.mark.parametrize(
    "args",
    [["--dim", "3", "--modes", "500", "--steps", "1"], ["--modes", "100000"], ["--particles", str(10**11)]],
)
def test_oversized_runs_are_refused_in_one_line_with_the_estimate(args, monkeypatch):
    monkeypatch.setattr("sdeformer.core._validate.available_bytes", lambda: 64 * 2**30)
    line = one_line_refusal(args)
    assert "GiB of memory" in line and "64 GiB" in line


def test_max_memory_lowers_the_limit_and_a_bad_size_is_named():
    assert "0.000977 GiB allowed" in one_line_refusal(["--steps", "2", "--max-memory", "1M"])
    assert "max_memory" in one_line_refusal(["--max-memory", "lots"])


def test_the_estimate_scales_with_the_tables_and_the_cloud():
    """Sphere tables: J ~ 8 L^2 points times P ~ L^2 / 2 coefficients, so doubling L multiplies them by ~16;
    the cloud is linear in N."""
    small, large = (budget.density_bytes(3, L, 8)["tables"] for L in (200, 400))
    assert 12 < large / small < 17
    one, two, three = (budget.density_bytes(2, 32, 4, particles=n)["cloud"] for n in (10**6, 2 * 10**6, 3 * 10**6))
    assert three - two == pytest.approx(two - one) and two - one > 0
    assert budget.coefficients(3, 500) == 501 * 502 // 2 and budget.grid_points(3, 10) == 6 * 11


def test_python_api_refuses_before_building_a_basis():
    field = mlp_noise(3, "relu", 0.5, 0.5, 2)
    with pytest.raises(ConfigError, match="modes/particles/steps.*GiB allowed"):
        DensitySolver(field, 500, 1, 1.0, max_memory="1G")  # a degree-500 sphere basis is never built
    with pytest.raises(ConfigError, match="modes/particles/steps"):
        SpdeSettings(3, modes=500, steps=1).solver(max_memory="1G")
    solver = DensitySolver(mlp_noise(2, "relu", 0.5, 0.5, 2), 8, 2, 0.1, max_memory="128M")
    clouds = (torch.zeros(10**6, 2),)  # 1e6 tokens kept at every step: over 128 MiB
    with pytest.raises(ConfigError, match="GiB allowed"):
        solver.run(von_mises_fisher(solver.basis, 1.0), particles=clouds)


@pytest.mark.parametrize("beta", [800.0, 1e6])
def test_beta_above_the_bound_is_refused_alike_in_the_cli_and_the_api(beta):
    assert "beta" in one_line_refusal(["--beta", str(beta)]) and "700" in one_line_refusal(["--beta", str(beta)])
    with pytest.raises(ConfigError, match="beta.*700"):
        DensitySolver(mlp_noise(2, "relu", 0.5, 0.5, 2), 8, 2, 0.1, beta=beta)
    with pytest.raises(ConfigError, match="beta"):
        SpdeSettings(beta=beta, attention="off")


def test_energy_at_the_bound_is_finite():
    basis = DensitySolver(mlp_noise(2, "relu", 0.5, 0.5, 2), 8, 1, 0.1, attention="off").basis
    e = energy_beta(basis, von_mises_fisher(basis, 1.0), budget.BETA_MAX)
    assert math.isfinite(float(e)) and float(e) > 0


@pytest.mark.parametrize("bad", ["nan", "zero"])
def test_nan_or_zero_mass_start_is_refused_naming_c0(bad):
    solver = DensitySolver(mlp_noise(2, "relu", 0.5, 0.5, 2), 8, 2, 0.1)
    c0 = von_mises_fisher(solver.basis, 1.0)
    c0 = c0 * float("nan") if bad == "nan" else torch.zeros_like(c0)
    with pytest.raises(ConfigError, match="c0"):
        solver.run(c0)
