"""Graph masks and two-species blocks for softmax attention (BEYOND sections 8 and 9).

A mask says which tokens a token may attend to. ``graph_adjacency(spec, n)`` builds the ``(N, N)`` boolean
adjacency of a named graph or a file:

- ``"path"``, ``"cycle"``, ``"complete"``;
- ``"grid"`` (a square of sqrt(N) x sqrt(N) tokens) or ``"grid:RxC"`` (R rows, C columns, R C = N), the four
  nearest neighbours, row-major;
- ``"regular:K"`` or ``"regular:K:SEED"``: a uniform random simple K-regular graph (pairing model with
  rejection; seed 0 unless given), fixed by the spec, the same for every run;
- a file: ``.npy`` holds an ``(N, N)`` adjacency matrix (row i: the tokens i attends to, directed allowed);
  any other suffix is an edge list, two token indices per line (``#`` starts a comment), undirected.

Every token also attends to itself (a self loop), so that every softmax row has an entry. ``allowed`` combines
a graph with the causal mask (j <= i); with ``cross = K`` the first K tokens are the encoder species Y (they
attend to Y only) and the rest the decoder species X, which attends causally to X in its self-attention and to
all of Y in a second, cross-attention softmax (``cross_allowed``). ``MaskedAttention`` is the paper's softmax
attention (Q^T K = beta I, V = s I) with these masks and an additive logit bias; ``attention._alibi`` adds the
ALiBi bias. ``spectral_gap`` is the rate of the linearized consensus on a graph (BEYOND section 8).
"""

from __future__ import annotations

import math
import numbers
import re
from pathlib import Path

import numpy as np
import torch

from ..contracts import RandomSource
from ..core._errors import ConfigError
from ..core._shapes import run_param
from ..core._validate import finite_float, nonneg_float, per_run, positive_float
from ..params import FIELDS

GRAPHS = ("path", "cycle", "complete", "grid", "grid:RxC", "regular:K", "regular:K:SEED", "a .npy or edge-list file")
_INDEX = re.compile(r"-?[0-9]+")  # an edge-list token index (ASCII digits; int() takes other digits too)
PAIRING_TRIES = 2000  # pairing-model draws before giving up on a simple K-regular graph


