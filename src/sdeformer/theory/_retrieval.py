"""The token retrieval profile of causal ALiBi attention on the circle (BEYOND section 7; arXiv:2605.09213).

Theory (the paper's formulas, as its public code evaluates them): tokens i.i.d. uniform on S^1, rescaled
positions s = i / N, ALiBi decay ``lam`` per unit of s. The correlation of the last token's angle at time t
with the initial angle of the token at position s, tested against the smooth kernel with Fourier weights
``omega_n = exp(-pi^2 n^2 / (2 M^2))``, is to leading order 1/N times

    S_t(s) = sum_{n=1}^{n_max} omega_n g_{a_n}(t; s),
    g_a(t; s) = lam e^{lam s} / (e^lam - 1) psi_{a t}(Y(s)),   Y(s) = log((e^lam - 1) / (e^{lam s} - 1)),
    psi_c(y) = sum_k c^{k+1} y^k / (k! (k+1)!) = sqrt(c / y) I_1(2 sqrt(c y)),

with a_n the growth rate of Fourier mode n of the linearized mean-field flow. The slope of S_t at s = 1 (the
recency end) changes sign at

    t_crit = 2 (1 - e^{-lam}) sum_n omega_n a_n / sum_n omega_n a_n^2.

``mode_rates``: a_n = n^2 I_n(beta) for the paper's kernel (weights normalized over positions only, velocity
beta e^{beta cos} sin), and a_n = n^2 I_n(beta) / (beta I_0(beta)) for the softmax attention of this package
(normalized over tokens too, V = I; reconstructed, BEYOND section 7).

Measurement (``measure``): the identity E[e^{i n (theta_i(t) - theta_k(0))}] = E[e^{i n (...)} J_ik] with
J_ik = d theta_i(t) / d theta_k(0) (integration by parts in the uniform theta_k(0); exact at every N) turns the
O(1/N) correlation into an estimator with O(1) relative noise; J comes from finite differences of runs that share
their noise (so common noise is allowed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from scipy.special import i1, ive

from ..core._errors import ConfigError
from ..core._validate import positive_float, positive_int
from ..dynamics._loop import SaveAt

KERNELS = ("softmax", "paper")
FD_STEP = 1e-6  # angle perturbation of the finite differences (float64 runs)


def paper_lambda(slope: float, tokens: int) -> float:
    """arXiv:2605.09213's lambda (per unit of rescaled position) of an ALiBi slope per token."""
    return slope * tokens


def mode_rates(beta: float, n_max: int, kernel: str = "softmax") -> np.ndarray:
    """a_n, n = 1..n_max ``(n_max,)``: n^2 I_n(beta) ('paper') or n^2 I_n(beta) / (beta I_0(beta)) ('softmax')."""
    beta, n_max = positive_float("beta", beta, "inverse temperature"), positive_int("n_max", n_max)
    n = np.arange(1, n_max + 1)
    if kernel == "paper":
        return n**2 * ive(n, beta) * math.exp(beta)
    if kernel == "softmax":
        return n**2 * ive(n, beta) / (beta * ive(0, beta))
    raise ConfigError("kernel", kernel, f"one of {list(KERNELS)}")


def smoothing(n_max: int, m: float) -> np.ndarray:
    """omega_n = exp(-pi^2 n^2 / (2 M^2)), n = 1..n_max ``(n_max,)``."""
    n = np.arange(1, positive_int("n_max", n_max) + 1)
    return np.exp(-0.5 * (math.pi * n / positive_float("M", m)) ** 2)


def _psi(c: np.ndarray, y: np.ndarray) -> np.ndarray:
    """psi_c(y) = sqrt(c / y) I_1(2 sqrt(c y)) (c > 0, y >= 0; c (1 + c y / 2) for tiny c y)."""
    z = 2 * np.sqrt(c * y)
    safe = np.where(z > 1e-6, z, 1.0)
    return np.where(z > 1e-6, 2 * c * i1(safe) / safe, c * (1 + c * y / 2))


def green(a: np.ndarray, t: float, s: np.ndarray, lam: float) -> np.ndarray:
    """g_{a_n}(t; s) for rates ``a`` ``(n,)`` and positions ``s`` in (0, 1] ``(S,)`` -> ``(n, S)``."""
    s = np.asarray(s, float)
    if lam <= 0 or not np.all((s > 0) & (s <= 1)):
        raise ConfigError("positions", "s", "need lam > 0 and positions in (0, 1]")
    y = np.log(np.expm1(lam) / np.expm1(lam * s))  # (S,)
    pre = lam * np.exp(lam * s) / np.expm1(lam)  # (S,)
    return pre * _psi(np.asarray(a, float)[:, None] * t, y[None, :])


