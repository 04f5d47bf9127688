"""The empirical kernel of a model's MLP outputs against the theory's kappa (THEORY section 2, BEYOND section 1).

For the tokens of one sentence, with ``c_ij = <y_i, y_j> / (|y_i| |y_j|)`` the cosine of the MLP's inputs and
``f_i`` its outputs, the normalised cross-covariance binned by cosine (``BINS`` equal bins of [-1, 1], pairs
i != j of all sentences pooled):

    C(c) = E[<f_i, f_j> | c_ij in bin] / E[|f|^2]

The theory's common noise has ``C(c) = kappa(c) / kappa(1)`` (the MLP field, ``E G(x) G(y)^T = kappa I``); partial
noise with share rho has ``rho kappa(c) / kappa(1)``; independent noise has ``C = 0``. ``fit_theory`` fits sU, sW
(and rho) by least squares for the model's activation at its width d; ``held_out`` scores each model's R^2 on
sentences not used in the fit.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..core._activations import get_activation
from ..core._kernel import KernelTheory, kernel_theory
from ._stats import LEVEL, RESAMPLES

BINS = 20
FIT_NODES = 40  # Gauss-Hermite nodes per axis of kappa in the fit (GELU: relative error < 1e-12 at sU <= 1, 5e-4 at 3)


@dataclass
class KernelSums:
    """Per sentence and block: ``pair`` sum of <f_i, f_j>, ``cos`` sum of c_ij and ``count`` over pairs i != j
    per bin ``(S, L, BINS)``; ``square`` sum of |f_i|^2 and ``tokens`` ``(S, L)``."""

    pair: np.ndarray
    cos: np.ndarray
    count: np.ndarray
    square: np.ndarray
    tokens: np.ndarray

    def curve(self, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(C ``(L, BINS)``, bin mean cosine ``(L, BINS)``, pair count ``(L, BINS)``) pooled over ``rows``."""
        count = self.count[rows].sum(0)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = self.square[rows].sum(0) / self.tokens[rows].sum(0)  # (L,)
            c = self.pair[rows].sum(0) / count / scale[:, None]
            mid = self.cos[rows].sum(0) / count
        return c, mid, count


def kernel_sums(mlp_in: Sequence[torch.Tensor], mlp_out: Sequence[torch.Tensor], bins: int = BINS) -> KernelSums:
    """The per-sentence sums of ``KernelSums`` from ``(L, n, d)`` MLP inputs and outputs per sentence."""
    rows = []
    for y, f in zip(mlp_in, mlp_out, strict=True):
        x = y.double() / torch.linalg.vector_norm(y.double(), dim=-1, keepdim=True)
        cos = x @ x.transpose(-1, -2)  # (L, n, n)
        pair = f.double() @ f.double().transpose(-1, -2)  # (L, n, n)
        n = cos.shape[-1]
        off = ~torch.eye(n, dtype=torch.bool).expand_as(cos)
        index = ((cos + 1.0) * (bins / 2)).long().clamp(0, bins - 1)
        index = torch.where(off, index, torch.full_like(index, bins))  # the diagonal to an overflow bin
        sums = []
        for values in (pair, cos, torch.ones_like(cos)):
            out = torch.zeros(cos.shape[0], bins + 1, dtype=torch.float64)
            sums.append(out.scatter_add_(1, index.flatten(1), values.flatten(1))[:, :bins].numpy())
        square = torch.diagonal(pair, dim1=-2, dim2=-1).sum(-1).numpy()  # (L,)
        rows.append((*sums, square, np.full(cos.shape[0], float(n))))
    return KernelSums(*(np.stack(col) for col in zip(*rows, strict=True)))


def base_kernel(c: np.ndarray, d: int, su: float, activation: str = "gelu") -> tuple[np.ndarray, float]:
    """(kappa(c) at sW = 0 for the cosines ``c`` (any shape), kappa(1) at sW = 0): sW^2 adds to both."""
    th = KernelTheory(get_activation(activation), d, su, 0.0, nodes=FIT_NODES)
    t = torch.as_tensor(np.nan_to_num(c), dtype=torch.float64)
    return th.kappa(t).numpy(), float(th.kappa1)


