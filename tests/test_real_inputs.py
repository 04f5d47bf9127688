"""Bad input to ``sdeformer real`` on model folders built here (no download): one line, exit 2, nothing written
(docs/real.md); and sentences longer than the model's context truncated and said."""

from __future__ import annotations

import json
import re

import pytest
import torch

transformers = pytest.importorskip("transformers")

from typer.testing import CliRunner  # noqa: E402

from sdeformer.cli import app  # noqa: E402

SENTENCE = "the cat sat on a mat dog ran far away from home and back again one two three four"
WORDS = SENTENCE.split(" ")
runner = CliRunner()


def _folder(tmp_path, kind: str = "bert", positions: int = 64, nan: bool = False):
    """A tiny randomly initialised model saved with a word-level BERT tokenizer."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]), encoding="utf-8")
    tokenizer = transformers.BertTokenizer(str(vocab), model_max_length=positions)
    torch.manual_seed(0)
    if kind == "bert":
        cfg = transformers.BertConfig(
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            vocab_size=len(WORDS) + 5,
            max_position_embeddings=positions,
        )
        model = transformers.BertModel(cfg)
        if nan:
            with torch.no_grad():
                model.encoder.layer[1].output.dense.weight.fill_(float("nan"))
    else:  # a model type that is refused (ALBERT shares one block's weights across layers)
        cfg = transformers.AlbertConfig(
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            vocab_size=len(WORDS) + 5,
            max_position_embeddings=positions,
        )
        model = transformers.AlbertModel(cfg)
    folder = tmp_path / f"model_{kind}_{positions}_{nan}"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _text(tmp_path, long: bool = False):
    lines = [" ".join(WORDS[k : k + 6]) for k in range(12)]
    if long:
        lines[0] = " ".join(WORDS * 3)
    path = tmp_path / "s.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _run(args, out):
    return runner.invoke(app, ["real", *args, "--no-controls", "--json", "--out", str(out)])


@pytest.mark.parametrize(
    "kind, nan, words",
    [("albert", False, "albert.*not supported"), ("bert", True, "non-finite hidden state")],
)
def test_real_bad_model_one_line_nothing_written(tmp_path, kind, nan, words):
    out = tmp_path / "out"
    result = _run(["--model", str(_folder(tmp_path, kind, nan=nan)), "--text", str(_text(tmp_path))], out)
    assert result.exit_code == 2, result.output
    lines = [s for s in result.output.strip().splitlines() if s.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output
    assert re.search(words, lines[0]), lines[0]
    assert not out.exists()  # nothing written, not even the folder's claim


def test_real_failed_run_leaves_an_existing_folder_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    result = _run(["--model", str(_folder(tmp_path, "bert", nan=True)), "--text", str(_text(tmp_path))], out)
    assert result.exit_code == 2 and list(out.iterdir()) == []


def test_real_too_long_sentences_truncated_and_said(tmp_path):
    out = tmp_path / "out"
    folder = _folder(tmp_path, "bert", positions=16)
    result = _run(["--model", str(folder), "--text", str(_text(tmp_path, long=True))], out)
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert got["note"].startswith("1 sentence(s) truncated") and (out / "real.json").is_file()
