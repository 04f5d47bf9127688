"""lost-in-the-middle's particle model and the angle-Euler (geodesic) step, against numbers its own code produced.

How they were obtained: snapshot c7e12ba of borjanG/2026-lost-in-the-middle in a scratch folder outside the
repository; from ``generate_alibi_particle_circle_dynamics.py`` (imported, unchanged): ``initial_configuration(64,
17, "clusters")``, ``force(theta0, 1.0, build_causal_weights(64, 1.0))`` and ``simulate(64, 1.0, 1.0, 10.0, 0.0025,
17, "clusters")`` (its RK4 history, 4001 x 64); the values at tokens 0, 1, 16, 31, 47, 63 are recorded below
(angles taken mod 2 pi). numpy 2, one thread.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from sdeformer import peers
from sdeformer.attention._alibi import PositionalALiBiAttention
from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.core._errors import ConfigError
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._loop import SaveAt
from sdeformer.dynamics._sde import GeodesicEuler, LimitSDE, make_solver
from sdeformer.noise._fields import GaussianField
from sdeformer.peers import _litm as litm

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

IDX = [0, 1, 16, 31, 47, 63]
START = [0.3967539493719178, 0.33954161110744263, 2.2998395978164132, 2.241478700546331, 4.012765393628544]
START += [5.991990725928354]
FORCE = [0.0, 0.15518032039378363, -0.5927838313902187, -0.37969819296085483, -0.1325020288705546]
FORCE += [0.04786976659187646]
RK4_T02 = [0.3967539493719178, 0.3635112099774064, 2.1700711574328326, 2.1608895332908733, 3.9863017266131724]
RK4_T02 += [6.005071882065293]
RK4_T10 = [0.3967539493719178, 0.3967539493718281, 0.3967539433332672, 0.39675391550562, 0.39646636991563344]
RK4_T10 += [0.39596874516524405]


def _tokens() -> torch.Tensor:
    theta = torch.tensor(litm.clusters_start(64, 17))
    return torch.stack([theta.cos(), theta.sin()], -1)


def _angle_gap(a, b) -> float:
    return float(np.abs(np.angle(np.exp(1j * (np.asarray(a) - np.asarray(b))))).max())


def test_start_and_velocity_are_the_peers():
    x = _tokens()
    assert litm.clusters_start(64, 17)[IDX] == pytest.approx(START, abs=1e-15)
    d = PositionalALiBiAttention(1.0, 1.0).drift(x)  # (N, 2)
    omega = (x[:, 0] * d[:, 1] - x[:, 1] * d[:, 0]).numpy()  # the angular velocity of P_x D
    assert omega[IDX] == pytest.approx(FORCE, abs=1e-14)
    assert omega[0] == 0.0  # token 0 attends to no one: fixed


def test_weights_are_over_earlier_positions_only():
    w = PositionalALiBiAttention(2.0, 3.0).weights(5, torch.zeros(1, dtype=torch.float64))
    assert torch.equal(w[0], torch.zeros(5)) and torch.equal(w.triu(), torch.zeros(5, 5, dtype=torch.float64))
    assert torch.allclose(w[1:].sum(-1), torch.ones(4, dtype=torch.float64))
    assert float(w[4, 3] / w[4, 2]) == pytest.approx(math.exp(3.0 / 5))  # e^{-lam (i - j) / N}
    with pytest.raises(ConfigError, match="lam"):
        PositionalALiBiAttention(1.0, -1.0)


def test_geodesic_step_is_euler_in_the_angle():
    x = uniform_sphere(7, 2, seed=3, dtype=torch.float64)
    att, dt = SoftmaxAttention(2.0), 0.05
    d = att.drift(x)
    omega = x[:, 0] * d[:, 1] - x[:, 1] * d[:, 0]
    theta = torch.atan2(x[:, 1], x[:, 0])
    geo = GeodesicEuler(LimitSDE(None, att), 1, dt).run(x).final
    proj = make_solver(LimitSDE(None, att), 1, dt).run(x).final
    assert _angle_gap(torch.atan2(geo[:, 1], geo[:, 0]), theta + dt * omega) < 1e-14
    moved = np.angle(np.exp(1j * (torch.atan2(proj[:, 1], proj[:, 0]) - theta).numpy()))
    assert moved == pytest.approx(np.arctan(dt * omega.numpy()), abs=1e-14)  # the projected step: arctan(dt |v|)
    with pytest.raises(ConfigError, match="scheme"):
        GeodesicEuler(LimitSDE(GaussianField("relu", 0.1, 0.1), att), 1, dt)


def test_particles_follow_the_peers_rk4_over_its_first_snapshot():
    steps = 80  # t = 0.2 at the peer's dt
    x = (
        GeodesicEuler(LimitSDE(None, PositionalALiBiAttention(1.0, 1.0)), steps, 0.2)
        .run(_tokens(), saveat=SaveAt(final_only=True))
        .final
    )
    # first order against the peer's RK4 at dt = 0.0025
    assert _angle_gap(torch.atan2(x[IDX, 1], x[IDX, 0]).numpy(), RK4_T02) < 2e-4


def test_the_rk4_step_follows_the_peers_rk4_to_rounding_over_its_first_snapshot():
    """The default step, fourth order as the peer's: the two RK4 (sdeformer's in R^2 then projected, the peer's in
    the angle) part by O(dt^4) only (the full run: 3264 / 3264 cells, largest difference 4.2e-12, docs/peers.md)."""
    sde = LimitSDE(None, PositionalALiBiAttention(1.0, 1.0))
    x = make_solver(sde, 80, 0.2, "rk4").run(_tokens(), saveat=SaveAt(final_only=True)).final
    assert _angle_gap(torch.atan2(x[IDX, 1], x[IDX, 0]).numpy(), RK4_T02) < 1e-10


@pytest.mark.slow
def test_particle_preset_reaches_the_peers_final_state(tmp_path):
    result = peers.run("litm", part="particles")
    final = np.asarray(result["angles"])[-1]
    assert _angle_gap(final[IDX], RK4_T10) < 1e-5  # collapsed onto token 0's angle, as the peer's
    [path] = peers.write("litm", result, tmp_path)
    assert np.load(path).shape == (51, 64)


def test_compare_reads_the_npz_its_script_writes(tmp_path):
    """``--compare`` on the script's own ``alibi_particle_circle_clusters_dynamics.npz`` (its history under
    ``theta``, 4001 x 64, beside times and labels) or on a .npy of the history; anything else: one-line refusal."""
    rng = np.random.default_rng(0)
    history = rng.uniform(0, 2 * math.pi, (4001, 64))
    result = {"part": "particles", "angles": history[::80].tolist()}  # its snapshots t = 0.2 k, 51 of them
    np.savez_compressed(tmp_path / "run.npz", times=np.linspace(0, 10, 4001), theta=history + 2 * math.pi)
    assert peers.compare("litm", result, tmp_path / "run.npz")["equal"] == 51 * 64  # on the circle
    np.save(tmp_path / "history.npy", history)
    assert peers.compare("litm", result, tmp_path / "history.npy")["equal"] == 51 * 64
    shifted = dict(result, angles=(history[::80] + 1e-3).tolist())
    assert peers.compare("litm", shifted, tmp_path / "run.npz")["equal"] == 0
    np.savez(tmp_path / "other.npz", times=np.zeros(3))
    (tmp_path / "text.txt").write_text("beta t_crit\n")
    for name in ("other.npz", "text.txt"):
        with pytest.raises(ConfigError, match="compare"):
            peers.compare("litm", result, tmp_path / name)
