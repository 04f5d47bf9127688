"""The theory's own prediction at a real model's MLP inputs: the reference a verdict is held against (THEORY
section 2: the noise field ``G`` with ``E G(x) G(y)^T = kappa(<x, y>) I``; BEYOND section 1).

At the cosines ``c_ij`` of one sentence's MLP inputs, the theory's field has the token covariance
``K_ij = kappa(c_ij) / kappa(1)`` in each of the d coordinates, so its common share has expectation
``E rho = mean_ij kappa(c_ij) / kappa(1)`` (at least ``|mean_i y_i / |y_i||^2`` for the narrowest member). Instead
of that formula the reference *draws* the field (its Gaussian law: ``f = R z``, ``R R^T = K``, ``z`` an ``n x d``
standard normal; ``DRAWS`` draws; only ``f f^T = R (z z^T) R^T`` enters, drawn with a Wishart ``z z^T``) at the
real inputs and passes each draw through the same statistics as the real MLP output (``gram_statistics``): the
common share ``|mean_i f_i|^2 / mean_i |f_i|^2`` and the pair-cosine curve ``mean <f_i, f_j> / (|f_i| |f_j|)``
binned by ``c_ij`` (unlike ``C(c)`` it has no shared denominator that one massive token could set). Two members
of the kernel family are drawn: the fitted one (the rho = 1 fit of ``kernel.held_out``) and the narrowest (sW = 0
and the sU of ``SU_GRID`` that minimises the predicted mean of ``kappa(c)/kappa(1)`` over the block's pairs; no
member of the family predicts a lower share).

The bands: each of ``RESAMPLES`` replicates takes one draw at random and one resample of the sentences; the 95 %
band is the quantiles of the replicates' means (the field's randomness and the choice of sentences together).
The measured values get their usual bootstrap interval. Per block, ``kernel_verdict`` is ``inside`` when at least
``INSIDE`` of the populated bins (``MIN_PAIRS`` pairs or more) have the measured pair-cosine interval overlapping
the fitted member's band, ``outside`` when at most ``OUTSIDE`` do, ``partial`` otherwise; ``share_verdict`` is
``inside`` when the common share's interval overlaps the fitted member's band, ``below`` when it lies below even
the narrowest member's band, ``outside`` otherwise.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import torch

from ._kernel import BINS, SU_GRID, base_kernel
from ._stats import LEVEL, RESAMPLES, bootstrap, ratio_bootstrap

DRAWS = 20
TABLE = np.linspace(-1.0, 1.0, 401)  # kappa(c)/kappa(1) tabulated here, interpolated linearly between
MIN_PAIRS = 30
INSIDE, OUTSIDE = 0.9, 0.1
MEMBERS = ("fitted", "narrowest")


def table(d: int, su: float, sw: float, activation: str = "gelu") -> np.ndarray:
    """kappa(c)/kappa(1) of the member (sU, sW) at the cosines ``TABLE``."""
    k0, k1 = base_kernel(TABLE, d, su, activation)
    return (k0 + sw**2) / (k1 + sw**2)


def narrowest(mid: np.ndarray, count: np.ndarray, rows: Sequence[np.ndarray]) -> tuple[float, np.ndarray]:
    """(sU, its table) of the member with sW = 0 (``rows``: the tables of ``SU_GRID``) whose kappa(c)/kappa(1) has
    the least pair-weighted mean over a block's pairs (bin mean cosines ``mid``, pair counts ``count``)."""
    ok = np.isfinite(mid) & (count > 0)
    means = [float((np.interp(mid[ok], TABLE, r) * count[ok]).sum()) for r in rows]
    k = int(np.argmin(means))
    return float(SU_GRID[k]), rows[k]


def cosines(y: torch.Tensor, bins: int = BINS) -> tuple[torch.Tensor, torch.Tensor]:
    """(cosines ``(L, n, n)``, bin index ``(L, n * n)`` with the diagonal in the overflow bin ``bins``)."""
    x = y.double() / torch.linalg.vector_norm(y.double(), dim=-1, keepdim=True)
    cos = x @ x.transpose(-1, -2)
    index = ((cos + 1.0) * (bins / 2)).long().clamp(0, bins - 1)
    eye = torch.eye(cos.shape[-1], dtype=torch.bool).expand_as(cos)
    return cos, torch.where(eye, torch.full_like(index, bins), index).flatten(-2)


