"""Synthetic runs of the stochastic transformer read like a real model, and the closed-form fit that recovers
their parameters (THEORY section 1; BEYOND section 1 for the share).

``simulate`` runs the discrete model ``Y = LN(X + dt s Attn_X(X))``, ``X' = LN(Y + xi(Y))`` with ``Q^T K = beta I``,
``V = s I`` and ``xi = sqrt(dt) (sqrt(rho) G + sqrt(1 - rho) G_i)`` (``PartialNoise`` of ``MLPNoise``) and returns a
``Capture`` like a real model's: the stream, ``a = dt s Attn``, the MLP's input Y and output xi.

``recover`` is closed form, from the same estimators as the real measurement, pooled over blocks: beta and the
layer step ``s dt`` from ``fit_attention`` (only the product of s and dt is identifiable: the model's increment
is ``dt s Attn``; with s = 1 it is dt), the share rho as the kernel curve at c = 1 (``share_at_one``), (sU, sW)
from the kernel fit, and the amplitude
``E|xi|^2 / d = dt kappa(1)``. Intervals resample runs (1.96 standard deviations of the resampled estimates),
widened to at least ``RESOLUTION`` of the value: the synthetic attention carries no noise, so its resampling
spread alone is near 0 while the fine beta grid resolves beta to 0.2-0.4 %. A parameter whose interval is wider
than ``IDENTIFIED`` (relative half-width) is refused (None): sU and sW when rho = 0 (C = 0 whatever the
kernel), and in general whenever the kernel's shape over the cosines the tokens visit does not pin them.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..attention._softmax import softmax_attention
from ..core._rng import Streams
from ..core._sphere import project
from ..noise._mlp import MLPNoise
from ..noise._partial import PartialNoise
from ._attention import fit_attention
from ._kernel import KernelSums, fit_theory, kernel_sums, share_at_one
from ._load import Capture

IDENTIFIED = 0.1  # largest relative interval half-width of a parameter that is reported
RESOLUTION = 0.005  # smallest relative half-width: the estimators' numerical resolution (beta's fine grid)
PLANTED = {"beta": 2.0, "step": 0.05, "su": 0.5, "sw": 0.5, "share": 0.7}


@torch.no_grad()
def simulate(
    runs: int = 64,
    tokens: int = 32,
    dim: int = 8,
    layers: int = 4,
    *,
    beta: float = PLANTED["beta"],
    step: float = PLANTED["step"],
    su: float = PLANTED["su"],
    sw: float = PLANTED["sw"],
    share: float = PLANTED["share"],
    width: int = 512,
    activation: str = "gelu",
    seed: int = 0,
) -> Capture:
    """``runs`` independent runs of ``tokens`` uniform tokens through ``layers`` blocks (s = 1, dt = ``step``);
    one sentence per run in the returned ``Capture`` (float64)."""
    streams = Streams(seed, (runs,))
    noise = PartialNoise(MLPNoise(activation, width, su, sw), share)
    x = project(streams.randn((tokens, dim), torch.float64))  # (R, n, d)
    hidden, attn, mlp_in, mlp_out = [x], [], [], []
    for _ in range(layers):
        a = step * softmax_attention(beta * x, x, x)  # (R, n, d)
        y = project(x + a)
        f = noise.increment(y, step, streams)  # (R, n, d)
        x = project(y + f)
        for target, value in zip((attn, mlp_in, mlp_out, hidden), (a, y, f, x), strict=True):
            target.append(value)
    h, a, y, f = (list(torch.stack(t, 1).unbind(0)) for t in (hidden, attn, mlp_in, mlp_out))  # (L(+1), n, d) each
    return Capture(h, a, y, f)


def _pooled(sums: KernelSums) -> KernelSums:
    """The sums with every block pooled into one ``(S, 1, ...)``."""
    return KernelSums(*(getattr(sums, k).sum(1, keepdims=True) for k in ("pair", "cos", "count", "square", "tokens")))


def _estimate(cap: Capture, sums: KernelSums, rows: np.ndarray, activation: str) -> dict[str, float]:
    d = cap.hidden[0].shape[-1]
    att = fit_attention([cap.hidden[i] for i in rows], [cap.attn[i] for i in rows], resamples=0)
    sub = KernelSums(*(getattr(sums, k)[rows] for k in ("pair", "cos", "count", "square", "tokens")))
    c, mid, count = sub.curve()
    step = float(np.mean(att["scale"]))
    amplitude = float(sub.square.sum() / sub.tokens.sum() / d)
    fit = fit_theory(c[0], mid[0], count[0], d, free_share=True, activation=activation, kappa1=amplitude / step)
    return {
        "beta": float(np.mean(att["beta"])),
        "step": step,
        "share": share_at_one(c[0], mid[0], count[0]),
        "su": fit["su"],
        "sw": fit["sw"],
        "amplitude": amplitude,
    }


def recover(cap: Capture, activation: str = "gelu", resamples: int = 16, seed: int = 0) -> dict[str, dict]:
    """Per parameter: ``{"value", "low", "high", "identified"}`` (value None when not identified); see the
    module docstring. ``amplitude`` is dt kappa(1)."""
    runs = len(cap.hidden)
    sums = _pooled(kernel_sums(cap.mlp_in, cap.mlp_out))
    best = _estimate(cap, sums, np.arange(runs), activation)
    rng = np.random.default_rng(seed)
    draws = [_estimate(cap, sums, rng.integers(0, runs, runs), activation) for _ in range(resamples)]
    out = {}
    for name, value in best.items():
        values = np.array([dr[name] for dr in draws])
        scale = 1.0 if name == "share" else max(abs(value), 1e-12)  # the share: absolute, it may be 0
        spread = max(float(values.std(ddof=1)) * 1.96, RESOLUTION * scale)
        lo, hi = value - spread, value + spread
        identified = spread <= IDENTIFIED * scale and math.isfinite(spread)
        out[name] = {"value": value if identified else None, "low": lo, "high": hi, "identified": bool(identified)}
    return out
