"""Random-batch inference for the causal character model (THEORY section 7: propagation of chaos).

``sdeformer.attention._softmax.random_batch_attention`` shuffles all N tokens into batches of p: every token may
attend to any other, which a causal model forbids. The causal scheme here keeps what a query may see and
subsamples its far past, in blocks so that everything is a dense matrix product:

- the sequence is cut into blocks of ``block`` = b tokens; a query of block j attends exactly (causally) to
  its own block and to the whole previous block, so it always sees its last b to 2b tokens;
- the far past of block j, the M_j = (j - 1) b positions before the previous block, is subsampled once per
  block (shared by the block's queries and all heads): p positions, one drawn uniformly in each of p equal
  slices of [0, M_j) (stratified sampling: distinct positions, each included with probability p / M_j);
  their logits get ``+ log(M_j / p)``, so the softmax numerator and denominator over the far past are
  replaced by unbiased estimates (the query interacts with a random batch of the empirical measure of its
  past);
- a block whose far past has M_j <= p takes it whole (no shift): with p >= N - 2b the scheme is exact
  attention; p = 0 is the local-block scheme alone.

Cost O(N (2b + p) d) time and O(N (2b + p)) memory per head, instead of O(N^2 d).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np
import torch
import torch.nn.functional as F

from ..core._errors import ConfigError
from ..core._rng import derive_seeds
from ..io._formats import read_json, read_npz
from ._networks import AttentionFn, CharTransformer, NetConfig, full_attention
from ._suite import claimed_runs
from ._tasks import CharTask, TaskConfig, load_task


def far_positions(
    blocks: int,
    block: int,
    batch_size: int,
    batches: int,
    generator: torch.Generator | None = None,
    device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The far-past sample of every block: (idx ``(B, nb, p)`` long, valid ``(nb, p)`` bool, shift ``(nb,)`` float64).

    Block j has M_j = max(j - 1, 0) * block far positions; when M_j <= p they are all taken (idx 0..p-1, the
    first M_j valid, shift 0), otherwise one uniform draw per slice [s M_j / p, (s + 1) M_j / p) (shift
    log(M_j / p)).
    """
    p = int(batch_size)
    m = (torch.arange(blocks, device=device) - 1).clamp(min=0) * block  # (nb,): M_j
    exact = m <= p  # (nb,)
    u = torch.rand(batches, blocks, p, generator=generator, device=device)  # (B, nb, p)
    slices = torch.arange(p, device=device)  # (p,)
    drawn = ((slices + u) * m[:, None] / max(p, 1)).floor().long()  # (B, nb, p): slice s of [0, M_j)
    idx = torch.where(exact[:, None], slices, drawn)  # (B, nb, p)
    valid = ~exact[:, None] | (slices < m[:, None])  # (nb, p)
    shift = torch.where(exact, 0.0, torch.log(m.clamp(min=1).double() / max(p, 1)))  # (nb,) float64
    return idx, valid, shift


