"""``long-context`` (docs/field.md, "Long contexts"): beta*(n) from the Monte Carlo estimator against an independent
quadrature at n = 3, the fitted exponent against 2/(d-1) with the wrong model n^(1/(d-1)) rejected, and the
command's JSON names."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import gammaln

from sdeformer.experiments._field import _long_context as lc
from sdeformer.experiments._field._selectivity import critical_beta, gaps

NODES = 48  # Gauss-Legendre nodes per angle: the integrand is smooth in the ordered region (error << 1e-6)


def expected_largest_weight_n3(beta: float, dim: int) -> float:
    """E[max_j w_j] for 3 uniform keys on S^{d-1} by quadrature over the angles to e_1 (independent of the
    estimator): 3 E[w_1; key 1 nearest], the others' angles in [theta_1, pi], densities sin^{d-2} / Z_d."""
    u, wu = np.polynomial.legendre.leggauss(NODES)
    u, wu = (u + 1) / 2, wu / 2  # on [0, 1]
    th1 = math.pi * u  # (m,)
    log_z = 0.5 * math.log(math.pi) + gammaln((dim - 1) / 2) - gammaln(dim / 2)
    dens = lambda th: np.sin(th) ** (dim - 2) / math.exp(log_z)
    a = th1[:, None] + (math.pi - th1[:, None]) * u[None, :]  # (m, m): theta_j in [theta_1, pi]
    jac = (math.pi - th1)[:, None] * wu[None, :] * dens(a)  # (m, m) weights of one other key
    e = np.exp(beta * (np.cos(a) - np.cos(th1)[:, None]))  # (m, m)
    inner = (jac[:, :, None] * jac[:, None, :] / (1 + e[:, :, None] + e[:, None, :])).sum((1, 2))  # (m,)
    return float(3 * (math.pi * wu * dens(th1) * inner).sum())


def quadrature_beta_star(dim: int) -> float:
    return float(brentq(lambda b: expected_largest_weight_n3(b, dim) - 0.5, 1e-3, 1e4, xtol=1e-10))  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize("dim", [2, 3, 5])
def test_beta_star_at_n3_matches_quadrature(dim):
    """The estimator at n = 3 (20,000 contexts) lies within 4 s.e. of the quadrature's beta*; the quadrature of
    the wrong dimension (d + 1) does not (the check's power)."""
    crit = critical_beta(*gaps(dim, 3, 20000, np.random.default_rng(dim)))
    assert abs(crit.beta - quadrature_beta_star(dim)) < 4 * crit.se
    assert abs(crit.beta - quadrature_beta_star(dim + 1)) > 4 * crit.se


def test_quadrature_is_right_at_beta_zero_and_large():
    """E[max w] = 1/3 at beta = 0 and -> 1 as beta grows: the quadrature's own sanity."""
    assert expected_largest_weight_n3(0.0, 3) == pytest.approx(1 / 3, abs=1e-10)
    assert expected_largest_weight_n3(1e4, 4) > 0.99


def test_slope_agrees_with_two_over_d_minus_one_and_rejects_half_of_it():
    settings = lc.LongContextSettings(dims="3,5", first=7, last=10, samples=300)
    result = lc.run(settings)
    for d in ("3", "5"):
        assert result.agrees[d] and result.wrong_rejected[d], (d, result.slope_lo[d], result.slope_hi[d])
        assert all(1.5 < k < 6 for k in result.keys_at_critical[d])  # a finite number of keys hold the mass
        assert result.gaussian_p[d]["subcritical"] > 1e-3


def test_command_json_names(tmp_path):
    from typer.testing import CliRunner

    from sdeformer.cli import app

    args = ["long-context", "--quick", "--json", "--out", str(tmp_path), "--set", "dims=2,4", "--set", "last=10",
            "--set", "samples=100"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{") :])
    assert data["n"] == [128, 256, 512, 1024]
    for name in ("beta_star", "slope", "slope_lo", "slope_hi", "theory_slope"):
        assert set(data[name]) == {"2", "4"}, name
    assert data["theory_slope"]["4"] == pytest.approx(2 / 3)
    refused = CliRunner().invoke(app, ["long-context", "--out", str(tmp_path / "x"), "--set", "dims=1"])
    assert refused.exit_code == 2 and "dims" in refused.output and "Traceback" not in refused.output
