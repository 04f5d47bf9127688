"""eps and the resolution floor of the synchronization check (THEORY section 5).

eps bounds the growth rate of E_beta along the noiseless attention flow from *every* initial measure.
For V = s I, Q^T K = beta I (the beta of E_beta, beta >= 0) it is certified: ``certified_eps(s) = 2 max(0, -s)``,
and 2 is the sharpest constant (proof below; ``energy_rate`` is the exact dE_beta/dt it rests on). For any other
attention it is the largest growth rate over a stated family of adversarial starts (``adversarial_eps``).
``resolution_floor`` is the smallest E_beta a run in a given dtype resolves; ``stable_energy`` computes
E_beta without the cancellation of e^beta - e^{beta <x, y>}.

Proof that dE_beta/dt <= 2 |s| E_beta for s < 0 (it sharpens THEORY 5.1's 4 |s|).
Write u_ik = <x_i, x_k>, w_ik = e^{beta u_ik} (w_ii = e^beta), Z_i = sum_k w_ik, m_i = sum_k w_ik x_k = Z_i y_i.
THEORY 5.1 gives exactly dE/dt = -(beta s / N^2) sum_i Z_i |P_i y_i|^2 = (beta |s| / N^2) sum_i |P_i m_i|^2 / Z_i.

1. P_i x_i = 0, so P_i m_i = P_i d_i with d_i = sum_k w_ik (x_k - x_i), and |P_i m_i| <= |d_i|.
2. d_i = -(L X)_i for the graph Laplacian L = D - W of the weights (D = diag(Z_i)), so, coordinate by
   coordinate, sum_i |d_i|^2 / Z_i = tr(X^T L D^-1 L X). W is positive semi-definite: e^{beta <x, y>} =
   sum_n beta^n <x, y>^n / n! is a sum of Schur powers of the Gram matrix with coefficients >= 0. Hence the
   normalised Laplacian D^-1/2 L D^-1/2 = I - D^-1/2 W D^-1/2 has its eigenvalues in [0, 1] (>= 0 as for every
   Laplacian with weights >= 0, <= 1 since D^-1/2 W D^-1/2 >= 0), so L D^-1 L <= L and
   sum_i |d_i|^2 / Z_i <= tr(X^T L X) = (1/2) sum_{i,k} w_ik |x_i - x_k|^2 = sum_{i,k} w_ik (1 - u_ik).
3. Convexity of e^{beta u} (beta >= 0): e^beta - e^{beta u} >= beta e^{beta u} (1 - u).
Together: dE/dt <= (|s| / N^2) sum_{i,k} beta w_ik (1 - u_ik) <= (|s| / N^2) sum_{i,k} (e^beta - w_ik)
= 2 |s| E_beta, for every N, beta >= 0 and configuration. For s >= 0, dE/dt <= 0 (eps = 0).
Sharpness: two tokens at overlap u -> 1 give dE/dt / E -> 2 |s| (each step above is an equality to first
order in 1 - u), so no constant below 2 holds for all configurations. THEORY 5.1's Jensen step,
|P_i y_i|^2 <= sum_k a_ik (1 - u_ik^2), drops the weight of x_i itself and loses the factor 2.
"""

from __future__ import annotations

import math

import torch

from ...attention._masks import MaskedAttention
from ...attention._softmax import SoftmaxAttention
from ...core._rng import Streams, derive_seeds
from ...core._sphere import uniform_sphere
from ...dynamics._discrete import StochasticTransformer
from .architecture import all_to_all

FLOOR_ULPS = 8.0  # resolution floor in units of the E_beta of tokens whose cosines all sit one ulp below 1
CLUSTER_SPREAD = 1e-2  # std of the tokens about their centre in the clustered / antipodal starts
CAP_SPREADS = (0.1, 0.3, 1.0)  # std about one centre of the "spread" starts
STARTS = (
    "adversarial starts: uniform, 2 and 3 tight clusters, antipodal pairs of tight clusters, "
    f"caps of spread {'/'.join(f'{s:g}' for s in CAP_SPREADS)}; max growth rate along the noiseless flow"
)