def profile(s, beta: float, t: float, lam: float, m: float = 8.0, n_max: int = 20, kernel: str = "softmax"):
    """S_t(s) at positions ``s`` ``(S,)``: the leading-order retrieval profile of the last token (times N)."""
    a = mode_rates(beta, n_max, kernel)
    return smoothing(n_max, m) @ green(a, t, s, lam)  # (S,)


def threshold(beta: float, lam: float, m: float = 8.0, n_max: int = 20, kernel: str = "softmax") -> float:
    """t_crit: the time at which the slope of S_t at s = 1 changes sign (the recency end turns over)."""
    a, w = mode_rates(beta, n_max, kernel), smoothing(n_max, m)
    return 2 * (1 - math.exp(-positive_float("lam", lam))) * float(w @ a) / float(w @ a**2)


def end_slope(values: np.ndarray, positions: np.ndarray, lowest: float) -> float:
    """Least-squares slope of a profile ``values`` ``(S,)`` against ``positions`` over positions >= ``lowest``."""
    keep = positions >= lowest
    return float(np.polyfit(positions[keep], values[keep], 1)[0])


def crossing(times: Sequence[float] | np.ndarray, slopes: Sequence[float] | np.ndarray) -> float:
    """The first time a sequence of slopes turns from >= 0 to < 0 (linear interpolation); nan if it does not."""
    t, v = np.asarray(times, float), np.asarray(slopes, float)
    for k in range(len(v) - 1):
        if v[k] >= 0 > v[k + 1]:
            return float(t[k] + v[k] * (t[k + 1] - t[k]) / (v[k] - v[k + 1]))
    return float("nan")


def predicted_slopes(times, targets, tokens: int, beta: float, slope: float, lowest: float, kernel="softmax"):
    """The theory's end slope averaged over ``targets`` (0-based token indices; each is the last token of its own
    prefix of i + 1 tokens, lambda = slope (i + 1)) at the discrete sources k < i, one value per time ``(T,)``."""
    out = []
    for t in times:
        per = []
        for i in targets:
            pos = (np.arange(i) + 1) / (i + 1)
            per.append(end_slope(profile(pos, beta, t, paper_lambda(slope, i + 1), kernel=kernel), pos, lowest))
        out.append(float(np.mean(per)))
    return np.array(out)


def measure(model, theta0: torch.Tensor, times: Sequence[float], sources: Sequence[int], seeds, n_max=20, m=8.0):
    """Samples of K(theta_i(t) - theta_k(0)) J_ik ``(T, B, N, P)`` (target i, perturbed source ``sources[p]``) and
    the unperturbed states ``(T, B, N, 2)``, from runs of ``model`` (``.run(x0, seed, saveat)`` on
    ``(B (P+1), N, 2)``) started at the angles ``theta0`` ``(B, N)`` (float64); each sample's copies share its
    seed (``seeds``: one per sample), hence its noise."""
    b, n, p = theta0.shape[0], theta0.shape[1], len(sources)
    th = theta0[:, None, :].repeat(1, p + 1, 1)  # (B, P+1, N)
    th[:, torch.arange(1, p + 1), torch.as_tensor(list(sources))] += FD_STEP
    x0 = torch.stack([th.cos(), th.sin()], -1).reshape(b * (p + 1), n, 2)
    run = model.run(x0, [s for s in seeds for _ in range(p + 1)], SaveAt(times=list(times)))
    states = run.x[1:].reshape(len(times), b, p + 1, n, 2)  # (T, B, P+1, N, 2)
    weights = torch.as_tensor(smoothing(n_max, m))
    harmonics = torch.arange(1, n_max + 1, dtype=theta0.dtype)
    out = torch.empty(len(times), b, n, p, dtype=theta0.dtype)
    for k, x in enumerate(states):
        ang = torch.atan2(x[..., 1], x[..., 0])  # (B, P+1, N)
        jac = (torch.remainder(ang[:, 1:] - ang[:, :1] + math.pi, 2 * math.pi) - math.pi) / FD_STEP  # (B, P, N)
        delta = ang[:, 0, :, None] - theta0[:, None, list(sources)]  # (B, N, P)
        kern = sum(w * torch.cos(h * delta) for w, h in zip(weights.tolist(), harmonics.tolist()))
        out[k] = kern * jac.transpose(-1, -2)
    return out, states[:, :, 0]