def _edges(n: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    """The symmetric ``(N, N)`` adjacency of undirected ``pairs``."""
    adj = np.zeros((n, n), dtype=bool)
    for i, j in pairs:
        adj[i, j] = adj[j, i] = True
    return adj


def _grid(spec: str, n: int) -> np.ndarray:
    if spec == "grid":
        rows = math.isqrt(n)
        if rows * rows != n:
            raise ConfigError("mask", spec, f"a square grid needs a square number of tokens, not {n}; give grid:RxC")
        cols = rows
    else:
        try:
            rows, cols = (int(v) for v in spec.split(":", 1)[1].lower().split("x"))
        except ValueError:
            raise ConfigError("mask", spec, "grid:RxC with integers R, C (e.g. grid:4x8)") from None
        if rows < 1 or cols < 1 or rows * cols != n:
            raise ConfigError("mask", spec, f"grid:RxC needs R C = tokens = {n}")
    pairs = [(r * cols + c, r * cols + c + 1) for r in range(rows) for c in range(cols - 1)]
    pairs += [(r * cols + c, (r + 1) * cols + c) for r in range(rows - 1) for c in range(cols)]
    return _edges(n, pairs)


def _regular(spec: str, n: int) -> np.ndarray:
    parts = spec.split(":")
    try:
        k, seed = int(parts[1]), int(parts[2]) if len(parts) > 2 else 0
    except (ValueError, IndexError):
        raise ConfigError("mask", spec, "regular:K or regular:K:SEED with integers K >= 1, SEED >= 0") from None
    if len(parts) > 3 or not 1 <= k < n or (n * k) % 2 or seed < 0:
        raise ConfigError("mask", spec, f"regular:K needs 1 <= K < tokens = {n} and K * tokens even")
    rng = np.random.default_rng(seed)
    for _ in range(PAIRING_TRIES):
        stubs = rng.permutation(np.repeat(np.arange(n), k)).reshape(-1, 2)  # (N K / 2, 2)
        pairs = {(min(a, b), max(a, b)) for a, b in stubs.tolist()}
        if len(pairs) == len(stubs) and all(a != b for a, b in pairs):  # simple: no loop, no double edge
            return _edges(n, sorted(pairs))
    raise ConfigError("mask", spec, f"no simple {k}-regular graph on {n} tokens found in {PAIRING_TRIES} draws")


def _read_npy(path: Path, spec: str, n: int) -> np.ndarray:
    """The array of a ``.npy`` file, its header's shape checked against ``(n, n)`` before the data is read (a
    damaged header cannot make it allocate). ConfigError for a file that is not a whole ``.npy`` array."""
    not_npy = ConfigError("mask", spec, "not a .npy array file, or a damaged one (save it with numpy.save)")
    fmt = np.lib.format
    try:
        with path.open("rb") as f:
            version = fmt.read_magic(f)
            shape = (fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0)(f)[0]
    except OSError:
        raise
    except Exception:  # numpy's header parser raises ValueError, EOFError, SyntaxError or TokenError
        raise not_npy from None
    if shape != (n, n):
        raise ConfigError("mask", spec, f"the adjacency matrix must be ({n}, {n}), not {shape}")
    try:
        return np.load(path, allow_pickle=False)
    except OSError:
        raise
    except Exception:  # object arrays (no pickles), truncated data
        raise not_npy from None


def _from_file(spec: str, n: int) -> np.ndarray:
    """The graph of a mask file (BEYOND section 8): a ``.npy`` 0/1 adjacency matrix ``(n, n)`` (an unweighted
    graph: NaN, negative or other weights refused), else an edge list of exactly two token indices per line.
    Raises ConfigError naming ``mask`` and what is wrong (the line, for an edge list)."""
    path = Path(spec)
    try:
        if path.suffix.lower() == ".npy":
            adj = _read_npy(path, spec, n)
            if not np.issubdtype(adj.dtype, np.number) and adj.dtype != bool:
                raise ConfigError("mask", spec, f"the adjacency matrix must hold numbers, not {adj.dtype}")
            if not np.isin(adj, (0, 1)).all():
                bad = adj[~np.isin(adj, (0, 1))].flat[0]
                raise ConfigError("mask", spec, f"the adjacency matrix must hold 0/1 entries (unweighted), found {bad}")
            return adj != 0
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError("mask", spec, f"cannot read the graph file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError("mask", spec, "not a text edge list (not UTF-8); an adjacency matrix is a .npy") from None
    pairs = []
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2 or not all(_INDEX.fullmatch(f) for f in fields):
            raise ConfigError("mask", spec, f"an edge list holds two token indices per line; line {number}: {line!r}")
        pairs.append((int(fields[0]), int(fields[1])))
    if any(not (0 <= i < n and 0 <= j < n) for i, j in pairs):
        raise ConfigError("mask", spec, f"edge-list indices must lie in [0, {n})")
    return _edges(n, pairs)


def graph_adjacency(spec: str, n: int) -> torch.Tensor:
    """The ``(N, N)`` boolean adjacency of the graph ``spec`` on ``n`` tokens, self loops included (module
    docstring). Raises ConfigError naming ``mask`` for an unknown name, a bad size or an unreadable file."""
    if not isinstance(spec, str) or not spec:
        raise ConfigError("mask", spec, f"one of {list(GRAPHS)}")
    if spec == "path" or spec == "cycle":
        adj = _edges(n, [(i, i + 1) for i in range(n - 1)] + ([(n - 1, 0)] if spec == "cycle" and n > 2 else []))
    elif spec == "complete":
        adj = np.ones((n, n), dtype=bool)
    elif spec == "grid" or spec.startswith("grid:"):
        adj = _grid(spec, n)
    elif spec.startswith("regular:"):
        adj = _regular(spec, n)
    elif Path(spec).suffix:
        adj = _from_file(spec, n)
    else:
        raise ConfigError("mask", spec, f"one of {list(GRAPHS)}")
    return torch.from_numpy(adj | np.eye(n, dtype=bool))


def check_cross(cross: int, n: int) -> int:
    """The number K of encoder tokens: an int in [0, N - 1] (0: one species). Raises ConfigError otherwise."""
    if isinstance(cross, bool) or not isinstance(cross, numbers.Integral) or not 0 <= cross < n:
        raise ConfigError(
            "cross", cross, f"the number of encoder tokens must be an integer in [0, tokens - 1 = {n - 1}]"
        )
    return int(cross)


def allowed(n: int, *, causal: bool = False, mask: str = "", cross: int = 0) -> torch.Tensor:
    """Which j each token i attends to in its self-attention, ``(N, N)`` bool: the graph of ``mask`` (all pairs
    if empty), j <= i if ``causal``; with ``cross = K``: encoder rows i < K see j < K only, decoder rows i >= K
    see K <= j <= i (the decoder is always causal)."""
    ok = graph_adjacency(mask, n) if mask else torch.ones(n, n, dtype=torch.bool)
    lower = torch.ones(n, n, dtype=torch.bool).tril()
    if causal:
        ok = ok & lower
    if check_cross(cross, n):
        enc = torch.arange(n) < cross  # (N,)
        ok = ok & (enc[:, None] == enc[None, :]) & (enc[:, None] | lower)
    return ok


def cross_allowed(n: int, cross: int) -> torch.Tensor:
    """The cross-attention pattern ``(N, N)`` bool: decoder rows i >= K attend to every encoder token j < K."""
    enc = torch.arange(n) < check_cross(cross, n)
    return ~enc[:, None] & enc[None, :]


def spectral_gap(adjacency: torch.Tensor) -> float:
    """The smallest non-zero eigenvalue of I - D^-1 A for a symmetric adjacency A with self loops (D its row
    sums): the rate of the linearized consensus of masked attention near one cluster (BEYOND section 8); 0 for a
    disconnected graph. Raises ConfigError for a non-symmetric adjacency."""
    a = adjacency.to(torch.float64)
    if not torch.equal(a, a.T):
        raise ConfigError("adjacency", tuple(a.shape), "the spectral gap needs an undirected (symmetric) graph")
    r = a.sum(-1).rsqrt()
    eig = torch.linalg.eigvalsh(torch.eye(a.shape[0], dtype=a.dtype) - r[:, None] * a * r[None, :])  # ascending
    return float(eig[1]) if eig.shape[0] > 1 and float(eig[1]) > 1e-9 else 0.0


ARCHITECTURE_DEFAULTS: dict[str, object] = {k: FIELDS[k].default for k in ("alibi", "mask", "cross")}  # unset


def check_architecture(cfg) -> None:
    """Validate a config's ``alibi`` (a float >= 0, stored as float), ``mask`` (a graph on ``cfg.tokens``) and
    ``cross`` (encoder tokens in [0, N - 1]), and that the chosen attention reads each field that is set.
    Raises ConfigError naming the field."""
    from ..registry import ATTENTIONS

    object.__setattr__(cfg, "alibi", nonneg_float("alibi", cfg.alibi, "ALiBi slope"))
    if not isinstance(cfg.mask, str):
        raise ConfigError("mask", cfg.mask, f"must be a string: one of {list(GRAPHS)}")
    if cfg.mask:
        graph_adjacency(cfg.mask, cfg.tokens)
    object.__setattr__(cfg, "cross", check_cross(cfg.cross, cfg.tokens))
    for name, unset in ARCHITECTURE_DEFAULTS.items():
        if getattr(cfg, name) != unset and name not in ATTENTIONS[cfg.attention].reads:
            readers = [e.name for e in ATTENTIONS if name in e.reads]
            raise ConfigError(name, getattr(cfg, name), f"needs attention in {readers}")


class MaskedAttention:
    """Softmax attention Q^T K = beta I, V = s I restricted by ``allowed`` (a graph ``mask``, ``causal``,
    two species ``cross``), logits beta <x_i, x_j> + ``bias(n, x)`` (zero here; ALiBi in ``attention._alibi``).
    ``beta``, ``scale``: floats or ``(*batch,)`` tensors (a batched run). ``drift(x)`` ``(..., N, d)``; with
    ``cross`` the decoder rows add the cross-attention softmax over the encoder. Raises ConfigError for a bad
    beta, scale or mask (the mask when first applied to N tokens)."""

    def __init__(
        self,
        beta: float | torch.Tensor = 1.0,
        scale: float | torch.Tensor = 1.0,
        *,
        mask: str = "",
        causal: bool = False,
        cross: int = 0,
    ):
        per_run(lambda name, v: positive_float(name, v, "inverse temperature"), "beta", beta)
        per_run(finite_float, "attention_scale", scale)
        self.beta, self.scale, self.mask, self.causal, self.cross = beta, scale, mask, bool(causal), int(cross)
        self._patterns: dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor | None]] = {}

    @classmethod
    def from_config(cls, p) -> MaskedAttention:
        """The attention of a config (``registry.Params``): beta, attention_scale, mask, causal, cross."""
        return cls(p.beta, p.attention_scale, mask=p.mask, causal=p.causal, cross=p.cross)

    def bias(self, n: int, x: torch.Tensor) -> torch.Tensor | float:
        """The additive logit bias on allowed pairs, ``(..., N, N)`` or 0."""
        return 0.0

    def patterns(self, n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(self-attention, cross-attention or None) allowed pairs ``(N, N)`` bool, built once per N."""
        key = (n, str(device))
        if key not in self._patterns:
            own = allowed(n, causal=self.causal, mask=self.mask, cross=self.cross).to(device)
            other = cross_allowed(n, self.cross).to(device) if self.cross else None
            self._patterns[key] = (own, other)
        return self._patterns[key]

    def weights(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The attention matrices ``(..., N, N)``: self-attention, and cross-attention (rows of the decoder;
        encoder rows zero) or None."""
        n = x.shape[-2]
        own, other = self.patterns(n, x.device)
        logits = run_param(self.beta, x, 2) * (x @ x.transpose(-1, -2))  # (..., N, N)
        first = torch.softmax((logits + self.bias(n, x)).masked_fill(~own, -math.inf), dim=-1)
        if other is None:
            return first, None
        second = torch.softmax(logits.masked_fill(~other, -math.inf), dim=-1).nan_to_num(0.0)  # encoder rows: 0
        return first, second

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        """s sum_j A_ij x_j (+ the cross-attention term of decoder tokens). ``(..., N, d) -> (..., N, d)``."""
        first, second = self.weights(x)
        mixed = first if second is None else first + second  # (..., N, N)
        return (mixed @ x) * run_param(self.scale, x, 2)