def gram_statistics(gram: torch.Tensor, index: torch.Tensor, bins: int = BINS) -> tuple[torch.Tensor, torch.Tensor]:
    """From Gram matrices ``(..., L, n, n)`` of MLP outputs: (common share ``(..., L)``, per-bin sums of the pair
    cosines ``(..., L, bins)``)."""
    diag = torch.diagonal(gram, dim1=-2, dim2=-1)  # (..., L, n)
    share = gram.sum((-1, -2)) / (diag.shape[-1] * diag.sum(-1))
    root = diag.clamp_min(1e-300).sqrt()
    pc = (gram / (root[..., :, None] * root[..., None, :])).flatten(-2)
    out = torch.zeros(*pc.shape[:-1], bins + 1, dtype=torch.float64)
    return share, out.scatter_add_(-1, index.expand_as(pc), pc)[..., :bins]


def roots(cos: torch.Tensor, tables: np.ndarray) -> torch.Tensor:
    """``R`` with ``R R^T = K``, ``K_ij = kappa_l(c_ij) / kappa_l(1)`` at the cosines ``cos`` ``(L, n, n)``, block l's
    kernel ``tables[l]``: ``(L, n, n)``."""
    c = cos.clamp(-1.0, 1.0).numpy()
    k = np.stack([np.interp(c[layer], TABLE, tables[layer]) for layer in range(c.shape[0])])  # (L, n, n)
    lam, vec = torch.linalg.eigh(torch.from_numpy((k + k.transpose(0, 2, 1)) / 2))
    return vec * lam.clamp_min(0.0).sqrt()[..., None, :]


def field(cos: torch.Tensor, tables: np.ndarray, d: int, draws: int, gen: torch.Generator) -> torch.Tensor:
    """``draws`` draws of the theory's field at tokens with cosines ``cos`` ``(L, n, n)``: ``(draws, L, n, d)``."""
    z = torch.randn(draws, *cos.shape[:-1], d, generator=gen, dtype=torch.float64)
    return roots(cos, tables) @ z


def wishart(n: int, d: int, shape: tuple[int, ...], rng: np.random.Generator) -> torch.Tensor:
    """``Z Z^T`` for ``Z`` an ``n x d`` standard normal matrix, ``shape + (n, n)``: by Bartlett's decomposition
    (``n (n + 1) / 2`` draws instead of ``n d``) when ``d >= n``, directly otherwise."""
    if d < n:
        z = torch.from_numpy(rng.standard_normal((*shape, n, d)))
        return z @ z.transpose(-1, -2)
    low = np.tril(rng.standard_normal((*shape, n, n)), -1)
    idx = np.arange(n)
    low[..., idx, idx] = np.sqrt(rng.chisquare(d - idx, size=(*shape, n)))
    t = torch.from_numpy(low)
    return t @ t.transpose(-1, -2)


def field_grams(cos: torch.Tensor, tables: np.ndarray, d: int, draws: int, rng: np.random.Generator) -> torch.Tensor:
    """The Gram matrices ``f f^T`` of ``draws`` draws of the theory's field (``field``), in law: ``R W R^T`` with
    ``W`` Wishart (``wishart``): ``(draws, L, n, n)``."""
    root = roots(cos, tables)
    return root @ wishart(cos.shape[-1], d, (draws, cos.shape[0]), rng) @ root.transpose(-1, -2)


def _band(values: np.ndarray, counts: np.ndarray | None, seed: int) -> np.ndarray:
    """The 95 % band ``(2, ...)`` of the mean over sentences of per-sentence, per-draw ``values`` ``(S, R, ...)``
    (a ratio of sums over sentences when ``counts`` ``(S, ...)`` are given): one random draw and one resample of
    sentences per replicate."""
    rng = np.random.default_rng(seed)
    s, r = values.shape[:2]
    reps = []
    for _ in range(RESAMPLES):
        idx, draw = rng.integers(0, s, s), int(rng.integers(0, r))
        picked = values[idx, draw]
        with np.errstate(invalid="ignore", divide="ignore"):
            reps.append(picked.mean(0) if counts is None else picked.sum(0) / counts[idx].sum(0))
    q = (1 - LEVEL) / 2
    with warnings.catch_warnings():  # a bin no pair visits is NaN in every replicate: its band is NaN too
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanquantile(np.stack(reps), [q, 1 - q], axis=0)