def causal_random_batch_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    batch_size: int,
    block: int,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The block random-batch attention of the module docstring. q, k, v ``(B, H, N, dh)`` -> ``(B, H, N, dh)``.

    One ``scaled_dot_product_attention`` call over the nb blocks (as its batch), each block's b queries
    against its 2b + p keys under an additive bias (0 / log(M_j / p) / -inf). Raises ConfigError for
    batch_size < 0 or block < 1.
    """
    if int(batch_size) < 0 or int(block) < 1:
        raise ConfigError("batch_size/block", (batch_size, block), "batch_size >= 0 and block >= 1")
    bsz, h, n, dh = q.shape
    p, b = int(batch_size), int(block)
    nb = -(-n // b)
    pad = nb * b - n  # padded keys sit after every real query: causally masked, never sampled
    # (nb, BH, b, dh) each
    qb, kb, vb = (F.pad(t, (0, 0, 0, pad)).reshape(bsz * h, nb, b, dh).transpose(0, 1) for t in (q, k, v))
    keys = [F.pad(kb, (0, 0, 0, 0, 0, 0, 1, 0))[:-1], kb]  # previous block (zeros for j = 0), own block
    values = [F.pad(vb, (0, 0, 0, 0, 0, 0, 1, 0))[:-1], vb]  # 2 x (nb, BH, b, dh)
    neg = torch.tensor(float("-inf"), dtype=q.dtype, device=q.device)
    zero = torch.zeros((), dtype=q.dtype, device=q.device)
    first = (torch.arange(nb, device=q.device) > 0)[:, None, None]  # (nb, 1, 1): block j has a previous block
    tri = torch.ones(b, b, dtype=torch.bool, device=q.device).tril()  # (b, b): causal inside the block
    bias = [torch.where(first, zero, neg).expand(nb, b, b), torch.where(tri, zero, neg).expand(nb, b, b)]
    if p > 0:
        idx, valid, shift = far_positions(nb, b, p, bsz, generator, q.device)  # (B, nb, p), (nb, p), (nb,)
        rows = (idx.clamp(max=n - 1) + torch.arange(bsz, device=q.device)[:, None, None] * n).flatten()  # (B nb p,)
        for src, dst in ((k, keys), (v, values)):
            far = src.transpose(1, 2).reshape(bsz * n, h * dh).index_select(0, rows)  # (B nb p, H dh)
            far = far.view(bsz, nb, p, h, dh).permute(1, 0, 3, 2, 4)  # (nb, B, H, p, dh)
            dst.append(far.reshape(nb, bsz * h, p, dh))  # (nb, BH, p, dh)
        bias.append(torch.where(valid, shift.to(q.dtype)[:, None], neg)[:, None, :].expand(nb, b, p))
    mask = torch.cat(bias, dim=-1)[:, None]  # (nb, 1, b, 2b + p)
    out = F.scaled_dot_product_attention(
        qb.contiguous(), torch.cat(keys, dim=2), torch.cat(values, dim=2), attn_mask=mask
    )  # (nb, BH, b, dh)
    return out.transpose(0, 1).reshape(bsz, h, nb * b, dh)[:, :, :n]


def load_char_model(weights: Path, cfg, vocab: int) -> CharTransformer:
    """A trained character model from its ``.npz`` state dict (written by ``suite.run_suite``)."""
    model = CharTransformer(cfg.model, vocab, cfg.context)
    state = {k: torch.from_numpy(np.asarray(v)) for k, v in read_npz(weights).items()}
    model.load_state_dict(state)
    return model.eval()


@torch.no_grad()
def _perplexity(model: CharTransformer, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """(perplexity, tokens per second) of one forward pass over all windows."""
    start = time.perf_counter()
    logits = model(x)  # (B, N, vocab)
    seconds = time.perf_counter() - start
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    return float(torch.exp(loss)), x.numel() / seconds


def _random_batch(batch_size: int, block: int, generator: torch.Generator) -> AttentionFn:
    """The block random-batch attention kernel drawing from ``generator`` (always causal)."""

    def fn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
        return causal_random_batch_attention(q, k, v, batch_size, block, generator)

    return fn


@torch.no_grad()
def evaluate(
    model: CharTransformer,
    x: torch.Tensor,
    y: torch.Tensor,
    batch_sizes: Sequence[int],
    block: int = 64,
    repeats: int = 3,
    seed: int = 0,
) -> list[dict]:
    """Perplexity and tokens/s of full attention and of block random-batch attention for each p (p = 0: the
    local blocks alone).

    Random-batch rows average the perplexity over the ``repeats`` sampling seeds ``derive_seeds(seed, repeats)``
    (with its std); timing is the best of the ``repeats`` passes of every row. ``x``, ``y``: validation windows
    ``(B, N)``.
    """
    rows = []
    model.set_attention(full_attention)
    runs = [_perplexity(model, x, y) for _ in range(repeats)]
    rows.append(
        {
            "scheme": "full",
            "p": None,
            "block": None,
            "ppl": runs[0][0],
            "ppl_std": 0.0,
            "tokens_per_s": max(r[1] for r in runs),
        }
    )
    for p in batch_sizes:
        runs = []
        for s in derive_seeds(seed, repeats):
            g = torch.Generator().manual_seed(s)
            model.set_attention(_random_batch(p, block, g))
            runs.append(_perplexity(model, x, y))
        ppl = np.asarray([r[0] for r in runs])
        rows.append(
            {
                "scheme": "random-batch" if p > 0 else "local-block",
                "p": int(p),
                "block": block,
                "ppl": float(ppl.mean()),
                "ppl_std": float(ppl.std()),
                "tokens_per_s": max(r[1] for r in runs),
            }
        )
    model.set_attention(full_attention)
    return rows


@torch.no_grad()
def kernel_timing(
    lengths: Sequence[int], batch_size: int, block: int, heads: int = 4, dh: int = 16, seed: int = 0
) -> list[dict]:
    """Seconds per call (after one warm-up call) of causal full attention (SDPA, ``is_causal=True``) and
    block random-batch attention, one sequence of N tokens, ``heads`` x ``dh`` = d."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for n in lengths:
        q, k, v = torch.randn(3, 1, heads, n, dh, generator=g).unbind(0)  # (1, H, N, dh) each
        times = {}
        for name, fn in (("full", full_attention), ("random-batch", _random_batch(batch_size, block, g))):
            fn(q, k, v, True)
            start = time.perf_counter()
            fn(q, k, v, True)
            times[name] = time.perf_counter() - start
        rows.append(
            {
                "n": int(n),
                "p": batch_size,
                "block": block,
                "d": heads * dh,
                "full_s": times["full"],
                "random_batch_s": times["random-batch"],
            }
        )
    return rows


