"""simuformer (arXiv 2510.22026; nikitus20/simuformer, 1959a8a): the fraction of token pairs with cosine above
0.999 over (beta, t) for four normalization schemes (BEYOND section 6), ``runner.py``'s experiment.

The peer's conventions, built in here:
- its draws, in its order, from torch's default generator in a fresh process (seed ``TORCH_SEED``), float32: per
  beta the tokens ``randn(batch, N, d)`` normalized, then per head its Q^T K (``random_kq`` 0 identity, 1
  A B / sqrt d, 2 and 3 (G + G^T) / sqrt 2, 4 and 5 0.02 G) and V (``random_v`` 0 identity, 1 G / sqrt d, 2 and
  3 +-Q^T K / (sqrt d, sqrt(d + 1) for kq 3, 1 for kq >= 4), 4 and 5 0.02 G); ``noanneal`` 0: one matrix per
  batch element (per-run ``(B, d, d)`` matrices), 1: one per beta, 2: one for the whole sweep, drawn before it;
  mode 5 redraws the matrices whenever the time crosses an integer (first after step 1);
- beta folded into the query: score beta x_i^T BF x_j, so Q = (beta BF)^T, K = I (``SoftmaxAttention``); the row
  convention ``x @ V`` (``value_convention="xV"``); heads averaged (``MultiHeadAttention(combine="mean")``);
  ``sequential``: the causal mask (``SoftmaxAttention(causal=True)``); all in ``peers._phase``;
- its schemes: ``postln`` = ``PostLN``, ``ngpt`` = ``NGPT(0.2)`` (its fixed rate 0.2, an additive update),
  ``preln`` / ``periln`` = ``PreLN`` / ``PeriLN`` (``as_published``: its radius line, ``published_radius``);
- its clock: t += step per step in Python floats, checkpoint c recorded after the first step whose time reaches
  times[c] (compared in float32; the t = 0 cell is after the first step), the rest filled with the last state;
- its statistic: off-diagonal pairs of all batch elements with float32 cosine > 0.999, pooled, per cell
  ``density[beta, checkpoint]``; written as the peer's pickle (``betas_list``, ``times_list``,
  ``density_tensor``, ``cluster_tensor``, ``args``).
"""

from __future__ import annotations

import math
import pickle
import re
from pathlib import Path

import numpy as np
import torch

from ..core._errors import ConfigError
from ..core._validate import positive_float, positive_int
from ..dynamics._norms.schemes import NGPT, PeriLN, PostLN, PreLN
from ..io._atomic import atomic_write_bytes, atomic_write_text
from . import cells
from ._files import check_shape, load_pickle
from ._phase import heads, median_clusters, pair_fraction, run_segments, span_dimension
from ._published_radius import PublishedRadius

TORCH_SEED = 67280421310721  # torch.initial_seed() of a fresh process: the peer never seeds
NORMS = ("postln", "preln", "periln", "ngpt")
NGPT_RATE = 0.2
DEFAULTS = {  # runner.py's defaults
    "norm": "preln",
    "heads": 8,
    "batch": 512,
    "tokens": 64,
    "dim": 16,
    "betamin": 0.1,
    "betamax": 15.0,
    "betas": 20,
    "maxtime": 50.0,
    "step": 0.1,
    "checkpoints": 200,
    "random_kq": 1,
    "random_v": 0,
    "noanneal": 0,
    "sequential": False,
    "no_softmax": False,  # weights exp(beta x_i^T BF x_j), no normalization (not even 1 / N)
    "rawstep": False,  # no_softmax: keep the step (else divided by max(sqrt(beta) e^{beta - 1/2}, 1))
    "adjacent": False,  # the pair fraction over the pairs (i, i + 1) only
    "plotdim": False,  # the statistic: the mean dimension of the tokens' span (``_phase.span_dimension``)
    "cluster_sizes": False,  # its cluster_tensor: the median cluster count (``_phase.median_clusters``)
    "analyze_evecs": False,  # it prints, per beta, the cosines of its V matrices' main eigenvectors
}
FLAGS = ("sequential", "no_softmax", "rawstep", "adjacent", "plotdim", "cluster_sizes", "analyze_evecs")
EVECS = "--- Eigenvector Cosine Similarity"  # the header of each matrix it prints


