"""``auxiliary``: positions as auxiliary variables keep the token law off a point mass (Imaizumi, Koyama, Isobe,
Hayashi, arXiv 2605.30229; docs/field.md, "Auxiliary variables").

The claim (abstract): with auxiliary variables such as positional encodings, the maximiser of the mean-field
transformer's energy is the push-forward of the auxiliary variables' law, not a point mass. The model here: the
attention part ``positional`` (``attention.PositionalAttention``): token i carries the fixed rotation R_i of its
position phi_i = 2 pi f i / N and attends to the others read at their positions, y_j = R_j x_j. The energy
(1 / 2 beta N^2) sum_ij e^{beta <y_i, y_j>} is maximal exactly when every y_i = c, i.e. x_i = R_i^T c: the token
law mu* = (phi -> R(phi)^T c)#nu, nu the positions' law (uniform on the N positions). Noise-free discrete model
(THEORY section 1, Post-LN), Q^T K = beta I, V = I, K independent uniform starts per dimension d.

Measured at the same inputs: W2(mu_t, mu*_c) between the empirical token law and the predicted push-forward at
the fitted c = LN(mean_i R_i x_i) (exact W2 of two N-point laws, chordal cost, by assignment), against t; at T
its mean over seeds and the largest seed; W2 to the nearest point mass, sqrt(2 - 2 |mean_i x_i|), against the
push-forward's own distance to it (sqrt(2 - 2 |mean_i R_i^T c|)), per seed (the point-mass prediction: 0); the
energy at T over its maximum e^beta / 2 beta.
The theory's rate: near the maximiser a Post-LN layer divides the deviations y_i - c by 1 + dt (first order,
any beta), so W2 decays like e^{-r t}, r = ln(1 + dt) / dt; the per-seed fitted rate with its 95 % interval.
The check: every seed's W2(mu_T, mu*) < ``tol``, the rate within 2 % of r, the distance to a point mass equal to the
push-forward's (within 10 ``tol``) and above 10 ``tol`` in every seed (the point-mass prediction fails; in odd d
the push-forward of a c on the unturned axis is itself a point mass, a null set of starts). Wrong model: the
auxiliary part switched off (f = 0, the plain softmax attention, the same starts): its tokens collapse, and its
W2 to the same push-forward stays at the point mass's distance (the check fails it).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...params import Param
from ...plots._names import FIGURES
from .._results import Result
from ._common import cached

FIGURE = FIGURES["auxiliary"]["pushforward"]  # the plots own the name
RATE_TOL = 0.02  # relative: the fitted decay rate against ln(1 + dt) / dt
NOISE_WIDTH = 256  # the MLP noise's width m with the setting ``noise`` > 0 (common noise: beyond the paper)
FLOOR, CEILING = 1e-11, 1e-4  # the W2 window of the rate fit (the linear regime, above float64's floor)


@dataclass(frozen=True)
class AuxiliarySettings:
    """Dimensions d = dim_first .. dim_last, N, K seeds, beta, T, L, the positions' frequency, saves, tolerance."""

    dim_first: int = 2
    dim_last: int = 4
    tokens: int = 256
    seeds: int = 16
    beta: float = 1.0
    horizon: float = 40.0
    layers: int = 400
    frequency: float = 1.0
    every: int = 10
    tol: float = 1e-6
    noise: float = 0.0
    seed: int = 0

    @classmethod
    def quick(cls) -> AuxiliarySettings:
        return cls(tokens=64, seeds=6)