CERTIFIED_FACTOR = 2.0  # dE_beta/dt <= 2 |s| E_beta, sharp (module docstring)


def certified_eps(scale: float) -> float:
    """eps = 2 max(0, -s) for V = s I, Q^T K = beta I: dE_beta/dt <= 2 |s| E_beta for s < 0, <= 0 for s >= 0,
    for every N, beta >= 0 and initial measure (proof in the module docstring; THEORY section 5.1 states 4)."""
    return CERTIFIED_FACTOR * max(0.0, -float(scale))


def is_certified(attention: object, beta: float, tokens: int | None = None) -> bool:
    """Whether ``attention`` is V = s I, Q^T K = beta I with the energy's beta (scalars), so ``certified_eps``
    applies: ``SoftmaxAttention`` without matrices, or the masked softmax (``MaskedAttention``, no ALiBi) when it
    attends all-to-all on ``tokens`` tokens (no causal mask, one species, the complete graph)."""
    if type(attention) is MaskedAttention:
        one_graph = not attention.causal and not attention.cross
        plain = one_graph and tokens is not None and all_to_all(attention.mask, tokens)
    else:
        matrices = (getattr(attention, name, None) for name in "QKV")
        plain = isinstance(attention, SoftmaxAttention) and all(m is None for m in matrices)
    scale, own_beta = getattr(attention, "scale", None), getattr(attention, "beta", None)
    return plain and isinstance(scale, float | int) and isinstance(own_beta, float | int) and own_beta == beta


def stable_energy(x: torch.Tensor, beta: float) -> torch.Tensor:
    """E_beta(X) = -(e^beta / (2 N^2)) sum_{i,j} expm1(-beta |u_i - u_j|^2 / 2), u = x / |x|, with
    |u_i - u_j|^2 taken about the tokens' mean (relative error ~ eps_machine in a single cluster). In float64.
    ``(..., N, d) -> (...)``."""
    u = x.double() / torch.linalg.vector_norm(x.double(), dim=-1, keepdim=True)  # (..., N, d)
    w = u - u.mean(-2, keepdim=True)  # (..., N, d)
    sq = w.pow(2).sum(-1)  # (..., N)
    d2 = (sq.unsqueeze(-1) + sq.unsqueeze(-2) - 2.0 * (w @ w.transpose(-1, -2))).clamp_(min=0.0)  # (..., N, N)
    n = x.shape[-2]
    return torch.expm1(d2 * (-beta / 2.0)).sum((-1, -2)) * (-math.exp(beta) / (2 * n * n))


def resolution_floor(dtype: torch.dtype, beta: float) -> float:
    """The smallest E_beta a run in ``dtype`` resolves: FLOOR_ULPS x beta e^beta eps_machine / 2.

    The field's covariance is kappa(<x_i, x_j>), and <x_i, x_j> is known to eps_machine of the run's dtype:
    tokens with 1 - <x_i, x_j> below that see one kernel value (identical increments) or one ulp apart.
    All pairs at 1 - <x_i, x_j> = eps_machine give E_beta ~ beta e^beta eps_machine / 2; the floor is
    FLOOR_ULPS times that (float32 ~1.3e-6, float64 ~2.4e-15 at beta = 1).
    """
    return FLOOR_ULPS * beta * math.exp(beta) * torch.finfo(dtype).eps / 2.0