def draw_matrices(g: torch.Generator, s: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """One head's (BF, V), each ``(pp, d, d)`` float32 (pp = batch, or 1 with ``noanneal``), in the peer's order."""
    pp, d, kq, v = (1 if s["noanneal"] else s["batch"]), s["dim"], s["random_kq"], s["random_v"]
    shape = (pp, d, d)
    eye = torch.eye(d).expand(shape)
    if kq == 1:
        bf, norm_v = torch.randn(shape, generator=g) @ torch.randn(shape, generator=g) / math.sqrt(d), math.sqrt(d)
    elif kq in (2, 3):
        b = torch.randn(shape, generator=g)
        bf, norm_v = (b + b.transpose(1, 2)) / math.sqrt(2), math.sqrt(d + (kq == 3))
    elif kq in (4, 5):
        bf, norm_v = torch.randn(shape, generator=g) * 0.02, 1.0
    else:
        bf, norm_v = eye, 1.0
    if v == 1:
        value = torch.randn(shape, generator=g) / math.sqrt(d)
    elif v in (2, 3):
        value = (bf if v == 2 else -bf) / norm_v
    elif v in (4, 5):
        value = torch.randn(shape, generator=g) * 0.02
    else:
        value = eye
    return bf, value


def scheme(norm: str, as_published: bool):
    """The sdeformer scheme of the peer's ``--norm`` (its published radius line with ``as_published``)."""
    if norm == "postln":
        return PostLN()
    if norm == "ngpt":
        return NGPT(NGPT_RATE)
    if as_published:
        return PublishedRadius("pre" if norm == "preln" else "peri")
    return PreLN() if norm == "preln" else PeriLN()


def eta(beta: torch.Tensor, s: dict):
    """The peer's step: ``step``, divided by max(sqrt(beta) e^{beta - 1/2}, 1) with ``no_softmax`` unless
    ``rawstep`` (in its numpy float64 arithmetic on the float32 beta)."""
    if not s["no_softmax"] or s["rawstep"]:
        return s["step"]
    b = beta.item()
    return s["step"] / max((np.sqrt(b) * np.exp(b - 0.5), 1))


def clock(s: dict, h=None) -> tuple[list[int], list[int]]:
    """The peer's loop at step ``h`` (default ``step``): the step after which each checkpoint is recorded, and
    the steps after which the matrices are redrawn (mode 5)."""
    times = torch.linspace(0, s["maxtime"], s["checkpoints"])  # float32, as the peer's
    redraw = s["random_kq"] == 5 or s["random_v"] == 5
    t, k, last, record, redraws = 0.0, 0, -1, [], []
    while True:
        t, k = t + (s["step"] if h is None else h), k + 1
        while len(record) < len(times) and bool(t >= times[len(record)]):
            record.append(k)
        if redraw and math.floor(t) > last:
            redraws.append(k)
            last = math.floor(t)
        if len(record) >= len(times) or t >= s["maxtime"]:
            return record + [k] * (len(times) - len(record)), redraws  # a redraw at the last step draws too


def settings(**options) -> dict:
    """runner.py's defaults overridden by ``options``; ConfigError naming a bad one."""
    unknown = set(options) - set(DEFAULTS) - {"beta"}
    if unknown:
        raise ConfigError(sorted(unknown)[0], options[sorted(unknown)[0]], f"one of {sorted(DEFAULTS)}")
    s = {**DEFAULTS, **options}
    if s["norm"] not in NORMS:
        raise ConfigError("norm", s["norm"], f"one of {list(NORMS)}")
    for name in ("heads", "batch", "tokens", "dim", "betas", "checkpoints"):
        s[name] = positive_int(name, s[name])
    for name in ("step", "maxtime"):
        s[name] = positive_float(name, s[name])
    for name in FLAGS:
        if not isinstance(s[name], bool):
            raise ConfigError(name, s[name], "true or false")
    for name, top in (("random_kq", 5), ("random_v", 5), ("noanneal", 2)):
        if s[name] not in range(top + 1):
            raise ConfigError(name, s[name], f"an integer 0..{top}")
    return s


def eigenvector_cosines(mats) -> list[list[float]]:
    """``--analyze_evecs``: per head the eigenvector of the largest eigenvalue of its (first run's) V by the
    symmetric solver, which reads V's lower triangle (the peer's ``eigh``, V symmetric or not), and the cosines
    between the heads' vectors, ``(H, H)`` float32."""
    vectors = torch.stack([torch.linalg.eigh(v[0])[1][:, -1] for _, v in mats])
    unit = torch.nn.functional.normalize(vectors.float(), dim=1)
    return (unit @ unit.T).tolist()


def run_beta(beta: torch.Tensor, g: torch.Generator, shared, s: dict, as_published: bool):
    """One beta of the sweep: the peer's draws, then the run in segments between redraws; per cell its density
    and its cluster statistic (0 without ``cluster_sizes``), and the eigenvector cosines of its first matrices
    (``analyze_evecs``, else None)."""
    x = torch.nn.functional.normalize(torch.randn(s["batch"], s["tokens"], s["dim"], generator=g), dim=2)
    mats = shared or [draw_matrices(g, s) for _ in range(s["heads"])]
    evecs = eigenvector_cosines(mats) if s["analyze_evecs"] else None
    identity_v = s["random_v"] == 0
    softmax, n = not s["no_softmax"], s["tokens"]

    def attention():
        chosen = [(bf, None if identity_v else v) for bf, v in mats]
        return heads(beta, chosen, softmax=softmax, causal=s["sequential"], values=1.0 if softmax else n)

    def redraw():
        if not shared:  # noanneal 2 keeps its one draw
            mats[:] = [draw_matrices(g, s) for _ in range(s["heads"])]

    h = eta(beta, s)
    record, redraws = clock(s, h)
    norm = scheme(s["norm"], as_published)
    sphere = norm.on_sphere  # its statistic reads M M^T of its unit tokens as they are

    def statistics(y: torch.Tensor) -> tuple[float, float]:
        f32 = torch.float32
        density = span_dimension(y, f32, sphere) if s["plotdim"] else pair_fraction(y, f32, s["adjacent"], sphere)
        return density, median_clusters(y, f32, sphere) if s["cluster_sizes"] else 0.0

    return run_segments(x, norm, h, record, redraws, attention, redraw, statistics), evecs


def run(as_published: bool = False, seed: int = TORCH_SEED, beta=None, **options) -> dict:
    """runner.py's sweep at its defaults (``options``: the keys of ``DEFAULTS``; ``beta``: these betas instead of
    its grid): per cell (beta, checkpoint) the pooled fraction of pairs above 0.999."""
    s = settings(**options)
    g = torch.Generator().manual_seed(int(seed))
    betas = torch.linspace(s["betamin"], s["betamax"], s["betas"]) if beta is None else torch.tensor(beta).float()
    shared, evecs = None, []
    if s["noanneal"] == 2:  # one draw for the sweep, after the tokens of a throwaway instance (which prints too)
        torch.randn(s["batch"], s["tokens"], s["dim"], generator=g)
        shared = [draw_matrices(g, s) for _ in range(s["heads"])]
        evecs += [eigenvector_cosines(shared)] if s["analyze_evecs"] else []
    with torch.no_grad():
        runs = [run_beta(b, g, shared, s, as_published) for b in betas]
    cells, evecs = [r[0] for r in runs], evecs + [r[1] for r in runs if r[1] is not None]
    return {
        "peer": "simuformer",
        "settings": s,
        "as_published": as_published,
        "betas": betas.tolist(),
        "times": torch.linspace(0, s["maxtime"], s["checkpoints"]).tolist(),
        "density": [[c[0] for c in row] for row in cells],
        "cluster": [[c[1] for c in row] for row in cells],
        **({"evecs": evecs} if s["analyze_evecs"] else {}),
    }


def file_name(s: dict) -> str:
    """The peer's result name, without its time stamp."""
    return (
        f"d{s['dim']}_n{s['tokens']}_nh{s['heads']}_norm{s['norm']}_V{s['random_v']}_KQ{s['random_kq']}_"
        f"seq{bool(s['sequential'])}_"
        f"beta{s['betas']}x{s['betamin']:.1f}-{s['betamax']:.1f}_T{s['maxtime']:.1f}.pkl"
    )


def evecs_text(result: dict) -> str:
    """The eigenvector cosines as the peer prints them (its header, numpy's array_str at 3 decimals, a rule)."""
    s, blocks = result["settings"], []
    for m in result["evecs"]:
        text = np.array_str(np.array(m, dtype=np.float32), precision=3, suppress_small=True)
        blocks.append(f"{EVECS} (V:{s['random_v']}, KQ:{s['random_kq']}) ---\n{text}\n{'-' * 58}\n")
    return "".join(blocks)


def read_evecs(text: str) -> list[float]:
    """The numbers of every eigenvector-cosine matrix in the peer's printed output, in order."""
    blocks = re.findall(re.escape(EVECS) + r"[^\n]*\n(.*?)\n-{10,}", text, re.S)
    return [float(v) for block in blocks for v in re.findall(r"-?\d+\.?\d*(?:e[-+]?\d+)?", block)]


def write(result: dict, folder: Path) -> list[Path]:
    """The peer's pickle: betas_list, times_list, density_tensor, cluster_tensor (zeros without cluster_sizes),
    args; with ``analyze_evecs`` also ``evecs.txt``, the matrices as it prints them."""
    table = {
        "betas_list": torch.tensor(result["betas"]),
        "times_list": torch.tensor(result["times"]),
        "density_tensor": torch.tensor(result["density"]),
        "cluster_tensor": torch.tensor(result["cluster"]),
        "args": dict(result["settings"]),
    }
    evecs = [atomic_write_text(folder / "evecs.txt", evecs_text(result))] if "evecs" in result else []
    return [atomic_write_bytes(folder / file_name(result["settings"]), pickle.dumps(table)), *evecs]


def compare(result: dict, path: Path) -> dict:
    """Cells of the peer's ``density_tensor`` (its pickle; with ``cluster_sizes`` its ``cluster_tensor`` too) equal
    to ours: the same count (the fractions are counts over the pairs, so equal means exactly equal). With
    ``analyze_evecs``, a text file is the peer's printed output (``runner.py ... --analyze_evecs > FILE``): the
    cells of its eigenvector-cosine matrices, equal within its 3 printed decimals."""
    data = Path(path).read_bytes()
    if not data.startswith(b"\x80"):  # not a pickle: its printed output
        if "evecs" not in result:
            raise ConfigError("compare", str(path), "the peer's result pickle (its printed output: --analyze-evecs)")
        return cells(np.ravel(result["evecs"]), read_evecs(data.decode(errors="replace")), 5e-4 + 1e-6)
    table = load_pickle(path, "the peer's result pickle")  # arrays and plain containers only
    if not isinstance(table, dict) or "density_tensor" not in table:
        raise ConfigError("compare", str(path), "the peer's result pickle (with density_tensor)")
    keys = ("density", "cluster") if result["settings"]["cluster_sizes"] else ("density",)
    check_shape(path, table["density_tensor"], result["density"])
    ours = np.concatenate([np.ravel(result[k]) for k in keys])
    theirs = np.concatenate([torch.as_tensor(table[f"{k}_tensor"]).double().numpy().ravel() for k in keys])
    return cells(ours, theirs, 1e-12)
