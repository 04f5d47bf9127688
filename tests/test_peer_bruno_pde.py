"""Bruno, Pasqualotto, Agazzi's notebook PDE as one call (``sdeformer peer bruno --part pde``), against numbers the
notebook's own ``PDESimulation`` produced.

How the recorded numbers were obtained: snapshot dafd7da of gbruno16/transformers-metastability in a scratch folder
outside the repository; the notebook's cell 15 (``PDESimulation``) executed unchanged (matplotlib's Agg backend, its
plots discarded), then ``torch.manual_seed(0); PDESimulation(n_points=1001, T=T, beta=BETA, sigma=0.01,
dtype=torch.double, device=cpu).run()`` with (BETA, T) = (5, 0.05) and (7, 0.01) (its own cells use n_points =
10000: too slow on this machine's one core; T short enough to stay linear); torch 2.13.0+cpu, one thread. From its
``U`` (steps x grid), the coefficients c_k(t) = sum_j U(t, x_j) e^{-i k x_j} dx / sqrt(2 pi), and the least-squares
slope of log |Re c_k| (cos part) and log |Im c_k| (sin part) over the run: recorded below for its dominant modes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdeformer import peers
from sdeformer.core._errors import ConfigError
from sdeformer.peers import _bruno_pde as pde

PEER_START = {0: 0.3996671551599393, 1: -0.0009203874891809977 - 0.00062975545546601j}  # c_k(0) of its U[0]
PEER_START[3] = 0.0009000194847515431 - 0.0006343308762908499j
PEER_RATES = {  # beta: {k: (cos rate, sin rate)} of the notebook's run, n_points = 1001
    5.0: {2: (13.3212, -14.2882), 3: (17.2200, -19.9534), 4: (13.9302, -18.7945)},
    7.0: {3: (107.8598, -110.6126), 4: (113.9987, -120.0957), 5: (94.3951, -101.1735)},
}


def test_the_start_is_the_notebooks():
    x, u = pde.start(1001)
    dx = float(x[1] - x[0])
    for k, want in PEER_START.items():
        got = complex((u.numpy() * np.exp(-1j * k * x.numpy())).sum()) * dx / math.sqrt(2 * math.pi)
        assert abs(got - want) < 1e-14  # the sum's order


@pytest.mark.parametrize("beta", list(PEER_RATES))
def test_the_published_transport_follows_the_notebooks_run(beta):
    """``as_published`` (the density solver fed the reflected density) against the notebook's own run: the same
    rates once its Lax-Friedrichs diffusion nu k^2 (nu = dx^2 / (2 dt) = 25 dx) is taken off (within 5 %: one noisy
    start, fits over the whole run); its cos parts grow at +gamma_k, its sin parts decay at -gamma_k."""
    ours, gamma = pde.measure(beta, n_points=1001, reflected=True), pde.rates(beta)
    nu = 25 * 2 * math.pi / 1000
    for k, (peer_cos, peer_sin) in PEER_RATES[beta].items():
        assert peer_cos == pytest.approx(ours["cos"][k - 1] - nu * k**2, rel=0.05)
        assert peer_sin == pytest.approx(ours["sin"][k - 1] - nu * k**2, rel=0.05)
        assert peer_sin < 0 < peer_cos  # the sin part decays: not the dynamics' transport
    for k in np.flatnonzero(gamma >= 0.85 * gamma.max()) + 1:
        assert ours["cos"][k - 1] == pytest.approx(gamma[k - 1], rel=0.03)
        assert ours["sin"][k - 1] == pytest.approx(-gamma[k - 1], rel=0.03)


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
    published = peers.run("bruno", part="pde", beta=[5.0], as_published=True)
    assert published["runs"][0]["sin"][2] < 0 < published["runs"][0]["cos"][2]
    [path] = peers.write("bruno", published, tmp_path)
    assert path.name == "pde_rates.csv" and path.read_text().splitlines()[0] == "beta,k,gamma,cos,sin"
    assert len(path.read_text().splitlines()) == 1 + 8
    with pytest.raises(ConfigError, match="part"):
        peers.run("bruno", part="fluid")
