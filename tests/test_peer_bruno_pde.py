"""Bruno, Pasqualotto, Agazzi's notebook PDE as one call (``sdeformer peer bruno --part pde``), against numbers the
notebook's own ``PDESimulation`` produced.

How the recorded numbers were obtained: snapshot dafd7da of gbruno16/transformers-metastability in a scratch folder
outside the repository; the notebook's cell 15 (``PDESimulation``) executed unchanged (matplotlib's Agg backend, its
plots discarded), then ``torch.manual_seed(0); PDESimulation(n_points=1001, T=T, beta=BETA, sigma=0.01,
dtype=torch.double, device=cpu).run()`` with (BETA, T) = (5, 0.05) and (7, 0.01) (its own cells use n_points =
10000: too slow on this machine's one core; T short enough to stay linear); torch 2.13.0+cpu, one thread; its ``U``
saved by ``np.save``. Recorded: cells of its last row, the sha256 of its table's bytes (float64, C order), and from
its ``U`` the coefficients c_k(t) = sum_j U(t, x_j) e^{-i k x_j} dx / sqrt(2 pi) and the least-squares slope of
log |Re c_k| (cos part) and log |Im c_k| (sin part) over the run, for its dominant modes.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from sdeformer import peers
from sdeformer.cli import app
from sdeformer.core._errors import ConfigError
from sdeformer.peers import _bruno_pde as pde

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

PEER_START = {0: 0.3996671551599393, 1: -0.0009203874891809977 - 0.00062975545546601j}  # c_k(0) of its U[0]
PEER_START[3] = 0.0009000194847515431 - 0.0006343308762908499j
PEER_RATES = {  # beta: {k: (cos rate, sin rate)} of the notebook's run, n_points = 1001
    5.0: {2: (13.3212, -14.2882), 3: (17.2200, -19.9534), 4: (13.9302, -18.7945)},
    7.0: {3: (107.8598, -110.6126), 4: (113.9987, -120.0957), 5: (94.3951, -101.1735)},
}
PEER_TABLES = {  # beta: (T, its U's shape, U[-1] at x_0, x_1, x_250, x_500, x_999, sha256 of U's bytes)
    5.0: (
        0.05,
        (397, 1000),
        (0.15785452723503113, 0.15825709700584412, 0.1594523936510086, 0.15555913746356964, 0.15824495255947113),
        "887a29373f285c5b7a743f9005f5321522396e1b78777ff9a046f3bfb45f4623",
    ),
    7.0: (
        0.01,
        (79, 1000),
        (0.15687409043312073, 0.15663661062717438, 0.1610564887523651, 0.15159223973751068, 0.15717509388923645),
        "c065cced2bad98819924e9c0c942b00f4e9407f41cfa1b58382b53f5e6d4b943",
    ),
}


FLOAT32_ULP = 2.0**-23  # one float32 ulp of a number in [1, 2)


# sha256 of the notebook's u0 bytes (float64) under the recorded kernels
START_DIGEST = "e5946bb64db6027165418e850eec7f8cd1754bb74b285b9357c9a1b9a2bfb936"


def _start_digest(u0: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(u0).tobytes()).hexdigest()


def test_the_start_is_the_notebooks():
    """The notebook's start draws its noise with ``torch.randn`` in float32, whose kernels differ by an ulp between
    instruction sets (the AVX2 and AVX-512 normals are the recorded ones; the default kernels move u0 by up to
    1.3e-8 and c_k by 4.9e-10): equal to a thousand float32 ulps of the noise times sigma dx, not to the bit."""
    x, u = pde.start(1001)
    dx = float(x[1] - x[0])
    for k, want in PEER_START.items():
        got = complex((u.numpy() * np.exp(-1j * k * x.numpy())).sum()) * dx / math.sqrt(2 * math.pi)
        assert abs(got - want) < 1000 * 4 * FLOAT32_ULP * pde.SIGMA * dx  # |noise| < 4: 1.7e-9


@pytest.mark.parametrize("beta", list(PEER_TABLES))
def test_the_published_scheme_is_the_notebooks_table_cell_for_cell(beta, tmp_path):
    """``--as-published``: the notebook's Lax-Friedrichs run (its grid, its cross-correlated velocity, its float32
    rows); ``compare`` on the table counts every cell equal. The notebook's table itself is kernel-dependent (its
    start's float32 normals, above): under AVX2 and AVX-512 ours has its sha256, under the default kernels 5-6 %
    of the cells move by one float32 ulp (3e-8 at most; the scheme is stable, so the start's ulp stays an ulp).
    Asserted: the recorded cells within four ulps of 0.16 (6e-8), and the table's bytes the notebook's wherever
    the start's normals are (a start equal to the bit gives a table equal to the bit)."""
    horizon, shape, last, digest = PEER_TABLES[beta]
    table, dt = pde.lax_friedrichs(beta, 1001, horizon)
    assert table.shape == shape and dt == pytest.approx(0.02 * 2 * math.pi / 1000, rel=1e-15)
    assert table[-1, [0, 1, 250, 500, 999]] == pytest.approx(list(last), rel=0, abs=FLOAT32_ULP / 2)  # 4 ulps of 0.16
    recorded_start = _start_digest(pde.start(1001)[1].numpy()) == START_DIGEST
    same_bytes = hashlib.sha256(np.ascontiguousarray(table).tobytes()).hexdigest() == digest
    assert same_bytes == recorded_start
    assert np.array_equal(table[1:].astype(np.float32), table[1:])  # its rows after the first are float32
    rates = pde.fitted(table, dt)  # over the whole run, as recorded
    for k, (peer_cos, peer_sin) in PEER_RATES[beta].items():
        # the recorded rates carry 4 decimals; the default kernels' start moves the fit by up to 3e-6 relative
        assert (rates["cos"][k - 1], rates["sin"][k - 1]) == pytest.approx((peer_cos, peer_sin), rel=2e-5)
    np.save(tmp_path / "U.npy", table)
    result = peers.run("bruno", part="pde", as_published=True, beta=[beta], points=1001, maxtime=horizon)
    assert peers.compare("bruno", result, tmp_path / "U.npy") == {
        "equal": table.size,
        "total": table.size,
        "max_diff": 0.0,
        "beta": beta,
    }
    np.save(tmp_path / "V.npy", table * (1 + 1e-9))  # one float32 ulp is 6e-8 relative: counted unequal
    assert peers.compare("bruno", result, tmp_path / "V.npy")["equal"] == 0


@pytest.mark.parametrize("beta", list(PEER_RATES))
def test_the_published_rates_are_the_reflected_transport_minus_its_diffusion(beta):
    """The notebook's scheme, linearized: its cos parts grow at +gamma_k - nu k^2, its sin parts decay at
    -gamma_k - nu k^2 (the cross-correlation couples c_k to conj(c_k); Lax-Friedrichs diffuses at nu = 25 dx):
    within 5 % over the linear window, for the modes within 15 % of the largest rate."""
    run = pde.published(beta, 1001, PEER_TABLES[beta][0])
    gamma = pde.rates(beta)
    assert run["nu"] == pytest.approx(25 * 2 * math.pi / 1000)
    for k in np.flatnonzero(gamma >= 0.85 * gamma.max()) + 1:
        assert run["cos"][k - 1] == pytest.approx(gamma[k - 1] - run["nu"] * k**2, rel=0.05)
        assert run["sin"][k - 1] == pytest.approx(-gamma[k - 1] - run["nu"] * k**2, rel=0.05)


@pytest.mark.parametrize("beta", list(PEER_RATES))
def test_the_corrected_pde_grows_both_parts_at_gamma_k(beta):
    """sdeformer's density solver (usa attention, no noise) from the same start: cos and sin parts of the dominant
    modes grow at k^2 I_k(beta) / beta (the convolution's linearization), where the notebook's sin parts decay
    (the modes within 15 % of the largest rate; the others take up their products within the fit's window)."""
    got = pde.measure(beta, n_points=1001)
    gamma = pde.rates(beta)
    for k in np.flatnonzero(gamma >= 0.85 * gamma.max()) + 1:
        assert got["cos"][k - 1] == pytest.approx(gamma[k - 1], rel=0.03)
        assert got["sin"][k - 1] == pytest.approx(gamma[k - 1], rel=0.03)


def test_the_preset_and_its_files(tmp_path):
    published = peers.run("bruno", part="pde", beta=[5.0], as_published=True, points=1001, maxtime=0.01)
    assert published["runs"][0]["U"].shape == (79, 1000) and published["runs"][0]["maxtime"] == 0.01
    assert "U" not in peers.printable(published)["runs"][0]
    paths = peers.write("bruno", published, tmp_path)
    assert [p.name for p in paths] == ["pde_rates.csv", "U_beta5.npy"]
    assert (
        paths[0].read_text().splitlines()[0] == "beta,k,gamma,cos,sin" and len(paths[0].read_text().splitlines()) == 9
    )
    assert np.array_equal(np.load(paths[1]), published["runs"][0]["U"])
    assert pde.horizon(5.0) == 0.5 and pde.horizon(7.0) == 0.08  # the notebook's cells
    corrected = peers.run("bruno", part="pde", beta=[5.0], points=1001)
    with pytest.raises(ConfigError, match="compare"):
        peers.compare("bruno", corrected, paths[1])  # its U is the published scheme's
    with pytest.raises(ConfigError, match="compare"):
        peers.compare("bruno", published, paths[0])  # not a saved array
    two = peers.run("bruno", part="pde", beta=[5.0, 7.0], as_published=True, points=1001, maxtime=0.01)
    with pytest.raises(ConfigError, match="one --beta"):
        peers.compare("bruno", two, paths[1])  # two tables of its shape
    for bad in ({"part": "fluid"}, {"points": 2}, {"maxtime": 1e-6, "as_published": True}, {"maxtime": 0.1}):
        with pytest.raises(ConfigError):
            peers.run("bruno", **{"part": "pde", "beta": [5.0], "points": 101, **bad})
    with pytest.raises(ConfigError, match="points"):
        peers.run("bruno", points=1001)  # a PDE option for the particles


def test_the_command_compares_the_notebooks_saved_table(tmp_path):
    """``sdeformer peer bruno --part pde --as-published --points --maxtime --out --compare``: the table is written,
    read back as the notebook's saved ``U`` and counted equal; not printed in --json; bad input: exit 2, one line."""
    runner = CliRunner()
    args = ["peer", "bruno", "--part", "pde", "--as-published", "--points", "201", "--maxtime", "0.01", "--beta", "7"]
    res = runner.invoke(app, [*args, "--json", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert "U" not in out["runs"][0] and out["runs"][0]["rows"] == 15  # int(0.01 / (0.02 dx)), dx = 2 pi / 200
    res = runner.invoke(app, [*args, "--compare", str(tmp_path / "U_beta7.npy")])
    assert res.exit_code == 0 and "cells equal: 3000 / 3000" in res.stdout
    bad_input = [(["--points", "0"], "points"), (["--maxtime", "-1"], "maxtime"), (["--heads", "2"], "heads")]
    for bad, word in [*bad_input, (["--seed", "-1"], "seed"), (["--seed", str(2**64)], "seed")]:
        res = runner.invoke(app, [*args, *bad])
        assert res.exit_code == 2 and word in res.output and "Traceback" not in res.output
