"""What a user of the peer codes (Geshkovski et al.'s phase-diagram script, simuformer) no longer writes by hand:
their random Q^T K / V normalizations as named kinds, simuformer's head average and x @ V, initial tokens given
to a sweep (``x0``), the peers' save-time rule and their pooled pair fraction as a sweep observable."""

import math

import numpy as np
import pytest
import torch

from sdeformer import sweeps
from sdeformer.attention._softmax import MultiHeadAttention, SoftmaxAttention
from sdeformer.attention._variants import QK_KINDS, V_KINDS, RandomMatrixAttention, random_qk, random_value
from sdeformer.config import ModelConfig, _batches as engine
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.dynamics._loop import SaveAt
from sdeformer.observables import pairwise_cosines
from sdeformer.sweeps._observables import evaluate, parse_observables

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`


def test_peer_goe_and_psd_are_ours_times_sqrt_d_from_the_same_draws():
    d = 6
    ours, peer = random_qk(d, Streams(3, ()), "goe"), random_qk(d, Streams(3, ()), "goe_peer")
    assert torch.allclose(peer, ours * math.sqrt(d)) and torch.equal(peer, peer.T)
    v, vp = (random_value(d, Streams(4, ()), k, ours) for k in ("psd", "psd_peer"))
    assert torch.allclose(vp, v * math.sqrt(d)) and bool((torch.linalg.eigvalsh(vp) >= -1e-5).all())
    assert "goe_peer" in QK_KINDS and "psd_peer" in V_KINDS


def test_peer_goe_has_unit_off_diagonal_variance():
    """(G + G^T) / sqrt 2: off-diagonal entries of variance 1 (ours, / sqrt(2d), has 1/d: the wrong convention)."""
    d, draws = 5, 4000
    off = ~torch.eye(d, dtype=torch.bool)
    for kind, expected in (("goe_peer", 1.0), ("goe", 1.0 / d)):
        a = random_qk(d, Streams(0, (draws,)), kind)[:, off]  # (draws, d (d - 1))
        assert abs(float(a.var()) / expected - 1) < 0.05, kind


def test_random_attention_takes_the_peer_kinds_by_name():
    x = uniform_sphere(4, 3, seed=0)
    out = RandomMatrixAttention("goe_peer", "psd_peer", seed=1).drift(x)
    assert out.shape == x.shape and torch.isfinite(out).all()
    with pytest.raises(ConfigError, match="goe_peer"):
        RandomMatrixAttention("goe_wrong")


def test_heads_are_summed_or_averaged_by_name():
    x = uniform_sphere(5, 4, seed=1)
    heads = [SoftmaxAttention(0.5), SoftmaxAttention(2.0), SoftmaxAttention(1.0, -1.0)]
    total = torch.stack([h.drift(x) for h in heads]).sum(0)
    assert torch.allclose(MultiHeadAttention(heads).drift(x), total)
    assert torch.allclose(MultiHeadAttention(heads, combine="mean").drift(x), total / 3)
    with pytest.raises(ConfigError, match="combine"):
        MultiHeadAttention(heads, combine="max")


def test_value_acts_as_vx_or_as_simuformers_x_at_v():
    x, v = uniform_sphere(5, 4, seed=2), torch.randn(4, 4, generator=torch.Generator().manual_seed(0))
    eye = torch.eye(4)
    weights = torch.softmax(x @ x.T, dim=-1)  # Q = K = I
    ours = SoftmaxAttention(Q=eye, K=eye, V=v).drift(x)
    theirs = SoftmaxAttention(Q=eye, K=eye, V=v, value_convention="xV").drift(x)
    assert torch.allclose(ours, weights @ (x @ v.T), atol=1e-6)  # sum_j w_ij V x_j
    assert torch.allclose(theirs, weights @ (x @ v), atol=1e-6)  # sum_j w_ij x_j^T V
    assert not torch.allclose(ours, theirs, atol=1e-3)  # V is not symmetric: the conventions differ
    with pytest.raises(ConfigError, match="value_convention"):
        SoftmaxAttention(value_convention="V^T x")


def _starts(tmp_path, batch: int, n: int = 4, d: int = 3):
    x = uniform_sphere(n, d, batch=(batch,), seed=9, dtype=torch.float64).numpy()
    np.save(tmp_path / "starts.npy", x)
    return x


def test_a_sweep_runs_from_a_peers_starts(tmp_path):
    """``x0: FILE`` with B starts is an axis of B points; each run starts from its own start (no noise: exact)."""
    starts = _starts(tmp_path, 3)
    spec = sweeps.parse_spec(
        {
            "base": {"tokens": 4, "dim": 3, "layers": 5, "horizon": 1.0, "mlp": False, "dtype": "float64"},
            "axes": {"beta": [1.0, 4.0]},
            "x0": "starts.npy",
            "observables": ["energy"],
        },
        root=tmp_path,
    )
    runs = sweeps.expand(spec)
    assert len(runs) == 6 and {r.config.x0.rsplit("#")[1] for r in runs} == {"0", "1", "2"}
    for run in runs:
        b = int(run.config.x0.rsplit("#")[1])
        assert np.array_equal(run.config.initial_tokens().numpy(), starts[b])
        traj = engine.run_group([run.config])
        model = StochasticTransformer(5, 1.0, attention=SoftmaxAttention(run.config.beta))
        assert torch.allclose(traj.final[0], model.run(torch.as_tensor(starts[b])).final)
    sweeps.parse_spec(sweeps.parse_spec({"x0": str(tmp_path / "starts.npy")}).to_dict())  # round trip


def test_bad_token_files_are_config_errors(tmp_path):
    _starts(tmp_path, 2)
    path = str(tmp_path / "starts.npy")
    for value, tokens in ((path, 4), (path + "#2", 4), (path + "#0", 5), (str(tmp_path / "none.npy"), 4)):
        with pytest.raises(ConfigError) as info:
            ModelConfig(tokens=tokens, dim=3, x0=value)
        assert info.value.parameter == "x0"
    assert ModelConfig(tokens=4, dim=3, x0=path + "#1").to_dict()["x0"].endswith("#1")


def test_saved_times_off_the_grid_follow_the_peers_rule():
    """The first step whose time k dt reaches t: t = 0.25 with dt = 0.1 is saved at step 3."""
    model = StochasticTransformer(10, 1.0, attention=SoftmaxAttention())
    traj = model.run(uniform_sphere(3, 3, seed=0), saveat=SaveAt(times=[0.25, 0.3, 1.0]))
    assert traj.steps.tolist() == [0, 3, 10]


def test_pooled_pair_fraction_is_the_mean_over_replicates():
    x = uniform_sphere(6, 3, batch=(1, 4), seed=2, dtype=torch.float64)  # (S = 1, G = 4 runs, N, d)
    (obs,) = parse_observables([{"name": "pairs_above", "threshold": 0.2}])
    per_run = evaluate((obs,), x, torch.ones(4))["pairs_above"]  # (1, 4)
    cos = pairwise_cosines(x)  # (1, 4, 15)
    assert torch.equal(per_run[0], (cos[0] > 0.2).double().mean(-1))
    assert float(per_run.mean()) == pytest.approx(float((cos > 0.2).double().sum() / cos.numel()))  # pooled
    assert float(per_run.mean()) != pytest.approx(float((cos >= -0.2).double().mean()))  # another threshold


def test_mean_radius_reads_the_residual_stream():
    cfg = ModelConfig(tokens=4, dim=3, width=16, layers=8, horizon=2.0, norm="pre")
    traj = cfg.build().run(cfg.initial_tokens(), seed=0)
    (obs,) = parse_observables(["mean_radius"])
    radius = evaluate((obs,), traj.x[:, None], torch.ones(1))["mean_radius"][:, 0]  # (S,)
    assert radius[0] == pytest.approx(1.0) and float(radius[-1]) > 1.5
    assert torch.allclose(radius, torch.linalg.vector_norm(traj.x.double(), dim=-1).mean(-1))
