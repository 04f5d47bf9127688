"""The interaction energy of N i.i.d. tokens on S^1 across N: its fluctuation law (THEORY sections 4-5).

E_beta(X) = 1/(2 N^2) sum_{i != j} (e^beta - e^{beta <X_i, X_j>}) of tokens drawn i.i.d. from a law mu is a
V-statistic of its limit E_beta(mu) (the N -> infinity energy of the SPDE's measure at t = 0): exactly
E[E_beta(X)] = (1 - 1/N) E_beta(mu) (the diagonal terms vanish). Its fluctuation follows the Hoeffding
decomposition, with h_1(u) = (1/2) int (e^beta - e^{beta <u, v>}) dmu(v):

- mu not uniform (von Mises, concentration kappa > 0): h_1 varies, sd(E_beta(X)) = 2 sd(h_1(X)) N^{-1/2}
  (1 + O(1/N)), the propagation-of-chaos rate N^{-1/2}. For von Mises, int e^{beta cos(s - t)} dmu(t) =
  I_0(|beta e^{is} + kappa|) / I_0(kappa), so h_1 is known in closed form and sd(h_1) by quadrature.
- mu uniform (the model's initial law, kappa = 0): h_1 = (e^beta - I_0(beta)) / 2 is constant (rotation
  invariance), the statistic is degenerate and fluctuates at N^{-1}, exactly sd = sqrt(sum_{k >= 1} I_k(beta)^2
  (N - 1) / N^3): with Z_k = sum_j e^{i k theta_j}, sum_{i,j} e^{beta cos(theta_i - theta_j)} = N^2 I_0 +
  2 sum_k I_k |Z_k|^2, and Var |Z_k|^2 = N^2 - N, independent across k >= 1 (uncorrelated: fourth moments).

``energy_law`` measures mean and sd over R independent draws at each N with the O(N) harmonic energy
(``observables.interaction_energy`` from N = 4,096; computed the same way below) and fits the slope of the variance
(a bootstrap interval, halved: the sd's) beside these predictions.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .. import _spheresums
from ..observables import bootstrap_slope, loglog_slope

QUADRATURE = 4096  # nodes of the trapezoidal rule on the circle (spectrally accurate for these smooth h_1)


def _h1(beta: float, kappa: float) -> tuple[np.ndarray, np.ndarray]:
    """(h_1 at the nodes, the von Mises density weights of the nodes), for the law of concentration ``kappa``."""
    from scipy.special import ive

    t = np.arange(QUADRATURE) * (2 * math.pi / QUADRATURE)
    rho = np.sqrt(beta**2 + kappa**2 + 2 * beta * kappa * np.cos(t))
    mean_kernel = ive(0, rho) * np.exp(rho - kappa) / ive(0, kappa)  # I_0(rho) / I_0(kappa)
    w = np.exp(kappa * (np.cos(t) - 1))
    return (math.exp(beta) - mean_kernel) / 2, w / w.sum()


def predicted(n: int, beta: float, kappa: float) -> dict[str, float]:
    """The law of E_beta(X) for N = ``n`` i.i.d. tokens: mean (exact), sd (exact at kappa = 0; leading order
    2 sd(h_1) / sqrt(N) otherwise) and the sd's exponent in N."""
    from scipy.special import ive

    h, w = _h1(beta, kappa)
    limit = float((h * w).sum())  # E_beta(mu) = E h_1(X)
    if kappa == 0:
        k = np.arange(1, 400)
        tail = float((ive(k, beta) ** 2).sum()) * math.exp(2 * beta)  # sum_k I_k(beta)^2
        return {"mean": (1 - 1 / n) * limit, "sd": math.sqrt(tail * (n - 1) / n**3), "exponent": -1.0}
    sd_h1 = math.sqrt(float((w * (h - limit) ** 2).sum()))
    return {"mean": (1 - 1 / n) * limit, "sd": 2 * sd_h1 / math.sqrt(n), "exponent": -0.5}


def sample(n: int, runs: int, beta: float, kappa: float, seed: int) -> np.ndarray:
    """E_beta of ``runs`` independent draws of N = ``n`` tokens from the von Mises law (uniform at kappa = 0)
    centred at angle 0, by the harmonic sums: ``(runs,)`` float64."""
    rng = np.random.default_rng([seed, n])
    theta = rng.vonmises(0.0, kappa, size=(runs, n)) if kappa > 0 else rng.uniform(0, 2 * math.pi, (runs, n))
    u = torch.from_numpy(np.stack([np.cos(theta), np.sin(theta)], -1))  # (runs, n, 2)
    return (_spheresums.scaled_energy(u, beta) * math.exp(beta)).numpy()


def energy_law(tokens, runs: int, beta: float = 1.0, kappa: float = 0.0, seed: int = 0) -> dict:
    """Mean and sd of E_beta over ``runs`` draws at each N in ``tokens``, against ``predicted``; the sd's slope
    in log N (half the variance's) with a 95% bootstrap interval, and its predicted exponent."""
    ns = [int(n) for n in tokens]
    rows, sq = [], []
    for n in ns:
        e, law = sample(n, runs, beta, kappa, seed), predicted(n, beta, kappa)
        sq.append((e - law["mean"]) ** 2)  # about the exact mean: the variance without the sample mean's bias
        rows.append({"tokens": n, "mean": float(e.mean()), "sd": float(e.std(ddof=1)), **_pred(law)})
    lo, hi = bootstrap_slope(ns, np.array(sq), seed=seed)
    slope = loglog_slope(ns, [float(s.mean()) for s in sq]) / 2
    return {"beta": beta, "kappa": kappa, "runs": runs, "rows": rows, "slope": slope, "interval": (lo / 2, hi / 2),
            "predicted_exponent": predicted(ns[0], beta, kappa)["exponent"]}  # fmt: skip


def _pred(law: dict[str, float]) -> dict[str, float]:
    return {"predicted_mean": law["mean"], "predicted_sd": law["sd"]}