def energy_rate(x: torch.Tensor, beta: float, scale: float) -> torch.Tensor:
    """Exact dE_beta/dt along dx_i/dt = s P_{x_i} y_i, y_i = sum_k a_ik x_k (softmax a_ik ~ e^{beta u_ik}):
    -(beta s / N^2) sum_i Z_i |P_{x_i} y_i|^2, Z_i = sum_k e^{beta u_ik}. Unit tokens ``(..., N, d) -> (...)``."""
    g = beta * (x @ x.transpose(-1, -2))  # (..., N, N)
    z = torch.exp(g).sum(-1)  # (..., N)
    y = torch.softmax(g, -1) @ x  # (..., N, d)
    tangent = y - (y * x).sum(-1, keepdim=True) * x  # P_{x_i} y_i, (..., N, d)
    return -(beta * scale / x.shape[-2] ** 2) * (z * tangent.pow(2).sum(-1)).sum(-1)


def adversarial_starts(runs: int, tokens: int, dim: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """The family of starts of ``adversarial_eps`` (STARTS), ``runs`` of each, float64 ``(runs, N, d)``."""
    seeds = iter(derive_seeds(seed, 16))
    out = {"uniform": uniform_sphere(tokens, dim, batch=(runs,), seed=next(seeds), dtype=torch.float64)}

    def around(centres: torch.Tensor, spread: float) -> torch.Tensor:  # centres (R, N, d) -> (R, N, d)
        noise = uniform_sphere(tokens, dim, batch=(runs,), seed=next(seeds), dtype=torch.float64)
        noisy = centres + spread * noise * math.sqrt(dim)  # noise * sqrt(d): ~ standard normal per coordinate
        return noisy / torch.linalg.vector_norm(noisy, dim=-1, keepdim=True)

    for k in (2, 3):
        c = uniform_sphere(k, dim, batch=(runs,), seed=next(seeds), dtype=torch.float64)  # (R, k, d)
        out[f"{k} clusters"] = around(c[:, torch.arange(tokens) % k], CLUSTER_SPREAD)
    c = uniform_sphere(1, dim, batch=(runs,), seed=next(seeds), dtype=torch.float64)  # (R, 1, d)
    sign = torch.where(torch.arange(tokens) % 2 == 0, 1.0, -1.0).to(torch.float64)[:, None]  # (N, 1)
    out["antipodal"] = around(c * sign, CLUSTER_SPREAD)
    for s in CAP_SPREADS:
        out[f"spread {s:g}"] = around(c.expand(runs, tokens, dim), s)
    return out


def growth_rate(x0: torch.Tensor, attention, steps: int, horizon: float, beta: float) -> float:
    """max(0, largest d/dt log E_beta over steps and runs) along the noiseless flow from ``x0`` ``(R, N, d)``."""
    model = StochasticTransformer(steps, horizon, None, attention)
    streams = Streams(0, tuple(x0.shape[:-2]), x0.device)  # the model has no noise: never drawn from
    x, e = x0, stable_energy(x0, beta)  # (R,)
    worst = 0.0
    for _ in range(steps):
        x = model.step(x, streams)
        e_new = stable_energy(x, beta)
        keep = (e > 0) & (e_new > 0)
        if keep.any():
            worst = max(worst, float((torch.log(e_new[keep] / e[keep]) / model.dt).max()))
        e = e_new
    return worst


def adversarial_eps(
    attention, dim: int, beta: float, tokens: int = 16, runs: int = 4, steps: int = 100, horizon: float = 1.0
) -> float:
    """eps as the max growth rate of E_beta over the starts of ``adversarial_starts`` (STARTS)."""
    starts = adversarial_starts(runs, tokens, dim)
    return max(growth_rate(x0, attention, steps, horizon, beta) for x0 in starts.values())


def attention_eps(attention, dim: int, beta: float, tokens: int | None = None, **adversarial) -> tuple[float, str]:
    """(eps, eps_method): ``certified_eps`` where ``is_certified`` (on ``tokens`` tokens), else ``adversarial_eps``
    (from starts of ``tokens`` tokens if given) and STARTS."""
    if is_certified(attention, beta, tokens):
        return certified_eps(float(attention.scale)), "certified"
    sizes = {} if tokens is None else {"tokens": tokens}
    return adversarial_eps(attention, dim, beta, **sizes, **adversarial), STARTS
