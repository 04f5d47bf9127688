"""Normalization schemes (BEYOND section 6): Post-LN is the paper's layer bit for bit, every scheme runs through
the config, the registry, batched runs and resumed segments, and its one-step moments (direction overlap and
radius) match its derived limit SDE, while the limit of the wrong scheme does not."""

import math
from typing import Any

import numpy as np
import pytest
import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.config import ModelConfig, _batches as engine
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import project, uniform_sphere
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.dynamics._norms import NGPT, MixLN, PeriLN, PostLN, PreLN, SqrtScaling
from sdeformer.dynamics._norms.limits import mean_cosine
from sdeformer.io._hashing import config_hash
from sdeformer.noise._fields import GaussianField
from sdeformer.noise._mlp import MLPNoise
from sdeformer.registry import NORMS
from sdeformer.theory._norm_moments import measured_moments, predicted_moments

NAMES = ["post", "pre", "mix", "mix:0.5", "peri", "ngpt", "ngpt:0.5", "sqrt"]
SMALL: dict[str, Any] = dict(tokens=5, dim=4, width=32, layers=12, horizon=2.0, su=0.1, sw=0.1)


def test_post_ln_is_the_paper_layer_bit_for_bit():
    """The default scheme computes Y = LN(X + dt A(X)), X' = LN(Y + xi(Y)) with the same operations as before."""
    noise, attention = MLPNoise("relu", 32, 0.1, 0.1), SoftmaxAttention(1.5, 1.0)
    x0 = uniform_sphere(5, 4, batch=(2,), seed=3)
    model = StochasticTransformer(6, 1.5, noise=noise, attention=attention)
    streams, x = Streams([1, 2], (2,)), project(x0)  # a run starts from LN(x0)
    for _ in range(6):  # the layer as THEORY section 1 writes it
        y = project(x + model.dt * attention.drift(x, streams))
        x = project(y + noise.increment(y, model.dt, streams))
    assert torch.equal(model.run(x0, seed=[1, 2]).final, x)
    assert torch.equal(StochasticTransformer(6, 1.5, noise, attention, PostLN()).run(x0, seed=[1, 2]).final, x)
    assert not torch.equal(StochasticTransformer(6, 1.5, noise, attention, PreLN()).run(x0, seed=[1, 2]).final, x)


def test_default_config_keeps_its_hash_and_norm_is_recorded_otherwise():
    cfg = ModelConfig()
    assert "norm" not in cfg.to_dict() and "x0" not in cfg.to_dict()
    assert config_hash(cfg.to_dict()) == config_hash({**cfg.to_dict()})
    pre = cfg.replace(norm="pre")
    assert pre.to_dict()["norm"] == "pre" and config_hash(pre.to_dict()) != config_hash(cfg.to_dict())
    assert ModelConfig.from_mapping(pre.to_dict()) == pre


@pytest.mark.parametrize("name", NAMES)
def test_every_scheme_builds_from_a_config_and_the_registry(name):
    cfg = ModelConfig(**SMALL, norm=name)
    model = cfg.build()
    assert type(model.norm).__name__ == NORMS[name.partition(":")[0]].target.split(":")[1]
    traj = model.run(cfg.initial_tokens(), seed=cfg.seed)
    radius = torch.linalg.vector_norm(traj.final, dim=-1)
    assert torch.isfinite(traj.x).all()
    if model.norm.on_sphere:
        assert torch.allclose(radius, torch.ones_like(radius), atol=1e-5)
    else:  # the residual stream grows: every update adds to it
        assert bool((radius > 1.05).all()), radius


@pytest.mark.parametrize(
    "bad", ["layer", "pre:1", "mix:0", "mix:1", "mix:x", "ngpt:-1", "ngpt:inf", "ngpt:nan", "ngpt:40", 3]
)
def test_bad_norms_are_config_errors(bad):
    with pytest.raises(ConfigError) as info:
        ModelConfig(**SMALL, norm=bad)
    assert info.value.parameter == "norm"


def test_norm_parts_are_checked():
    with pytest.raises(ConfigError, match="norm"):
        StochasticTransformer(2, 1.0, norm=object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="alpha"):
        NGPT(0.0)
    with pytest.raises(ConfigError, match="switch"):
        MixLN(-1.0)
    with pytest.raises(ConfigError, match="must be < 1"):  # alpha sqrt(dt) = 1.41: the interpolation overshoots
        StochasticTransformer(1, 0.5, noise=MLPNoise("relu", 8), norm=NGPT(2.0)).run(uniform_sphere(3, 4, seed=0))


@pytest.mark.parametrize("name", ["peri", "ngpt"])
def test_a_zero_attention_output_is_no_update(name):
    """V = 0: LN of a zero block output is taken as zero (not 0 / 0), so only the noise moves the tokens."""
    cfg = ModelConfig(**SMALL, norm=name, attention_scale=0.0)
    traj = cfg.build().run(cfg.initial_tokens(), seed=1)
    off = cfg.replace(attention="off").build().run(cfg.initial_tokens(), seed=1)
    assert torch.isfinite(traj.x).all() and torch.allclose(traj.x, off.x, atol=1e-6)