SETTINGS = (
    Param("dim_first", int, AuxiliarySettings.dim_first, low=2, high=16, doc="smallest d"),
    Param("dim_last", int, AuxiliarySettings.dim_last, low=2, high=16, doc="largest d (>= dim_first)"),
    Param("tokens", int, AuxiliarySettings.tokens, low=4, high=2048, doc="N (positions)"),
    Param("seeds", int, AuxiliarySettings.seeds, low=3, doc="K independent starts per d"),
    Param("beta", float, AuxiliarySettings.beta, low=1e-3, high=50.0, doc="inverse temperature"),
    Param("horizon", float, AuxiliarySettings.horizon, low=1.0, doc="T"),
    Param("layers", int, AuxiliarySettings.layers, low=10, doc="L"),
    Param("frequency", float, AuxiliarySettings.frequency, low=0.05, high=8.0, doc="f: turns over the positions"),
    Param("every", int, AuxiliarySettings.every, low=1, doc="save every this many layers"),
    Param("tol", float, AuxiliarySettings.tol, low=1e-12, high=0.5, doc="W2 tolerance at T"),
    Param("noise", float, AuxiliarySettings.noise, low=0.0, high=2.0, doc="common MLP noise su = sw (0: the paper's)"),
)
"""The experiment's declared settings (``sdeformer auxiliary --set NAME=VALUE``)."""


@dataclass(frozen=True)
class AuxiliaryResult(Result):
    """Per d (keys "2", "3", ...): W2 curves (seed-wise), the final statistics with 95 % intervals, the verdicts."""

    dims: list[int]
    t: list[float]
    w2: dict[str, list[list[float]]]  # d -> seeds -> times: W2(mu_t, mu*_c), the auxiliary part on
    w2_off: dict[str, list[list[float]]]  # the same, the part switched off (f = 0)
    w2_final: dict[str, float]  # geometric mean over seeds at T
    w2_final_max: dict[str, float]
    w2_off_final: dict[str, float]
    w2_off_final_lo: dict[str, float]
    w2_off_final_hi: dict[str, float]
    dirac: dict[str, float]  # W2(mu_T, nearest point mass), mean over seeds
    dirac_lo: dict[str, float]
    dirac_hi: dict[str, float]
    dirac_min: dict[str, float]  # the smallest over seeds (the point-mass prediction is 0 in every seed)
    dirac_predicted: dict[str, float]  # the push-forward's own distance to its nearest point mass, mean
    energy_ratio: dict[str, float]  # E(x_T) / (e^beta / 2 beta), smallest over seeds
    rate: dict[str, float]
    rate_lo: dict[str, float]
    rate_hi: dict[str, float]
    theory_rate: float
    example_angle: list[float]  # d = dim_first, seed 0: the tokens' first-plane angles at T (on)
    example_angle_off: list[float]
    example_predicted: list[float]
    example_position: list[float]
    agrees: bool
    point_mass_rejected: bool
    off_fails: bool
    figure: str = FIGURE
    noise: float = 0.0  # the common MLP noise's su = sw (0: the paper's noise-free setting)

    @property
    def holds(self) -> bool:
        return self.agrees and self.point_mass_rejected and self.off_fails


