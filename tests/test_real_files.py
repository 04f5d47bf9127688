"""``sdeformer real``'s inputs (docs/real.md, "Inputs"): only regular UTF-8 text files under the size bound, every
option checked before the first forward pass, a checkpoint whose weights do not load fully or that is truncated
refused, all in one line with exit 2; a result folder tied to its inputs' content (an edited text or a replaced
model is refused, never returned stale) and locked against a second writer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("transformers")

from test_real_inputs import _folder, _run, _text

import sdeformer.real._inputs as inputs


def _one_line(result, words: str) -> None:
    lines = [s for s in result.output.strip().splitlines() if s.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
    assert words in lines[0], lines[0]


@pytest.mark.parametrize(
    "kind, words",
    [
        ("utf16", "is not UTF-8"),
        ("latin1", "is not UTF-8"),
        ("random", "is not UTF-8"),
        ("fifo", "not a regular file"),
        ("zero", "not a regular file"),
        ("folder", "not a regular file"),
        ("big", "larger than"),
    ],
)
def test_real_text_must_be_a_regular_utf8_file(tmp_path, monkeypatch, kind, words):
    path = tmp_path / "t.txt"
    if kind == "utf16":
        path.write_text("the cat sat\non the mat\n", encoding="utf-16")
    elif kind == "latin1":
        path.write_bytes("caf\xe9 cr\xe8me\nna\xefve\n".encode("latin-1"))
    elif kind == "random":
        path.write_bytes(bytes(range(128, 256)) * 8)
    elif kind == "fifo":
        os.mkfifo(path)  # opening it would block forever: refused before any open
    elif kind == "zero":
        path = "/dev/zero"
    elif kind == "folder":
        path = tmp_path
    else:
        monkeypatch.setattr(inputs, "MAX_TEXT_BYTES", 100)
        path.write_text("word " * 50, encoding="utf-8")
    out = tmp_path / "out"
    _one_line(_run(["--model", "NOT_LOADED", "--text", str(path)], out), words)
    assert not out.exists()


@pytest.mark.parametrize(
    "args, words",
    [(["--seed", "-1"], "seed"), (["--threads", "100000"], "threads"), (["--tokens", "some"], "tokens")],
)
def test_real_options_checked_before_any_work(tmp_path, args, words):
    _one_line(_run(["--model", "NOT_LOADED", "--text", str(_text(tmp_path)), *args], tmp_path / "out"), words)


@pytest.mark.parametrize("damage, words", [("config", "do not load fully"), ("truncate", "cannot be loaded")])
def test_real_checkpoint_that_does_not_load_fully_is_refused(tmp_path, damage, words):
    folder = _folder(tmp_path, "bert")
    if damage == "config":  # the config names another architecture than its weights: every weight missing
        cfg = json.loads((folder / "config.json").read_text())
        cfg.update(model_type="gpt2", architectures=["GPT2Model"], n_embd=16, n_layer=2, n_head=2)
        (folder / "config.json").write_text(json.dumps(cfg))
    else:
        weights = folder / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    out = tmp_path / "out"
    _one_line(_run(["--model", str(folder), "--text", str(_text(tmp_path))], out), words)
    assert not out.exists()


@pytest.mark.slow
def test_real_out_is_tied_to_content(tmp_path):
    """A finished folder is reused for the same content; an edited text (same path), a tokenizer edited in place
    or a model replaced in place is refused in one line, not returned stale."""
    folder, text, out = _folder(tmp_path, "bert"), _text(tmp_path), tmp_path / "out"
    args = ["--model", str(folder), "--text", str(text)]
    first = _run(args, out)
    assert first.exit_code == 0, first.output
    record = json.loads((out / "real.json").read_text())
    assert set(record["inputs"]) == {"text_sha256", "model_sha256", "tokenizer_sha256"}
    assert _run(args, out).output == first.output  # resumed: the same content
    text.write_text(text.read_text() + "\nthe cat ran far away", encoding="utf-8")
    _one_line(_run(args, out), "another config")
    _text(tmp_path)  # the text back as it was; now the model changes in place
    (tmp_path / "other").mkdir()
    other = _folder(tmp_path / "other", "bert", positions=32)
    vocab = (folder / "tokenizer.json").read_bytes()
    assert b'"cat"' in vocab
    (folder / "tokenizer.json").write_bytes(vocab.replace(b'"cat"', b'"cats"'))  # the tokenizer edited in place
    _one_line(_run(args, out), "another config")
    (folder / "tokenizer.json").write_bytes(vocab)
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_bytes((other / name).read_bytes())
    _one_line(_run(args, out), "another config")


def test_real_out_is_locked_against_a_second_writer(tmp_path):
    """Another process holding the folder's writer lock: this run is refused in one line, nothing measured."""
    folder, text, out = _folder(tmp_path, "bert"), _text(tmp_path), tmp_path / "out"
    code = "import sys, time; from sdeformer.io._lock import folder_lock\nwith folder_lock(sys.argv[1]): time.sleep(60)"
    holder = subprocess.Popen([sys.executable, "-c", code, str(out)], env={**os.environ, "PYTHONPATH": "src"})
    try:
        for _ in range(400):
            if (out / ".lock").is_file() and (out / ".lock").read_text().strip() == str(holder.pid):
                break
            time.sleep(0.05)
        _one_line(_run(["--model", str(folder), "--text", str(text)], out), "another real run is writing there")
        assert not (out / "real.json").exists()
    finally:
        holder.kill()
        holder.wait()
