"""Random-batch inference for the causal character model (THEORY section 7: propagation of chaos).

``sdeformer.attention.random_batch_attention`` shuffles all N tokens into batches of p: every token may
attend to any other, which a causal model forbids. The causal scheme here keeps what a query may see and
subsamples its past instead:

- each query i attends exactly to its ``window`` most recent tokens (i - w, i];
- from the older past [0, i - w] (M_i tokens) it draws ``p`` positions uniformly (with replacement; shared by
  all heads), whose logits get ``+ log(M_i / p)``, so that the softmax numerator and denominator over the
  older past are replaced by unbiased estimates (a self-normalised importance sample of the empirical
  measure of the past);
- when M_i <= p the older past is used exactly; with p >= N the scheme is exact attention.

It preserves causality, the local window exactly, and the mean-field picture (the query interacts with the
empirical measure of its past through a random batch); cost O(N (w + p) d) instead of O(N^2 d).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import ConfigError
from ..store import read_npz
from .models import AttentionFn, CharTransformer, full_attention


def causal_random_batch_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, batch_size: int,
                                  window: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """The causal random-batch attention of the module docstring. q, k, v ``(B, H, N, dh)`` -> ``(B, H, N, dh)``.

    Raises ConfigError for batch_size < 0 or window < 1.
    """
    if int(batch_size) < 0 or int(window) < 1:
        raise ConfigError("batch_size/window", (batch_size, window), "batch_size >= 0 and window >= 1")
    b, h, n, dh = q.shape
    p, w = int(batch_size), int(window)
    i = torch.arange(n, device=q.device)  # (N,)
    local = i[:, None] - torch.arange(w, device=q.device)  # (N, w): i, i-1, ..., i-w+1
    local_ok = local >= 0
    older = (i - w + 1).clamp(min=0)  # (N,): M_i, the number of tokens before the window
    exact = older <= p  # (N,): older past small enough to take whole
    u = torch.rand(b, n, p, generator=generator, device=q.device)  # (B, N, p)
    sampled = (u * older[None, :, None]).floor().long()  # (B, N, p), uniform in [0, M_i)
    whole = torch.arange(p, device=q.device).expand(b, n, p)  # (B, N, p): 0 .. p-1
    far = torch.where(exact[None, :, None], whole, sampled).clamp(max=n - 1)  # (B, N, p); masked if >= M_i
    far_ok = torch.where(exact[:, None], whole[0] < older[:, None], older[:, None] > 0)  # (N, p)
    log_w = torch.where(exact, torch.zeros_like(older, dtype=q.dtype),
                        torch.log(older.to(q.dtype) / max(p, 1)))  # (N,)
    idx = torch.cat([local.clamp(min=0).expand(b, n, w), far], dim=-1)  # (B, N, w + p)
    ok = torch.cat([local_ok, far_ok], dim=-1)  # (N, w + p)
    bias = torch.cat([torch.zeros(n, w, dtype=q.dtype, device=q.device), log_w[:, None].expand(n, p)], dim=-1)
    kk = _take(k, idx)  # (B, H, N, w + p, dh)
    vv = _take(v, idx)  # (B, H, N, w + p, dh)
    scores = (q[:, :, :, None, :] * kk).sum(-1) / math.sqrt(dh) + bias  # (B, H, N, w + p)
    scores = scores.masked_fill(~ok, float("-inf"))
    return (F.softmax(scores, dim=-1)[..., None] * vv).sum(-2)  # (B, H, N, dh)


def _take(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """x ``(B, H, N, dh)`` at key positions idx ``(B, N, K)`` -> ``(B, H, N, K, dh)``."""
    b, h, n, dh = x.shape
    flat = idx.reshape(b, 1, -1, 1).expand(b, h, idx.shape[1] * idx.shape[2], dh)  # (B, H, N K, dh)
    return x.gather(2, flat).reshape(b, h, n, idx.shape[2], dh)


def load_char_model(weights: Path, cfg, vocab: int) -> CharTransformer:
    """A trained character model from its ``.npz`` state dict (written by ``train.run_suite``)."""
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


@torch.no_grad()
def evaluate(model: CharTransformer, x: torch.Tensor, y: torch.Tensor, batch_sizes: Sequence[int],
             window: int = 16, repeats: int = 3, seed: int = 0) -> list[dict]:
    """Perplexity and tokens/s of full attention and of causal random-batch attention for each p.

    Random-batch rows average the perplexity over ``repeats`` draws (with its std); timing is the best of
    the repeats. ``x``, ``y``: validation windows ``(B, N)``.
    """
    rows = []
    model.set_attention(full_attention)
    runs = [_perplexity(model, x, y) for _ in range(repeats)]
    rows.append({"scheme": "full", "p": None, "window": None, "ppl": runs[0][0], "ppl_std": 0.0,
                 "tokens_per_s": max(r[1] for r in runs)})
    g = torch.Generator().manual_seed(seed)
    for p in batch_sizes:
        fn: AttentionFn = lambda q, k, v, causal, p=p: causal_random_batch_attention(q, k, v, p, window, g)
        model.set_attention(fn)
        runs = [_perplexity(model, x, y) for _ in range(repeats)]
        ppl = np.asarray([r[0] for r in runs])
        rows.append({"scheme": "random-batch", "p": int(p), "window": window, "ppl": float(ppl.mean()),
                     "ppl_std": float(ppl.std()), "tokens_per_s": max(r[1] for r in runs)})
    model.set_attention(full_attention)
    return rows


@torch.no_grad()
def kernel_timing(lengths: Sequence[int], batch_size: int, window: int, heads: int = 4, dh: int = 16,
                  seed: int = 0) -> list[dict]:
    """Seconds per call of causal full attention (SDPA) and causal random-batch attention at context N."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for n in lengths:
        q, k, v = torch.randn(3, 1, heads, n, dh, generator=g).unbind(0)  # (1, H, N, dh) each
        times = {}
        for name, fn in (("full", lambda: full_attention(q, k, v, True)),
                         ("random-batch", lambda: causal_random_batch_attention(q, k, v, batch_size, window, g))):
            fn()
            start = time.perf_counter()
            fn()
            times[name] = time.perf_counter() - start
        rows.append({"n": int(n), "p": batch_size, "window": window, "full_s": times["full"],
                     "random_batch_s": times["random-batch"]})
    return rows