def w2_empirical(a: np.ndarray, b: np.ndarray) -> float:
    """W2 between the uniform laws on the rows of ``a`` and ``b`` ``(N, d)`` (chordal cost; an optimal assignment)."""
    from scipy.optimize import linear_sum_assignment

    cost = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)  # (N, N)
    rows, cols = linear_sum_assignment(cost)
    return math.sqrt(float(cost[rows, cols].mean()))


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean over seeds and its 95 % t-interval."""
    from scipy.stats import t as student

    v = np.asarray(values, float)
    half = float(student.ppf(0.975, len(v) - 1)) * float(v.std(ddof=1)) / math.sqrt(len(v))
    return float(v.mean()), float(v.mean() - half), float(v.mean() + half)


def trajectories(s: AuxiliarySettings, d: int, frequency: float):
    """``(saves, K, N, d)`` tokens of the noise-free model with the positional attention at ``frequency`` (0: off)
    from K uniform starts (seeded by the settings' seed and d: the same starts for both frequencies), with common
    MLP noise su = sw = ``noise`` where it is > 0 (one stream per start, the same paths for both frequencies)."""
    import torch

    from ...attention._positional import PositionalAttention
    from ...dynamics._discrete import StochasticTransformer
    from ...noise._mlp import MLPNoise

    g = torch.Generator().manual_seed(1000 * s.seed + d)
    x0 = torch.nn.functional.normalize(torch.randn(s.seeds, s.tokens, d, generator=g, dtype=torch.float64), dim=-1)
    noise = MLPNoise(width=NOISE_WIDTH, su=s.noise, sw=s.noise) if s.noise > 0 else None  # beyond the paper
    model = StochasticTransformer(s.layers, s.horizon, noise, PositionalAttention(s.beta, 1.0, frequency))
    return model.run(x0, seed=1000 * s.seed + d, saveat=s.every).x


def fitted_c(part, xs):
    """The maximiser's c fitted to tokens ``(..., N, d)``: LN(mean_i R_i x_i), the least-squares c of the labelled
    tokens; where that mean vanishes (every c fits equally: a collapsed law in d = 2), R_0 x_0. ``(..., d)``."""
    import torch

    y = part.frame(xs)
    m = y.mean(-2)
    small = (m.norm(dim=-1, keepdim=True) < 1e-9).expand_as(m)
    return torch.nn.functional.normalize(torch.where(small, y[..., 0, :], m), dim=-1)


def distances(s: AuxiliarySettings, xs) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For tokens ``(saves, K, N, d)``: W2 to the predicted push-forward at the fitted c ``(K, saves)``, the final W2 to
    the nearest point mass and the push-forward's own ``(K,)``, and the final energy ratio ``(K,)``."""
    from ...attention._positional import PositionalAttention

    part = PositionalAttention(s.beta, 1.0, s.frequency)
    c = fitted_c(part, xs)  # (saves, K, d)
    predicted = part.maximiser(c, s.tokens)  # (saves, K, N, d)
    x, p = xs.numpy(), predicted.numpy()
    w2 = np.array([[w2_empirical(x[i, k], p[i, k]) for i in range(x.shape[0])] for k in range(x.shape[1])])
    dirac = np.sqrt(np.maximum(0.0, 2 - 2 * np.linalg.norm(x[-1].mean(-2), axis=-1)))
    own = np.sqrt(np.maximum(0.0, 2 - 2 * np.linalg.norm(p[-1].mean(-2), axis=-1)))
    ratio = (part.energy(xs[-1]) * 2 * s.beta / math.exp(s.beta)).numpy()
    return w2, dirac, own, ratio


def decay_rate(t: np.ndarray, w2: np.ndarray) -> float:
    """-slope of log W2 on t over the saves with FLOOR < W2 < CEILING (nan with fewer than 3)."""
    keep = (w2 > FLOOR) & (w2 < CEILING)
    if keep.sum() < 3:
        return float("nan")
    return -float(np.polyfit(t[keep], np.log(w2[keep]), 1)[0])


def run(s: AuxiliarySettings, advance=lambda _n: None) -> AuxiliaryResult:
    """The experiment (module docstring); ``advance(1)`` after each d and model."""
    dims = list(range(s.dim_first, s.dim_last + 1))
    t = np.arange(0, s.layers + 1, s.every) * (s.horizon / s.layers)  # the saved depths (every divides layers)
    out: dict[str, dict[str, object]] = {}
    example: list[list[float]] = []
    for d in dims:
        on = trajectories(s, d, s.frequency)
        w2, dirac, own, ratio = distances(s, on)
        advance(1)
        off = trajectories(s, d, 0.0)
        w2_off, *_ = distances(s, off)
        advance(1)
        rates = [decay_rate(t, w) for w in w2]
        key = str(d)
        out[key] = {"w2": w2.tolist(), "w2_off": w2_off.tolist(), "dirac": mean_interval(list(dirac)),
                    "dirac_min": float(dirac.min()),
                    "own": float(own.mean()), "gap": float(np.abs(dirac - own).max()), "ratio": float(ratio.min()),
                    "off": mean_interval(list(w2_off[:, -1])), "rate": mean_interval(rates)}  # fmt: skip
        if d == s.dim_first:
            from ...attention._positional import PositionalAttention

            part = PositionalAttention(s.beta, 1.0, s.frequency)
            c = fitted_c(part, on[-1, 0])
            angle = [np.arctan2(z[-1, 0, :, 1], z[-1, 0, :, 0]).tolist() for z in (on.numpy(), off.numpy())]
            p = part.maximiser(c, s.tokens).numpy()
            example = [*angle, np.arctan2(p[:, 1], p[:, 0]).tolist(), part.angles(on[-1, 0])[:, 0].tolist()]
    return _result(s, dims, t, out, example)


def _result(s, dims, t, out, example) -> AuxiliaryResult:
    theory = math.log(1 + s.horizon / s.layers) / (s.horizon / s.layers)
    final = {k: np.asarray(v["w2"])[:, -1] for k, v in out.items()}
    agrees = all(
        final[k].max() < s.tol and abs(v["rate"][0] / theory - 1) < RATE_TOL and v["gap"] < 10 * s.tol
        for k, v in out.items()
    )
    rejected = all(v["dirac_min"] > 10 * s.tol for v in out.values())
    off_fails = all(v["off"][1] > 10 * s.tol for v in out.values())
    per_d = {}  # field -> {d: value}
    for name, key, i in (("w2_off_final", "off", 0), ("w2_off_final_lo", "off", 1), ("w2_off_final_hi", "off", 2),
                         ("dirac", "dirac", 0), ("dirac_lo", "dirac", 1), ("dirac_hi", "dirac", 2),
                         ("rate", "rate", 0), ("rate_lo", "rate", 1), ("rate_hi", "rate", 2)):  # fmt: skip
        per_d[name] = {k: v[key][i] for k, v in out.items()}
    for name, key in (("w2", "w2"), ("w2_off", "w2_off"), ("dirac_min", "dirac_min"), ("dirac_predicted", "own"),
                      ("energy_ratio", "ratio")):  # fmt: skip
        per_d[name] = {k: v[key] for k, v in out.items()}
    angle, angle_off, predicted, position = example
    return AuxiliaryResult(
        dims=dims, t=t.tolist(), **per_d, theory_rate=theory,
        w2_final={k: float(np.exp(np.log(np.maximum(f, 1e-300)).mean())) for k, f in final.items()},
        w2_final_max={k: float(f.max()) for k, f in final.items()},
        example_angle=angle, example_angle_off=angle_off, example_predicted=predicted, example_position=position,
        agrees=agrees, point_mass_rejected=rejected, off_fails=off_fails, noise=s.noise,
    )  # fmt: skip


def settings_for(quick: bool, changes: dict[str, object] | None = None) -> AuxiliarySettings:
    from ...core._errors import ConfigError

    base = AuxiliarySettings.quick() if quick else AuxiliarySettings()
    s = dataclasses.replace(base, **(changes or {}))  # type: ignore[arg-type]
    if s.dim_last < s.dim_first:
        raise ConfigError("dim_last", s.dim_last, f"at least dim_first = {s.dim_first}")
    if s.every > s.layers // 4 or s.layers % s.every:
        raise ConfigError("every", s.every, f"a divisor of layers = {s.layers}, at most layers / 4 (a curve to fit)")
    return s


def units(_seed: int, quick: bool, changes: dict[str, object]) -> int:
    s = settings_for(quick, changes)
    return 2 * (s.dim_last - s.dim_first + 1)


def run_and_write(out: Path, quick: bool, seed: int, advance=lambda _n: None, changes=None) -> AuxiliaryResult:
    settings = dataclasses.replace(settings_for(quick, changes), seed=seed)
    return cached(Path(out) / "auxiliary.json", settings, AuxiliaryResult, lambda: run(settings, advance))