def theory_curve(c: np.ndarray, d: int, su: float, sw: float, activation: str = "gelu") -> np.ndarray:
    """kappa(c) / kappa(1) of the MLP field (THEORY section 2) at the cosines ``c`` (any shape)."""
    k0, k1 = base_kernel(c, d, su, activation)
    return (k0 + sw**2) / (k1 + sw**2)


def _r2(target: np.ndarray, pred: np.ndarray, weight: np.ndarray) -> float:
    ok = np.isfinite(target) & (weight > 0)
    w, y, p = weight[ok], target[ok], pred[ok]
    mean = (w * y).sum() / w.sum()
    return float(1.0 - (w * (y - p) ** 2).sum() / (w * (y - mean) ** 2).sum())


def _given_su(y: np.ndarray, w: np.ndarray, k0: np.ndarray, k1: float, free_share: bool, kappa1: float | None):
    """The least-squares (share, sW^2, loss) of ``share (k0 + sW^2) / (k1 + sW^2)`` for one sU (closed form:
    the model is ``A k0 + B`` with ``A = share / (k1 + sW^2)``, ``B = A sW^2``)."""

    def solve(cols: list[np.ndarray], target: np.ndarray) -> np.ndarray:
        m = np.stack(cols, 1) * np.sqrt(w)[:, None]
        return np.linalg.lstsq(m, target * np.sqrt(w), rcond=None)[0]

    if kappa1 is not None:  # kappa(1) known: sW^2 = kappa1 - k1, only the share is free
        sw2 = max(kappa1 - k1, 0.0)
        shape = (k0 + sw2) / (k1 + sw2)
        share = float(np.clip((w * y * shape).sum() / (w * shape * shape).sum(), 0, 1)) if free_share else 1.0
    elif free_share:
        a, b = solve([k0, np.ones_like(k0)], y)
        if a <= 0 or b < 0:
            a, b = max(float(solve([k0], y)[0]), 0.0), 0.0
        sw2 = b / a if a > 0 else 0.0
        share = float(np.clip(a * k1 + b, 0, 1))
    else:  # share 1: y - 1 = A (k0 - k1)
        a = float(np.clip(solve([k0 - k1], y - 1.0)[0], 1e-300, 1.0 / k1))
        sw2, share = (1.0 - a * k1) / a, 1.0
    pred = share * (k0 + sw2) / (k1 + sw2)
    return share, sw2, float((w * (y - pred) ** 2).sum())


def share_at_one(c: np.ndarray, mid: np.ndarray, count: np.ndarray, degree: int = 2) -> float:
    """rho = C(1-): the curve extrapolated to c = 1 by a count-weighted polynomial (kappa(c) / kappa(1) -> 1 for
    any kernel, so this reads the share without fitting one; BEYOND section 1)."""
    ok = np.isfinite(c) & (count > 0)
    return float(np.polyval(np.polyfit(mid[ok], c[ok], degree, w=np.sqrt(count[ok])), 1.0))


SU_GRID = np.concatenate([[0.0], np.geomspace(1e-3, 10.0, 25)])


