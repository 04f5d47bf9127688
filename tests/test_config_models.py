"""Noise model, sharing fraction and attention variant as config fields (BEYOND sections 1-5), in one run and
in the sweep engine: defaults keep every config hash and number, share = 1 is the common-noise model."""

import dataclasses
from typing import Any, cast

import pandas as pd
import pytest
import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.attention._variants import CausalSoftmaxAttention
from sdeformer.config import ModelConfig, _batches as sweep
from sdeformer.config._batches import run_group
from sdeformer.core._errors import ConfigError
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.io._hashing import config_hash
from sdeformer.noise import PartialNoise
from sdeformer.noise._mlp import MLPNoise
from sdeformer.sweeps import run
from sdeformer.sweeps._points import point_hash
from sdeformer.sweeps._spec import SWEEP_RNG, parse_spec

LEGACY_FIELDS = [
    "tokens", "dim", "width", "layers", "horizon", "activation", "su", "sw", "mlp", "attention",
    "attention_scale", "beta", "seed", "dtype", "sampling", "save_every",
]  # fmt: skip
SMALL: dict[str, Any] = dict(tokens=6, dim=4, width=32, layers=8, horizon=1.0, su=0.1, sw=0.1, dtype="float64")


def test_default_fields_keep_the_config_hash():
    cfg = ModelConfig()
    assert list(cfg.to_dict()) == LEGACY_FIELDS
    assert config_hash(cfg.to_dict()) == "786e0d8fb0f8"  # the hash before noise / share / causal existed
    explicit = ModelConfig(noise="mlp", share=1.0, causal=False)
    assert explicit == cfg and config_hash(explicit.to_dict()) == config_hash(cfg.to_dict())
    changed = ModelConfig(share=0.5).to_dict()
    assert changed["share"] == 0.5 and config_hash(changed) != config_hash(cfg.to_dict())
    assert ModelConfig.from_mapping(changed) == ModelConfig(share=0.5)


def test_share_one_is_todays_model_bit_for_bit():
    cfg = ModelConfig(**SMALL, seed=3, share=1.0, noise="mlp")
    today = StochasticTransformer(
        cfg.layers, cfg.horizon, noise=MLPNoise("relu", 32, 0.1, 0.1), attention=SoftmaxAttention(1.0, 1.0)
    )
    x0 = cfg.initial_tokens()
    assert torch.equal(cfg.build().run(x0, seed=3).x, today.run(x0, seed=3).x)
    partial = ModelConfig(**SMALL, seed=3, share=0.5).build()
    assert isinstance(partial.noise, PartialNoise) and partial.noise.share == 0.5
    assert not torch.equal(partial.run(x0, seed=3).x, today.run(x0, seed=3).x)


@pytest.mark.parametrize(
    "changes",
    [
        {"noise": "banana"},
        {"share": 1.5},
        {"share": float("nan")},
        {"share": True},
        {"causal": 1},
        {"attention": "sinkhorn", "causal": True},
        {"attention": "random", "beta": 2.0},
        {"attention": "nope"},
    ],
)
def test_bad_fields_raise_one_line_config_errors(changes):
    with pytest.raises(ConfigError) as info:
        ModelConfig(**changes)
    assert next(iter(changes)) in str(info.value) or "beta" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("noise", ["mlp", "gaussian", "value", "heads", "quadratic"])
@pytest.mark.parametrize("attention", ["softmax", "off", "usa", "l2", "sinkhorn", "random"])
@pytest.mark.kernels
def test_every_noise_with_every_attention_batched_equals_unbatched(noise, attention):
    causal = attention in ("softmax", "l2")
    configs = [ModelConfig(**SMALL, noise=noise, attention=attention, share=0.5, causal=causal, seed=s) for s in (1, 2)]
    batched = sweep.run_group(configs)  # (S, 2, N, d)
    for k, c in enumerate(configs):
        alone = c.build().run(c.initial_tokens(), seed=c.seed).x
        assert torch.isfinite(alone).all()
        torch.testing.assert_close(batched.x[:, k], alone, rtol=0, atol=1e-12)


