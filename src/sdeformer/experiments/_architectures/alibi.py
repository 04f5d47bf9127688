"""The ALiBi check of report part ``architectures`` (BEYOND section 7): the retrieval profile of causal ALiBi on
the circle, measured by the exact estimator (``theory._retrieval.measure``) and predicted, and the check of its
recency turn-over time, whose wrong models (the ALiBi lambda x 0.8 .. 1.2) are re-run and judged with their
own tolerance (``checks._record.Check.with_catch``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import torch

from ...attention._alibi import ALiBiAttention
from ...checks._power import Plan
from ...checks._record import SIGMAS, Check
from ...dynamics._discrete import StochasticTransformer
from ...theory import _retrieval as retrieval

F64 = torch.float64
BOOTSTRAP = 200  # resamples of the runs for the s.e. of a crossing time
REPORT_TIMES = tuple(1.0 + 0.25 * k for k in range(11))  # 1.0 .. 3.5: the crossings at N / 2 with lambda x 0.8
# come before 1.75 (the measured slopes at 32 tokens are negative from 1.75 on), so a grid from 1.75 left that
# wrong model's own tolerance undefined; the layers (to 3.5) and the cost are the same


def _pooled_slopes(samples: np.ndarray, tokens: int, sources: Sequence[int], lowest: float) -> np.ndarray:
    """The measured end slope averaged over the last quarter of targets ``(T,)``, from samples ``(T, B, N, P)``."""
    mean = samples.mean(1)  # (T, N, P)
    src = np.asarray(sources)
    out = []
    for prof in mean:
        per = []
        for i in range(tokens - tokens // 4, tokens):
            keep = src < i
            pos = (src[keep] + 1) / (i + 1)
            per.append(retrieval.end_slope((i + 1) * prof[i, keep], pos, lowest))
        out.append(float(np.mean(per)))
    return np.array(out)


def alibi_profile(tokens: int, samples: int, times, *, beta=1.0, lam=1.0, dt=0.05, lowest=0.6, noise=None, seed=0):
    """The retrieval profile of causal ALiBi on the circle, measured (``retrieval.measure``) and predicted: the
    pooled end slopes against time, their zero crossing (bootstrap s.e.), the profile of the last token at each
    time (measured and theory) and its mean attention weights over positions."""
    slope = lam / tokens
    layers = round(times[-1] / dt)
    model = StochasticTransformer(layers, layers * dt, noise=noise, attention=ALiBiAttention(beta, 1.0, slope))
    first = tokens - tokens // 4
    sources = list(range(math.ceil(lowest * (first + 1)) - 1, tokens - 1))
    gen = torch.Generator().manual_seed(seed)
    theta0 = torch.rand(samples, tokens, generator=gen, dtype=F64) * 2 * math.pi  # (B, N)
    seeds = [seed * 100_003 + b for b in range(samples)]
    draws, states = retrieval.measure(model, theta0, times, sources, seeds)
    draws = draws.numpy()
    measured = _pooled_slopes(draws, tokens, sources, lowest)
    rng = np.random.default_rng(seed)
    resampled = (draws[:, rng.integers(0, samples, samples)] for _ in range(BOOTSTRAP))
    boot = [retrieval.crossing(times, _pooled_slopes(d, tokens, sources, lowest)) for d in resampled]
    targets = range(first, tokens)
    predicted = retrieval.predicted_slopes(times, targets, tokens, beta, slope, lowest)
    paper = retrieval.predicted_slopes(times, targets, tokens, beta, slope, lowest, kernel="paper")
    fine = np.linspace(times[0] / 100, times[-1], 200)  # the wrong lambda turns over long before times[0]
    unscaled = retrieval.predicted_slopes(fine, targets, tokens, beta, slope / tokens, lowest)
    pos = (np.asarray(sources) + 1) / tokens
    attention = ALiBiAttention(beta, 1.0, slope).weights(states)[0][..., -1, :].mean(1)  # (T, N)
    return {
        "tokens": tokens, "samples": samples, "beta": beta, "lam": lam, "times": list(times),
        "measured_slopes": measured.tolist(), "predicted_slopes": predicted.tolist(),
        "measured_crossing": retrieval.crossing(times, measured), "crossing_se": float(np.nanstd(boot)),
        "predicted_crossing": retrieval.crossing(times, predicted), "t_crit": retrieval.threshold(beta, lam),
        "paper_crossing": retrieval.crossing(times, paper), "unscaled_crossing": retrieval.crossing(fine, unscaled),
        "t_crit_paper_kernel": retrieval.threshold(beta, lam, kernel="paper"),
        "positions": pos.tolist(), "profile_measured": (tokens * draws.mean(1)[:, -1, :]).tolist(),
        "profile_theory": [retrieval.profile(pos, beta, t, lam).tolist() for t in times],
        "attention": attention.tolist(),
    }  # fmt: skip


def _crossing_check(full: dict, half: dict, predicted: float) -> Check:
    """The measured crossing of ``full`` against ``predicted``, its tolerance from its own runs: 3 bootstrap s.e.
    + the token-halving bias |crossing(N) - crossing(N/2)| (``half``)."""
    bias = abs(full["measured_crossing"] - half["measured_crossing"])
    return Check(
        model="alibi", setting={k: full[k] for k in ("tokens", "samples", "beta", "lam")},
        quantity="recency turn-over time", predicted=predicted,
        source="pooled end slope of the truncated Fourier series (arXiv:2605.09213), softmax rates",
        measured=full["measured_crossing"], standard_error=full["crossing_se"],
        tolerance=SIGMAS * full["crossing_se"] + bias,
        tolerance_rule="3 s.e. (bootstrap over runs) + |crossing(N) - crossing(N/2)| (token-halving bias)",
        step_bias=bias, extra={"t_crit": full["t_crit"], "paper_kernel_crossing": full["paper_crossing"]},
    )  # fmt: skip


def alibi_check(full: dict, half: dict, wrong: Callable[[float, int], Sequence[dict]], power: Plan) -> Check:
    """Measured against predicted crossing of the pooled end slope (ALiBi threshold of arXiv:2605.09213), with
    the halved token count as the discretization bias. Power: ``wrong(s, k)`` (the profiles at N and N/2 of
    the model re-run with its ALiBi lambda x (1 + s) on its k-th seed), each judged with its own tolerance
    against this prediction (``Check.with_catch`` with the power ``Plan``). The stated wrong input, the ALiBi
    slope read as the paper's lambda (not rescaled by N), and the crossing predicted with the paper's
    unnormalized kernel rates are kept beside."""
    check = _crossing_check(full, half, full["predicted_crossing"])
    unscaled = full["unscaled_crossing"]
    caught = abs(check.measured - unscaled) > check.tolerance
    check = replace(check, extra={**check.extra, "wrong_input": {"lambda per token": unscaled, "caught": caught}})

    def judge(s: float, k: int) -> Check:
        return _crossing_check(*wrong(s, k), check.predicted)  # pyright: ignore[reportCallIssue]

    return check.with_catch(lambda s: f"ALiBi lambda x {1 + s:g} (re-run)", judge, power)
