"""Memory estimates of the commands that size arrays from their options (docs/bad-inputs.md, "memory"): ``peer``,
``train``, ``probe``, ``infer-practice`` and ``real``, each refused before it allocates when the
estimate exceeds the limit (``core._validate.fits_in_memory``: ``--max-memory``, else the memory available now).

Each estimate is the sum of the arrays the command holds at its peak, in bytes, from the shapes its code
allocates (docs/bad-inputs.md gives the shapes; ``tests/test_memory_bounds.py`` checks that each bounds the peak
resident memory of a run and is not ten times above it):

- ``peer`` (simuformer, glpr; THEORY section 1): the tokens ``(B, N, d)`` and per-head copies, the matrices
  ``(H, pp, d, d)``, the pair statistic's ``(B, N, N)`` cosines and, for the causal and the unnormalized
  attention, the ``(H, B, N, N)`` scores, three copies (scores, masked, weights; the fused softmax kernel holds at most
  ``SCORE_BUDGET`` scores);
- ``train`` (THEORY section 7): the activations kept for the backward pass, about ``24 d`` numbers per token
  and block plus three copies of the logits, and the per-layer statistics of 16 sequences, ``(16, N, N)``
  cosine and energy matrices;
- ``probe``: MiniLM's forward pass on ``samples`` copies of at most 512 tokens, its recorded states, the noise
  MLP's per-sample weights ``(S, m, d)`` and hidden layer ``(S, N, m)``, and the ``(S, N, N)`` matrices of the
  cosine, energy and cluster statistics;
- ``infer-practice``: the block random-batch attention's padded blocks, keys ``(nb, BH, 2b + p, dh)`` and
  one copy of the scores ``(nb, BH, b, 2b + p)`` (torch's fused kernel takes the mask and holds less) at the
  model's context and at each kernel-timing length;
- ``real``: the captured stream, attention, MLP input and output ``4 (L + 1) n d`` per sentence of at most
  ``n`` tokens, kept for every sentence, with the analysis's copies;
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...core._validate import fits_in_memory

F32 = 4  # bytes of a float32
MODEL = 300 * 2**20  # transformers and a small model's weights, loaded by probe and real (about 200-320 MB measured)
STATS_COPIES = 5  # (S, N, N) matrices of the statistics at once: cosines, e^{beta c}, the cluster closure's three
MINILM = {"dim": 384, "layers": 6, "heads": 12, "hidden": 1536, "tokens": 512}  # all-MiniLM-L6-v2's shape
TRAINING = 256 * 2**20  # train's own buffers besides the arrays below (the corpus, autograd; 240 MB at context 64)
SCORE_BUDGET = 2**26  # attention._softmax.SCORE_BUDGET: the scores one fused softmax call holds at most


def bound(name: str, value: object, estimate: float) -> int:
    """Refuse (ConfigError naming ``name``, one line) an ``estimate`` above the limit; returns it in bytes."""
    fits_in_memory(name, value, estimate)
    return int(estimate)


def peer_bytes(name: str, s: dict) -> int:
    """The peak of ``peer NAME`` with the peer's resolved settings ``s`` (0 for a peer of fixed size)."""
    if name not in ("simuformer", "glpr"):
        return 0
    e = F32 if name == "simuformer" else 8  # simuformer runs in float32, glpr in float64
    b, n, d, h = s["batch"], s["tokens"], s["dim"], s.get("heads", 1)
    pp = 1 if s["noanneal"] else b  # one matrix per run, or one for every run
    dense = s.get("sequential", False) or (name == "glpr" and not s["use_softmax"])  # explicit (N, N) weights
    scores = h * b * n * n if dense else min(h * b * n * n, SCORE_BUDGET)
    total = 4 * h * pp * d * d + b * n * d * (4 + 3 * h) + (3 if dense else 2) * scores + b * n * n  # 3: masked
    cells = s["betas"] * s.get("checkpoints", 200) * 64  # the table of Python floats, as lists and JSON
    return e * total + b * n * n + cells  # + the pair statistic's boolean (B, N, N)