@pytest.mark.parametrize("name", ["pre", "mix", "sqrt", "ngpt"])
def test_batched_runs_equal_the_unbatched_ones(name):
    configs = [ModelConfig(**SMALL, norm=name, seed=s, beta=b) for s in (1, 2) for b in (1.0, 2.5)]
    for cfg, traj in zip(configs, engine.run_sweep(configs), strict=True):
        assert torch.equal(traj.x, cfg.build().run(cfg.initial_tokens(), seed=cfg.seed).x)


@pytest.mark.parametrize("norm", [PreLN(), MixLN(0.5), SqrtScaling()])
def test_a_run_resumed_in_segments_keeps_the_radius_and_the_clock(norm):
    model = StochasticTransformer(10, 2.0, noise=MLPNoise("relu", 16, 0.1, 0.1), norm=norm)
    x0 = uniform_sphere(4, 3, seed=5) * 2.0  # a residual stream of radius 2 (the sphere schemes start from LN)
    whole = model.run(x0, seed=4).final
    streams = Streams(4, ())
    half = model.run(x0, streams=streams, stop=4).final
    assert torch.equal(model.run(half, streams=streams, start=4).final, whole)
    if not norm.on_sphere:  # the wrong model: a run that puts its start on the sphere loses the radius
        assert not torch.allclose(model.run(project(x0), seed=4).final, whole)


def test_mean_cosine_of_normalized_gaussians():
    rho = np.array([-0.6, 0.0, 0.3, 0.9, 1.0])
    assert mean_cosine(rho, 1) == pytest.approx(2 / math.pi * np.arcsin(rho))  # E sign(g) sign(g')
    g = torch.randn(200000, 2, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    for r in (0.3, 0.8):
        a, b = g[:, 0], r * g[:, 0] + math.sqrt(1 - r * r) * g[:, 1]
        mc = (project(a) * project(b)).sum(-1)
        assert abs(float(mc.mean()) - mean_cosine(np.array(r), 5)) < 4 * float(mc.std()) / math.sqrt(len(mc))
        assert abs(float(mc.mean()) - r) > 0.01  # the un-normalized correlation is not the answer


H, COPIES = 1e-6, 20000
THETA = uniform_sphere(3, 4, seed=3, dtype=torch.float64)
RADII = torch.tensor([[1.5], [2.5], [4.0]], dtype=torch.float64)
CASES = {  # scheme, state (the residual stream), time
    "post": (PostLN(), THETA, 0.0),
    "pre": (PreLN(), THETA * RADII, 0.0),
    "peri": (PeriLN(), THETA * RADII, 0.0),
    "ngpt": (NGPT(0.7), THETA, 0.0),
    "sqrt": (SqrtScaling(), THETA, 3.0),
    "mix_post_phase": (MixLN(1.0), THETA, 0.5),
    "mix_pre_phase": (MixLN(1.0), THETA * RADII, 2.0),
}


def _parts():
    return SoftmaxAttention(1.0), GaussianField("relu", 0.5, 0.5)


def _agree(pred, meas) -> bool:
    return all(
        abs(getattr(m, k).mean - getattr(p, k)) <= 4 * getattr(m, k).se + 50 * H
        for p, m in ((pred.overlap, meas.overlap), (pred.radius, meas.radius))
        for k in ("drift", "variation")
    )


@pytest.mark.parametrize("case", CASES)
def test_one_step_moments_match_the_derived_limit(case, float64):
    norm, x, t = CASES[case]
    attention, field = _parts()
    pred = predicted_moments(norm, x, attention, field, t)
    meas = measured_moments(norm, x, H, COPIES, attention, field, t)
    assert _agree(pred, meas), (pred, meas)
    assert isinstance(pred.radius.drift, float)
    assert (pred.radius.drift > 0) == (not norm.phase(t).on_sphere)  # the radius equation is exercised


@pytest.mark.parametrize(
    "measured, wrong",
    [
        ("pre", PostLN()),  # Pre-LN read as Post-LN: the radius ignored
        ("peri", PreLN()),  # Peri-LN read as Pre-LN: the block outputs not normalized
        ("ngpt", NGPT(1.0)),  # nGPT at the wrong rate alpha
        ("sqrt", PostLN()),  # sqrt-scaling without its 1 / sqrt(1 + t)
    ],
)
def test_the_moment_test_fails_for_the_wrong_limit(measured, wrong, float64):
    norm, x, t = CASES[measured]
    attention, field = _parts()
    meas = measured_moments(norm, x, H, COPIES, attention, field, t)
    assert not _agree(predicted_moments(wrong, x, attention, field, t), meas)


def test_a_resumed_run_continues_from_its_state_as_given():
    """A segment's end state is the next segment's start, bit for bit; the wrong model, projecting it to the sphere
    again (as ``start_state`` does for a fresh run), moves it by rounding here."""
    model = StochasticTransformer(10, 2.0, noise=MLPNoise("relu", 16, 0.1, 0.1), norm=SqrtScaling())
    streams = Streams(4, ())
    half = model.run(uniform_sphere(4, 3, seed=5) * 2.0, streams=streams, stop=4).final
    assert torch.equal(model.run(half, streams=streams, start=4).x[0], half)
    assert not torch.equal(project(half), half)