SCHEME = (
    "Block random-batch attention: the sequence is cut into blocks of b tokens; each query attends exactly "
    "(causally) to its own block and the previous one, and to p positions of the older past sampled once "
    "per block (one uniform draw in each of p equal slices of the M = (j - 1) b older positions), whose "
    "logits get + log(M/p) so that the softmax sums over the older past are unbiased estimates; exact "
    "when M <= p. Causal; one dense SDPA call; cost O(N (2b + p) d)."
)


def find_char_model(results: Path) -> tuple[Path, TaskConfig]:
    """The trained character model of ``results`` (``charlm/baseline__seed0__*.weights.npz``) and its settings.

    Raises ConfigError when there is none or more than one.
    """
    folder = Path(results) / "charlm"
    claimed = claimed_runs(folder)  # a folder tied to one train config: that config's model only
    found = [p for p in sorted(folder.glob("baseline__seed0__*.weights.npz")) if claimed is None or p.name in claimed]
    if len(found) != 1:
        hint = "run `sdeformer train --task charlm --method baseline --seeds 1 --out RESULTS`"
        raise ConfigError("results", str(results), f"one trained character model, found {len(found)} ({hint})")
    record = read_json(found[0].with_name(found[0].name.replace(".weights.npz", ".json")))
    task = dict(record["settings"]["task"])
    return found[0], TaskConfig(**{**task, "model": NetConfig(**task["model"])})


def inference_settings(
    batch_sizes: Sequence[int], block: int, lengths: Sequence[int], repeats: int = 3, seed: int = 0
) -> dict:
    """The settings of ``run`` that ``RESULTS/inference.json`` is tied to (its ``settings``; the model is the
    results folder's)."""
    return {
        "batch_sizes": [int(p) for p in batch_sizes],
        "block": int(block),
        "lengths": [int(n) for n in lengths],
        "repeats": int(repeats),
        "seed": int(seed),
    }


def record_settings(record: dict) -> dict | None:
    """The ``settings`` of an inference record; None for one written before records kept them; KeyError when
    ``record`` is no inference record."""
    if "perplexity" not in record:
        raise KeyError("perplexity")
    return record.get("settings")


def run(
    results: Path, batch_sizes: Sequence[int], block: int, lengths: Sequence[int], repeats: int = 3, seed: int = 0
) -> dict:
    """Random-batch inference on the trained character model (baseline, seed 0) of ``results``, on its
    validation windows at its training context. Raises ConfigError when that model is missing."""
    weights, cfg = find_char_model(results)
    task = cast(CharTask, load_task(cfg))  # find_char_model finds character models only
    model = load_char_model(weights, cfg, len(task.corpus.vocab))
    x, y = task.val
    return {
        "scheme": SCHEME,
        "context": cfg.context,
        "windows": int(x.shape[0]),
        "weights": str(weights),
        "settings": inference_settings(batch_sizes, block, lengths, repeats, seed),
        "perplexity": evaluate(model, x, y, batch_sizes, block, repeats, seed),
        "kernel": kernel_timing(lengths, max(batch_sizes), block, seed=seed) if lengths else [],
    }