SCHEME = ("Causal random-batch attention: each query attends exactly to its last `window` tokens and to p "
          "positions drawn uniformly (with replacement) from its older past, whose logits get + log(M/p) "
          "(M = size of the older past) so that the softmax sums over the older past are unbiased estimates; "
          "exact when M <= p. Causality and the local window are preserved; cost O(N (window + p) d).")


def run(results: Path, batch_sizes: Sequence[int], window: int, lengths: Sequence[int], repeats: int = 3,
        seed: int = 0, quick: bool = False) -> dict:
    """Random-batch inference on the trained character model (baseline, seed 0) of ``results``.

    Raises ConfigError when that model has not been trained (``sdeformer train --task charlm --out``).
    """
    from .methods import METHODS
    from .train import load_task, run_path, task_config, weights_path

    cfg = task_config("charlm", quick=quick)
    weights = weights_path(run_path(Path(results), cfg, METHODS["baseline"], 0))
    if not weights.is_file():
        raise ConfigError("results", str(results), f"no trained character model at {weights} "
                                                   "(run `sdeformer train --task charlm --seeds 1 --out RESULTS`)")
    task = load_task(cfg)
    model = load_char_model(weights, cfg, len(task.corpus.vocab))
    x, y = task.val
    return {"scheme": SCHEME, "context": cfg.context, "windows": int(x.shape[0]), "weights": str(weights),
            "perplexity": evaluate(model, x, y, batch_sizes, window, repeats, seed),
            "kernel": kernel_timing(lengths, max(batch_sizes), window, seed=seed)}