def fit_theory(
    c: np.ndarray,
    mid: np.ndarray,
    count: np.ndarray,
    d: int,
    *,
    free_share: bool = False,
    activation: str = "gelu",
    kappa1: float | None = None,
) -> dict:
    """Least squares of ``rho kappa(c) / kappa(1)`` to one block's curve (``BINS`` values, weighted by counts)
    over sU, sW >= 0 (and rho in [0, 1] when ``free_share``, else rho = 1; with ``kappa1`` given, sW^2 =
    kappa1 - kappa(1; sW = 0)): sW^2 and rho in closed form for each sU of a grid, sU refined by a bounded search.
    Returns ``{"su", "sw", "share", "loss"}``."""
    from scipy.optimize import minimize_scalar

    ok = np.isfinite(c) & (count > 0)
    w, y, t = count[ok] / count[ok].sum(), c[ok], mid[ok]

    def at(su: float):
        k0, k1 = base_kernel(t, d, su, activation)
        return _given_su(y, w, k0, k1, free_share, kappa1)

    losses = [at(su)[2] for su in SU_GRID]
    k = int(np.argmin(losses))
    lo, hi = SU_GRID[max(k - 1, 0)], SU_GRID[min(k + 1, len(SU_GRID) - 1)]
    res: Any = minimize_scalar(lambda s: at(s)[2], bounds=(lo, hi), method="bounded", options={"xatol": 1e-5})
    su = float(res.x) if res.fun <= losses[k] else float(SU_GRID[k])
    share, sw2, loss = at(su)
    return {"su": su, "sw": math.sqrt(sw2), "share": share, "loss": loss}


def held_out(sums: KernelSums, d: int, activation: str = "gelu", seed: int = 0) -> dict:
    """Per block: the curve of all sentences with its 95 % interval, ``C(1-)`` (``share_at_one``) with its
    interval, the fits on even sentences and the R^2 on odd ones of the theory (rho = 1), partial noise (rho free)
    and independent noise (C = 0); lambda_bar of the theory's fitted kernel, and lambda_bar / kappa(1) of both fits
    (scale-free: the normalised curve fixes kappa's shape, not its size; same sign as lambda_bar)."""
    s = sums.count.shape[0]
    c, mid, count = sums.curve()
    rng = np.random.default_rng(seed)
    curves = [sums.curve(rng.integers(0, s, s)) for _ in range(RESAMPLES // 5)]
    draws = np.stack([cur[0] for cur in curves])  # (R, L, B)
    shares = np.array([[share_at_one(*(a[k] for a in cur)) for k in range(c.shape[0])] for cur in curves])  # (R, L)
    q = (1 - LEVEL) / 2
    with warnings.catch_warnings():  # a bin no pair visits is NaN in every draw: its interval is NaN too
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanquantile(draws, [q, 1 - q], axis=0)
    train, test = sums.curve(np.arange(0, s, 2)), sums.curve(np.arange(1, s, 2))
    layers = []
    for layer in range(c.shape[0]):
        fits = {
            kind: fit_theory(
                train[0][layer], train[1][layer], train[2][layer], d, free_share=free, activation=activation
            )
            for kind, free in (("theory", False), ("partial", True))
        }
        y, t, w = test[0][layer], test[1][layer], test[2][layer]
        r2 = {
            kind: _r2(y, fit["share"] * theory_curve(t, d, fit["su"], fit["sw"], activation), w)
            for kind, fit in fits.items()
        }
        th = {kind: kernel_theory(activation, d, su=f["su"], sw=f["sw"]) for kind, f in fits.items()}
        layers.append(
            {
                "r2_theory": r2["theory"],
                "r2_partial": r2["partial"],
                "r2_independent": _r2(y, np.zeros_like(y), w),
                "fit_theory": fits["theory"],
                "fit_partial": fits["partial"],
                "lambda_bar": float(th["theory"].lambda_bar),
                **{f"lambda_bar_scaled_{k}": float(t.lambda_bar / t.kappa1) for k, t in th.items()},
                "amplitude": float(sums.square[:, layer].sum() / sums.tokens[:, layer].sum() / d),
            }
        )
    return {
        "bins": BINS,
        "curve": c.tolist(),
        "low": lo.tolist(),
        "high": hi.tolist(),
        "cosine": mid.tolist(),
        "count": count.astype(int).tolist(),
        "share": [share_at_one(c[k], mid[k], count[k]) for k in range(c.shape[0])],
        "share_interval": np.quantile(shares, [q, 1 - q], axis=0).tolist(),
        "layers": layers,
    }


def nan_to_none(rows):
    """Nested lists with NaN replaced by None (JSON)."""
    if isinstance(rows, list):
        return [nan_to_none(r) for r in rows]
    return None if isinstance(rows, float) and not math.isfinite(rows) else rows