def train_bytes(cfg, vocab: int = 256) -> int:
    """The peak of ``train`` for a ``practice._tasks.TaskConfig`` (charlm: ``vocab`` characters at most)."""
    m = cfg.model
    n = cfg.context if cfg.task == "charlm" else (28 // 7) ** 2 + 1  # mnist: 16 patches and the class token
    step = cfg.batch * n * (24 * m.dim * m.layers + 3 * vocab)  # activations and logits kept for backward
    evaluation = min(cfg.eval_size, 500) * n * (8 * m.dim + 2 * vocab)  # validation chunks, no gradients
    sequences = 16 if cfg.task == "charlm" else 64  # the per-layer statistics' inputs
    stats = sequences * (m.layers * n * m.dim + 4 * n * n)  # the recorded states, then cosines and energies
    return TRAINING + F32 * (max(step, evaluation, stats) + 12 * m.dim * m.dim * m.layers)  # + weights and AdamW


def probe_bytes(characters: int, samples: int, width: int, shape: dict | None = None) -> int:
    """The peak of ``probe`` on a text of ``characters`` characters (at most one token each, and at most the
    model's 512) with ``samples`` noise draws and a noise MLP of ``width``."""
    m = shape or MINILM
    n, d, s = min(m["tokens"], characters + 2), m["dim"], samples
    forward = s * n * (8 * d + m["hidden"]) + 2 * s * m["heads"] * n * n  # one block's activations and scores
    noise = 2 * s * width * d + 2 * s * n * width  # the drawn MLP weights and its hidden layer
    states = (m["layers"] + 1) * s * n * d * 2  # the recorded states and their normalized copies
    return MODEL + F32 * (forward + noise + states + STATS_COPIES * s * n * n)


def random_batch_bytes(b: int, h: int, n: int, dh: int, p: int, block: int) -> int:
    """The block random-batch attention (``practice._inference``) on q, k, v ``(b, h, n, dh)``."""
    nb = -(-n // block)
    width, rows = 2 * block + p, b * h * nb
    blocks = 8 * b * h * nb * block * dh + 4 * rows * width * dh  # padded q, k, v, out, blocks; cat keys, values
    scores = (2 * nb + rows) * block * width  # the bias pieces and their concatenation; one copy of the scores
    return F32 * (blocks + scores) + 20 * b * nb * p  # + the far positions (int64 indices, rows; float32 draws)


def inference_bytes(cfg, batch_sizes: Sequence[int], block: int, lengths: Iterable[int]) -> int:
    """The peak of ``infer-practice`` for the trained model's ``TaskConfig`` (its ``eval_size`` validation
    windows at its context) and the options ``--p``, ``--block``, ``--n`` (timed with 4 heads of 16)."""
    m, n, p, windows = cfg.model, cfg.context, max(batch_sizes), cfg.eval_size
    model = windows * n * (12 * m.dim + 2 * 256)  # one block's activations and the logits
    evaluate = model * F32 + random_batch_bytes(windows, m.heads, n, m.dim // m.heads, p, block)
    timing = [F32 * 8 * 4 * k * 16 + random_batch_bytes(1, 4, k, 16, p, block) for k in lengths]
    return max([evaluate, *timing])


def real_bytes(tokens: Sequence[int], shape: dict) -> int:
    """The peak of ``real`` on sentences of at most ``tokens`` tokens each, a model of ``shape`` (``shape_of``):
    the captures of every sentence (one control at a time; the analysis holds about three copies) and one
    forward batch of 32 sentences with its eager ``(H, n, n)`` attention weights."""
    d, layers, h, n = shape["dim"], shape["layers"], shape["heads"], max(tokens, default=0)
    capture = 3 * 4 * (layers + 1) * d * sum(tokens)  # stream, attention, MLP input and output per token
    batch = min(len(tokens), 32) * (12 * d * n + 2 * h * n * n)
    return MODEL + F32 * (capture + batch)


def shape_of(config) -> dict:
    """(dim, layers, heads, hidden, tokens) of a Hugging Face model ``config`` (BERT or GPT-2 names)."""

    def first(*names: str, default: int) -> int:
        return int(next((getattr(config, k) for k in names if getattr(config, k, None)), default))

    d = first("hidden_size", "n_embd", default=768)
    return {
        "dim": d,
        "layers": first("num_hidden_layers", "n_layer", default=12),
        "heads": first("num_attention_heads", "n_head", default=12),
        "hidden": first("intermediate_size", "n_inner", default=4 * d),
        "tokens": first("max_position_embeddings", "n_positions", default=512),
    }