def _verdict(measured: np.ndarray, band: np.ndarray, populated: np.ndarray) -> tuple[str | None, float | None]:
    """(inside / partial / outside, fraction of populated bins whose intervals overlap) of one block."""
    ok = populated & np.all(np.isfinite(measured), 0) & np.all(np.isfinite(band), 0)
    if not ok.any():
        return None, None
    overlap = (measured[0][ok] <= band[1][ok]) & (measured[1][ok] >= band[0][ok])
    frac = float(overlap.mean())
    return ("inside" if frac >= INSIDE else "outside" if frac <= OUTSIDE else "partial"), frac


def reference(
    mlp_in: Sequence[torch.Tensor],
    mlp_out: Sequence[torch.Tensor],
    kern: dict,
    d: int,
    activation: str = "gelu",
    seed: int = 0,
    draws: int = DRAWS,
) -> dict:
    """The theory's common share and pair-cosine curve at the real inputs (module docstring) beside the measured
    ones, with bands and the per-block verdicts; ``kern`` is ``kernel.held_out``'s result."""
    layers = len(kern["layers"])
    mid, count = np.asarray(kern["cosine"], dtype=float), np.asarray(kern["count"], dtype=float)
    fits = [row["fit_theory"] for row in kern["layers"]]
    rows = [table(d, float(su), 0.0, activation) for su in SU_GRID]
    lows = [narrowest(mid[layer], count[layer], rows) for layer in range(layers)]
    tables = {
        "fitted": np.stack([table(d, f["su"], f["sw"], activation) for f in fits]),
        "narrowest": np.stack([t for _, t in lows]),
    }
    rng = np.random.default_rng(seed)
    shares, pcs, counts = {m: [] for m in ("real", *MEMBERS)}, {m: [] for m in ("real", *MEMBERS)}, []
    for y, f in zip(mlp_in, mlp_out, strict=True):
        cos, index = cosines(y)
        grams = {"real": f.double() @ f.double().transpose(-1, -2)}
        for member in MEMBERS:
            grams[member] = field_grams(cos, tables[member], d, draws, rng)  # (R, L, n, n)
        for member, gram in grams.items():
            share, pc = gram_statistics(gram, index)
            shares[member].append(share.numpy())
            pcs[member].append(pc.numpy())
        ones = torch.ones(index.shape, dtype=torch.float64)
        counts.append(torch.zeros(layers, BINS + 1, dtype=torch.float64).scatter_add_(-1, index, ones)[:, :BINS])
    pair_count = np.stack([c.numpy() for c in counts])  # (S, L, B)
    real_pc, total = np.stack(pcs["real"]), pair_count.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        curve = real_pc.sum(0) / total
    curve_band = ratio_bootstrap(real_pc, pair_count, seed=seed)
    share_real = bootstrap(np.stack(shares["real"]), seed=seed)  # (2, L)
    out: dict = {"draws": draws, "narrowest_su": [su for su, _ in lows], "pair_cosine": {}}
    for member in MEMBERS:
        values = np.stack(shares[member])  # (S, R, L)
        band = _band(values, None, seed)
        name = "common_share_theory" if member == "fitted" else "common_share_narrowest"
        out[name], out[f"{name}_lo"], out[f"{name}_hi"] = values.mean((0, 1)).tolist(), *band.tolist()
        with np.errstate(invalid="ignore", divide="ignore"):
            null = np.stack(pcs[member]).sum((0, 1)) / total / values.shape[1]
        out["pair_cosine"][member] = {"curve": null.tolist(), "band": _band(np.stack(pcs[member]), pair_count, seed)}
    out["pair_cosine"]["real"] = {"curve": curve.tolist(), "band": curve_band.tolist()}
    out["pair_cosine"]["count"] = total.astype(int).tolist()
    band_fit = out["pair_cosine"]["fitted"]["band"]
    verdicts = [_verdict(curve_band[:, k], band_fit[:, k], total[k] >= MIN_PAIRS) for k in range(layers)]
    out["kernel_verdict"] = [v for v, _ in verdicts]
    out["kernel_inside_fraction"] = [frac for _, frac in verdicts]
    out["share_verdict"] = [_share_verdict(share_real[:, layer], out, layer) for layer in range(layers)]
    for member in MEMBERS:
        out["pair_cosine"][member]["band"] = out["pair_cosine"][member]["band"].tolist()
    return out


def _share_verdict(measured: np.ndarray, ref: dict, layer: int) -> str:
    """inside (overlaps the fitted member's band), below (below the narrowest member's band) or outside."""
    lo, hi = ref["common_share_theory_lo"][layer], ref["common_share_theory_hi"][layer]
    if measured[0] <= hi and measured[1] >= lo:
        return "inside"
    return "below" if measured[1] < ref["common_share_narrowest_lo"][layer] else "outside"