def test_causal_softmax_ignores_future_tokens_and_matches_the_formula():
    x = torch.nn.functional.normalize(torch.randn(2, 5, 3, dtype=torch.float64), dim=-1)
    attn = CausalSoftmaxAttention(torch.tensor([0.5, 2.0], dtype=torch.float64), -1.0)
    moved = x.clone()
    moved[:, 3:] = torch.nn.functional.normalize(torch.randn(2, 2, 3, dtype=torch.float64), dim=-1)
    torch.testing.assert_close(attn.drift(moved)[:, :3], attn.drift(x)[:, :3], rtol=0, atol=0)
    i, b = 2, 1  # token 2 of run 1: sum_{j <= 2} softmax_j(2 <x_2, x_j>) (-x_j)
    w = torch.softmax(2.0 * (x[b, : i + 1] @ x[b, i]), dim=0)
    torch.testing.assert_close(attn.drift(x)[b, i], -(w[:, None] * x[b, : i + 1]).sum(0))


def test_sweep_over_share_and_noise_runs_and_share_one_is_the_plain_config(tmp_path):
    base: dict[str, Any] = dict(SMALL, layers=6)
    spec = parse_spec(
        {
            "name": "partial",
            "base": base,
            "axes": {"share": [0.5, 1.0], "noise": ["mlp", "gaussian"]},
            "seeds": 2,
            "observables": ["energy", "mean_cos"],
            "times": "final",
        }
    )
    out = run(spec, tmp_path)
    assert out["runs"] == 8 and out["done"] == 8 and out["error"] == 0
    df = pd.read_parquet(tmp_path / "table")
    assert set(zip(df["share"], df["noise"])) == {(s, n) for s in (0.5, 1.0) for n in ("mlp", "gaussian")}
    plain = ModelConfig(**base).replace(save_every=base["layers"], rng=SWEEP_RNG)  # a sweep's source by default
    rows = cast(pd.DataFrame, df[(df["share"] == 1.0) & (df["noise"] == "mlp")]).sort_values("replicate")
    assert set(rows["config_hash"]) == {point_hash(plain)}  # share = 1 is the plain config: same point
    alone = run(parse_spec({**spec.source, "axes": {}}), tmp_path / "plain")  # the plain config, no new axes
    assert alone["done"] == 2
    same = pd.read_parquet(tmp_path / "plain" / "table").sort_values("replicate")
    for column in ("config_hash", "seed", "energy", "mean_cos"):
        assert same[column].tolist() == rows[column].tolist()  # bit for bit
    for _, row in rows.iterrows():  # and the engine's run is the unbatched run of the plain config
        cfg = plain.replace(seed=int(cast(int, row["seed"])))
        x = cfg.build().run(cfg.initial_tokens(), seed=cfg.seed, rng=cfg.rng).final  # (N, d)
        mean_cos = (x @ x.T)[~torch.eye(6, dtype=torch.bool)].mean()
        assert float(mean_cos) == pytest.approx(row["mean_cos"], rel=0, abs=1e-12)
    # the partial and the common noise differ at the same replicate
    energy = df.set_index(["noise", "share", "replicate"])["energy"]
    assert cast(float, energy[("mlp", 0.5, 0)]) != cast(float, energy[("mlp", 1.0, 0)])
    own = {"params"}  # the parts' own parameters get one column each, named KIND.NAME (tests/test_plugin.py)
    assert {f.name for f in dataclasses.fields(ModelConfig)} - own <= set(df.columns)


def test_run_group_raises_config_error_for_mixed_groups():
    configs = [ModelConfig(tokens=4, dim=3, layers=2), ModelConfig(tokens=5, dim=3, layers=2)]
    with pytest.raises(ConfigError):
        run_group(configs)
