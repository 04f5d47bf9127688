"""Bootstrap intervals of the kernel fits' held-out R^2, fitted parameters and lambda_bar (THEORY section 2;
docs/real.md).

``kernel.held_out`` fits the theory (``kappa(c) / kappa(1)``), partial noise (``rho kappa(c) / kappa(1)``) on the
even sentences and scores them, and independent noise (``C = 0``), on the odd ones. Here both halves are
resampled with replacement (separately), each model refitted on the resampled even half and scored on the
resampled odd half; the 95 % percentile intervals over ``DRAWS`` resamples of the R^2 and of the refits' sU, sW,
rho, lambda_bar and lambda_bar / kappa(1) are returned. To keep the refits cheap, kappa at ``sW = 0`` is tabulated
once on ``SU_TABLE`` x ``T_TABLE`` and interpolated in the cosine; ``sW^2`` and ``rho`` stay closed form for each
tabulated ``sU`` (as in ``kernel._given_su``), and the best ``sU`` of the table is taken (no refinement between
its points).
"""

from __future__ import annotations

import numpy as np

from ..core._kernel import kernel_theory
from ._kernel import KernelSums, _r2, base_kernel
from ._stats import LEVEL

DRAWS = 200
FIT_KEYS = ("su", "sw", "share", "lambda_bar", "lambda_bar_scaled")
SU_TABLE = np.concatenate([[0.0], np.geomspace(1e-3, 10.0, 40)])
T_TABLE = np.linspace(-1.0, 1.0, 201)


def _table(d: int, activation: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kappa at sW = 0 on ``T_TABLE`` per ``SU_TABLE`` row ``(K, T)``, kappa(1) and lambda_bar at sW = 0
    ``(K,)``); sW^2 lowers lambda_bar = (d - 1) kappa'(1) - (d - 3) kappa(1) by (d - 3) sW^2."""
    rows = [base_kernel(T_TABLE, d, float(su), activation) for su in SU_TABLE]
    lam = [kernel_theory(activation, d, su=float(su), sw=0.0).lambda_bar for su in SU_TABLE]
    return np.stack([r[0] for r in rows]), np.array([r[1] for r in rows]), np.array(lam)


def _fits(y: np.ndarray, w: np.ndarray, k0: np.ndarray, k1: np.ndarray, free_share: bool):
    """``kernel._given_su`` for every tabulated sU at once (``k0`` ``(K, B)``, ``k1`` ``(K,)``): (share, sW^2,
    loss) ``(K,)`` each."""
    if free_share:  # y = a k0 + b, weighted least squares (2 x 2 normal equations), else b = 0 and a >= 0
        s00, s01, s11 = (w * k0 * k0).sum(-1), (w * k0).sum(-1), w.sum()
        r0, r1 = (w * k0 * y).sum(-1), (w * y).sum()
        det = s00 * s11 - s01 * s01
        with np.errstate(invalid="ignore", divide="ignore"):
            a, b = (r0 * s11 - s01 * r1) / det, (s00 * r1 - s01 * r0) / det
            bad = ~((a > 0) & (b >= 0))
            a = np.where(bad, np.maximum(r0 / s00, 0.0), a)
            b = np.where(bad, 0.0, b)
            sw2 = np.where(a > 0, b / np.where(a > 0, a, 1.0), 0.0)
        share = np.clip(a * k1 + b, 0.0, 1.0)
    else:  # share 1: y - 1 = a (k0 - k1)
        g = k0 - k1[:, None]
        a = np.clip((w * g * (y - 1.0)).sum(-1) / (w * g * g).sum(-1), 1e-300, 1.0 / k1)
        sw2, share = (1.0 - a * k1) / a, np.ones_like(k1)
    pred = share[:, None] * (k0 + sw2[:, None]) / (k1 + sw2)[:, None]
    return share, sw2, (w * (y - pred) ** 2).sum(-1)


def _fit_and_score(train, test, table, free_share: bool, d: int) -> list[float]:
    """[held-out R^2, sU, sW, rho, lambda_bar, lambda_bar / kappa(1)] of the best tabulated fit of one block
    (``train``, ``test``: (C, cosine, count))."""
    k0s, k1s, lam = table
    c, mid, count = train
    ok = np.isfinite(c) & (count > 0)
    y, t, w = c[ok], mid[ok], count[ok] / count[ok].sum()
    k0 = np.stack([np.interp(t, T_TABLE, row) for row in k0s])  # (K, B)
    share, sw2, loss = _fits(y, w, k0, k1s, free_share)
    k = int(np.nanargmin(loss))
    y2, t2, w2 = test
    pred = share[k] * (np.interp(np.nan_to_num(t2), T_TABLE, k0s[k]) + sw2[k]) / (k1s[k] + sw2[k])
    lam_k = lam[k] - (d - 3) * sw2[k]
    return [_r2(y2, pred, w2), SU_TABLE[k], np.sqrt(sw2[k]), share[k], lam_k, lam_k / (k1s[k] + sw2[k])]


def r2_intervals(sums: KernelSums, d: int, activation: str = "gelu", seed: int = 0, draws: int = DRAWS) -> dict:
    """``{"theory", "partial", "independent"}``: the held-out R^2's ``[low, high]`` (L values each, 95 %); and
    ``"theory_fit"``, ``"partial_fit"``: ``FIT_KEYS`` of the refits, each ``[low,
    high]``."""
    table = _table(d, activation)
    s = sums.count.shape[0]
    even, odd = np.arange(0, s, 2), np.arange(1, s, 2)
    rng = np.random.default_rng(seed)
    out = np.zeros((draws, 2, len(FIT_KEYS) + 1, sums.count.shape[1]))
    free = np.zeros((draws, sums.count.shape[1]))
    for r in range(draws):
        train = sums.curve(rng.choice(even, len(even)))
        test = sums.curve(rng.choice(odd, len(odd)))
        for layer in range(out.shape[-1]):
            tr = tuple(a[layer] for a in train)
            te = tuple(a[layer] for a in test)
            for k, free_share in enumerate((False, True)):
                out[r, k, :, layer] = _fit_and_score(tr, te, table, free_share, d)
            free[r, layer] = _r2(te[0], np.zeros_like(te[0]), te[2])
    q = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
    lo, hi = np.quantile(out, q, axis=0)  # (2, 5, L) each
    f_lo, f_hi = np.quantile(free, q, axis=0)
    result: dict = {"independent": [f_lo.tolist(), f_hi.tolist()]}
    for k, name in enumerate(("theory", "partial")):
        result[name] = [lo[k, 0].tolist(), hi[k, 0].tolist()]
        result[f"{name}_fit"] = {key: [lo[k, j + 1].tolist(), hi[k, j + 1].tolist()] for j, key in enumerate(FIT_KEYS)}
    return result
