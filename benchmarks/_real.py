"""``sdeformer real``'s speed on this machine: the hooks' cost against the model's own plain forward pass, and
the measurement of the trained model (256 sentences of all-MiniLM-L6-v2 by default) stage by stage.

The plain forward pass (batches of 32, padded, no hidden states) and the hooked capture (``real._load.capture``:
the same batches with ``output_hidden_states`` and forward hooks on every block's attention and MLP) take turns
over ``--rounds`` rounds (``timing.interleaved``: on a shared machine one timing moves a lot); reported per round
and as tokens per second, with the per-round ratio hooked / plain. Then one pass of each stage of the trained
model's measurement (capture, per-layer statistics, kernel and its held-out R^2 with intervals, the beta I
attention fit with intervals, the full Q^T K fit, the fitted stochastic transformer) and their sum. Everything at
``--threads`` torch threads (default 1, as ``sdeformer real``), the analysis on one. Numbers go to docs/real.md,
not to source.

    python -m benchmarks real                   # writes benchmarks/results/real.json
    python -m benchmarks real --sentences 64 --rounds 2 --threads 2
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from sdeformer.core._threads import torch_threads
from sdeformer.io._formats import write_json
from sdeformer.real import _load as load
from sdeformer.real._measure import analyse, verdict

from ._timing import conditions, interleaved, ratio, spread

RESULTS = Path("benchmarks") / "results" / "real.json"  # relative to the working folder (a checkout: its results)
BATCH = 32


def plain_forward(tokenizer, model, sentences: list[str]) -> None:
    """The model's own forward pass over ``sentences`` in padded batches, nothing kept."""
    with torch.no_grad():
        for k in range(0, len(sentences), BATCH):
            model(**tokenizer(sentences[k : k + BATCH], return_tensors="pt", padding=True, truncation=True))


def stages(tokenizer, model, sentences: list[str]) -> dict[str, float]:
    """Seconds of each stage of the trained model's measurement, run once."""
    from sdeformer.real._attention_full import fit_full
    from sdeformer.real._fitted import fitted_model

    lay, d = load.layout(model), int(model.config.hidden_size)
    out: dict[str, float] = {}
    start = time.perf_counter()
    cap = load.capture(tokenizer, model, sentences, BATCH)
    out["capture"] = time.perf_counter() - start
    start = time.perf_counter()
    with torch_threads(1):  # as real._measure: the analysis on one thread
        part = analyse(cap, d, lay.causal)
        part["verdict"] = verdict(part, d)
        out["statistics_kernel_attention"] = time.perf_counter() - start
        start = time.perf_counter()
        fit_full(cap.hidden, cap.attn, part["attention_beta"], lay.causal)
        out["attention_full"] = time.perf_counter() - start
        start = time.perf_counter()
        fitted_model(cap, {**part, "dim": d})
        out["fitted_model"] = time.perf_counter() - start
    out["total"] = sum(out.values())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default=load.MINILM)
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (sdeformer real's default: 1)")
    args = parser.parse_args()
    with torch_threads(args.threads):
        _bench(args)


def _bench(args: argparse.Namespace) -> None:
    tokenizer, model = load.load_model(args.model)
    sentences = load.shakespeare_sentences(args.sentences, tokenizer)
    tokens = sum(len(tokenizer(s)["input_ids"]) for s in sentences)
    before = conditions()
    record, _ = interleaved(
        {
            "plain": lambda: plain_forward(tokenizer, model, sentences),
            "hooked": lambda: load.capture(tokenizer, model, sentences, BATCH),
        },
        torch.device("cpu"),
        rounds=args.rounds,
        warmup=True,
    )
    secs = record["seconds"]
    result = {
        "model": str(args.model),
        "threads": torch.get_num_threads(),
        "sentences": len(sentences),
        "tokens": tokens,
        "conditions_before": before,
        "rounds": record,
        "plain_tokens_per_s": spread([tokens / s for s in secs["plain"]]),
        "hooked_tokens_per_s": spread([tokens / s for s in secs["hooked"]]),
        "hooked_over_plain": ratio(secs["hooked"], secs["plain"]),
        "stages_s": stages(tokenizer, model, sentences),
        "conditions_after": conditions(),
    }
    write_json(args.out, result, checksum=True)
    print(
        f"{tokens} tokens: plain {result['plain_tokens_per_s']['median']:.0f} tok/s, hooked "
        f"{result['hooked_tokens_per_s']['median']:.0f} tok/s, ratio {result['hooked_over_plain']['median']:.2f}x "
        f"(median of {args.rounds} rounds); trained-model measurement {result['stages_s']['total']:.1f} s "
        f"({', '.join(f'{k} {v:.1f}' for k, v in result['stages_s'].items() if k != 'total')})"
    )


if __name__ == "__main__":
    main()
