"""Two species (BEYOND section 9): the encoder ignores the decoder, the decoder is causal, shared noise is one
field at both species and own noise two, the tuple state runs through the loop, the shared-noise model is the
one-species config with ``cross`` (batched runs, sweeps), and the cross-species observables."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from sdeformer.attention._masks import MaskedAttention
from sdeformer.config import ModelConfig, _batches as engine
from sdeformer.core._errors import ConfigError
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._species import TwoSpecies, cross_energy, species_observables
from sdeformer.noise._mlp import MLPNoise
from sdeformer.sweeps import parse_spec, run

F64 = torch.float64
NX, NY, D = 5, 4, 3


def tokens(n: int, seed: int, batch=(2,)) -> torch.Tensor:
    return uniform_sphere(n, D, batch=batch, seed=seed, dtype=F64)


def model(mode="shared", noise=True, attention=None) -> TwoSpecies:
    return TwoSpecies(20, 2.0, noise=MLPNoise("relu", 32) if noise else None, mode=mode, attention=attention, beta=2.0)


@pytest.mark.parametrize("mode, noise", [("shared", False), ("shared", True), ("own", True)])
def test_the_encoder_ignores_the_decoder(mode, noise):
    y0 = tokens(NY, 1)
    a = model(mode, noise).run(tokens(NX, 2), y0, seed=[5, 6])
    b = model(mode, noise).run(tokens(NX, 3), y0, seed=[5, 6])
    assert torch.equal(a.x[1], b.x[1]) and not torch.equal(a.x[0], b.x[0])
    # the check can fail: with one joint softmax over all tokens (no species) the encoder sees the decoder
    joint = [
        model(mode, noise, MaskedAttention(2.0)).run(x, y0, seed=[5, 6]).x[1] for x in (tokens(NX, 2), tokens(NX, 3))
    ]
    assert not torch.equal(*joint)


def test_the_decoder_is_causal_and_sees_the_whole_encoder():
    x0, y0 = tokens(NX, 2), tokens(NY, 1)
    later = x0.clone()
    later[:, -1] = -later[:, -1]  # the last decoder token changes
    a, b = (model("shared", True).run(x, y0, seed=[5, 6]).x[0] for x in (x0, later))
    assert torch.equal(a[:, :, :-1], b[:, :, :-1]) and not torch.equal(a[:, :, -1], b[:, :, -1])
    y1 = y0.clone()
    y1[:, -1] = -y1[:, -1]  # the last encoder token changes: every decoder token sees it
    c = model("shared", True).run(x0, y1, seed=[5, 6]).x[0]
    assert bool((c[-1] - a[-1]).norm(dim=-1).gt(0).all())


def test_shared_noise_is_one_field_and_own_noise_two():
    """Attention off and X = Y at the start: one field moves coinciding tokens alike, two fields apart."""
    start = tokens(NX, 4)
    off = MaskedAttention(2.0, 0.0, cross=NX)  # V = 0: no attention drift
    shared = model("shared", True, off).run(start, start.clone(), seed=[1, 2]).final
    own = model("own", True, off).run(start, start.clone(), seed=[1, 2]).final
    torch.testing.assert_close(shared[0], shared[1], rtol=0, atol=1e-12)  # up to the matmul's rounding
    assert float((own[0] - own[1]).norm(dim=-1).min()) > 1e-3


def test_shared_noise_equals_the_one_species_config_with_cross_batched():
    cfg = ModelConfig(
        tokens=NX + NY, dim=D, width=32, layers=12, attention="graph", cross=NY, beta=2.0, dtype="float64"
    )
    configs = [cfg.replace(seed=s) for s in (3, 4)]
    batched = engine.run_sweep(configs)
    for c, traj in zip(configs, batched):
        z0 = c.initial_tokens()  # (N, d): [Y; X]
        two = TwoSpecies(c.layers, c.horizon, noise=MLPNoise("relu", 32), beta=2.0).run(z0[NY:], z0[:NY], seed=c.seed)
        torch.testing.assert_close(torch.cat([two.x[1], two.x[0]], dim=-2), traj.x, rtol=0, atol=1e-12)


def test_species_observables_in_closed_form():
    p = torch.tensor([[1.0, 0.0, 0.0]], dtype=F64)
    x, y = p.expand(NX, D), p.expand(NY, D)
    obs = species_observables(x, y, 3.0)
    assert float(obs["attached"]) == 1.0 and int(obs["clusters_joint"]) == 1 and float(obs["energy_xy"]) == 0.0
    far = species_observables(-x, y, 3.0)
    assert float(far["attached"]) == 0.0 and int(far["clusters_joint"]) == 2
    assert float(cross_energy(-x, y, 3.0)) == pytest.approx((math.exp(3.0) - math.exp(-3.0)) / 2)


def test_bad_species_inputs():
    with pytest.raises(ConfigError, match="species noise"):
        TwoSpecies(5, 1.0, mode="both")
    with pytest.raises(ConfigError, match="y0"):
        model().run(tokens(NX, 1), tokens(NY, 2, batch=(3,)))
    with pytest.raises(ConfigError, match="cross"):
        ModelConfig(tokens=6, attention="graph", cross=6)


def test_a_sweep_over_the_encoder_size_runs_with_common_noise(tmp_path):
    base = {"tokens": 9, "dim": 3, "width": 16, "layers": 5, "attention": "graph", "dtype": "float64"}
    spec = parse_spec({"name": "cross", "base": base, "axes": {"cross": [0, 3, 6]}, "seeds": 2,
                       "observables": ["energy", "clusters"], "times": "final"})  # fmt: skip
    out = run(spec, tmp_path)
    assert out["done"] == 6 and out["error"] == 0
    df = pd.read_parquet(tmp_path / "table")
    assert sorted(set(df["cross"])) == [0, 3, 6]
