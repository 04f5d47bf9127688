"""``check_part(part)``: the checks every part of the family must pass, in the spirit of scikit-learn's
``check_estimator`` (docs/extending.md). A part is checked by the contracts it implements (``contracts``):

- every part: its outputs have the shape and dtype its contract states (below) and are finite, and a batched
  call equals the unbatched calls with the same seeds (element k of a batch draws what the run with seed k draws);
- ``NoiseField.increment(y, dt, source)``: ``(..., N, d) -> (..., N, d)``, the increment xi of one layer;
- ``Variance.variance(y)``: ``(..., N, d) -> (..., N, 1)`` or a scalar, k(y, y) = tr(P_y C(y, y)) / (d - 1),
  checked against the Monte Carlo second moment of the tangent increments (the Ito correction of THEORY
  section 3, -(d-1)/2 k(y, y) y, needs exactly this number);
- ``PairCovariance.pair_covariance(x)``: ``(..., N, d) -> (..., N, N, d, d)``, C_ij = E[xi_i xi_j^T] / dt, checked
  entry by entry against the Monte Carlo one-step moments (BEYOND section 0);
- ``OnePoint.one_point(y, dt, source)``: ``(..., N, d) -> (..., N, d)``, one independent draw per token with each
  token's own law, checked against the diagonal blocks C_ii (what partial sharing mixes in, BEYOND section 1);
- ``AttentionDrift.drift(x, source)``: ``(..., N, d) -> (..., N, d)``;
- an observable ``fn(x, beta, spec)``: ``(..., N, d), (...) -> (...)``;
- a registered part's declared parameters (``check_part(part, entry="KIND:NAME")``, or ``check_params`` alone):
  each default lies in its range and builds the model, and a config with the parameter NaN, of the wrong type,
  below ``low`` or above ``high`` is refused with a ConfigError naming ``KIND.PARAM``.

A failed check raises ``PartCheckError`` naming the part, the check and the numbers; ``check_part`` returns the
names of the checks that ran. Monte Carlo checks compare at ``z`` standard errors over ``copies`` draws: with the
defaults a 10 % error in a covariance or a variance is rejected (tests/test_check_part.py shows it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .config import ModelConfig
from .contracts import AttentionDrift, NoiseField, OnePoint, PairCovariance, Variance, missing
from .core._errors import ConfigError
from .core._rng import Streams
from .core._sphere import project, tangent
from .noise._sources import BulkSource
from .registry import ATTENTIONS, NOISES, NORMS

DT = 1e-2  # the step of the one-step checks (the moments are per unit time)


class PartCheckError(AssertionError):
    """A part failed one of ``check_part``'s checks."""

    def __init__(self, part: Any, check: str, detail: str):
        super().__init__(f"{_name(part)} fails {check}: {detail}")
        self.check = check


def check_part(
    part: Any,
    *,
    entry: str | None = None,
    tokens: int = 3,
    dim: int = 3,
    copies: int = 40000,
    z: float = 6.0,
    seed: int = 0,
) -> list[str]:
    """Run every check that applies to ``part`` (a built noise field, attention drift or observable function);
    the tokens are ``tokens`` random unit vectors in R^dim (float64). ``entry`` (``"noise:NAME"``,
    ``"attention:NAME"`` or ``"norm:NAME"``): the part's registry entry, whose declared parameters are checked
    too (``check_params``). Returns the names of the checks run; raises ``PartCheckError`` for the first that
    fails and TypeError for an object that is no part."""
    x = project(torch.randn(tokens, dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
    ran: list[str] = []
    if not missing(part, NoiseField):
        ran += _noise_checks(part, x, copies, z, seed)
    elif not missing(part, AttentionDrift):
        ran += _attention_checks(part, x, seed)
    elif callable(part):
        ran += _observable_checks(part, x)
    else:
        raise TypeError(f"{_name(part)} is no part: it has no increment(), drift() or __call__()")
    if entry is not None:
        kind, _, name = entry.partition(":")
        ran += check_params(kind, name)
    return ran


def check_params(kind: str, name: str) -> list[str]:
    """The parameters the registered part ``name`` of ``kind`` (noise, attention or norm) declares: each default
    is of its type and in its range and a model with it builds; NaN, a string, a value below ``low`` and one
    above ``high`` are each refused by ``ModelConfig`` with a ConfigError naming ``KIND.PARAM``. Returns the
    names of the checks run; raises ``PartCheckError`` for the first that fails."""
    registries = {"noise": NOISES, "attention": ATTENTIONS, "norm": NORMS}
    if kind not in registries:
        raise TypeError(f"entry {kind}:{name}: the kind must be one of {sorted(registries)}")
    declared = registries[kind][name]
    ran = []
    for param in declared.params:
        key = f"{kind}.{param.name}"
        try:
            param.check(key, param.default)
            ModelConfig.from_mapping({kind: name, key: param.default}).build()
        except ConfigError as exc:
            raise PartCheckError(declared.name, f"{key}: default", f"{param.default!r} is refused: {exc}") from exc
        for bad, why in _bad_values(param):
            try:
                ModelConfig.from_mapping({kind: name, key: bad})
            except ConfigError as exc:
                if key not in str(exc):
                    raise PartCheckError(declared.name, f"{key}: {why}", f"the error does not name it: {exc}") from exc
                continue
            raise PartCheckError(declared.name, f"{key}: {why}", f"{bad!r} was accepted")
        ran.append(f"{key}: default builds; {', '.join(why for _, why in _bad_values(param))} refused")
    return ran


def _bad_values(param: Any) -> list[tuple[Any, str]]:
    """Values ``param`` must refuse, with what makes each wrong."""
    if param.kind in (str, bool):
        return [(1.5 if param.kind is str else "yes", "wrong type")]
    out: list[tuple[Any, str]] = [(float("nan"), "NaN"), ("1", "wrong type")]
    if param.low is not None:
        out.append((param.low - max(1.0, abs(param.low)), "below low"))
    if param.high is not None:
        out.append((param.high + max(1.0, abs(param.high)), "above high"))
    return out


def _noise_checks(part: Any, x: torch.Tensor, copies: int, z: float, seed: int) -> list[str]:
    ran = ["increment: shape, dtype, finite; batched equals unbatched"]
    _same_batched(part, "increment", lambda y, s: part.increment(y, DT, s), x, seed, random=True)
    draws = part.increment(x.expand(copies, *x.shape).clone(), DT, BulkSource.seeded(seed + 1, (copies,)))
    moments = _second_moments(draws)  # (2, N, N, d, d): mean and s.e. of xi_i xi_j^T / dt
    if not missing(part, PairCovariance):
        cov = part.pair_covariance(x)
        _shape(part, "pair_covariance", cov, (*x.shape[:-1], x.shape[-2], x.shape[-1], x.shape[-1]))
        _close(part, "pair_covariance against the one-step moments", moments[0], moments[1], cov, z)
        ran.append("pair_covariance against the one-step moments (BEYOND 0)")
    if not missing(part, Variance):
        var = torch.as_tensor(part.variance(x), dtype=x.dtype).expand(x.shape[:-1] + (1,))
        tang = tangent(x, draws)  # (R, N, d)
        k = (tang * tang).sum(-1) / (DT * (x.shape[-1] - 1))  # (R, N)
        mean, se = k.mean(0), k.std(0) / math.sqrt(copies)  # (N,)
        _close(part, "variance against E|P xi|^2 / ((d - 1) dt)", mean, se, var[..., 0], z)
        ran.append("variance against the Ito correction's second moment (THEORY 3)")
    if not missing(part, OnePoint):
        _same_batched(part, "one_point", lambda y, s: part.one_point(y, DT, s), x, seed, random=True)
        single = part.one_point(x.expand(copies, *x.shape).clone(), DT, BulkSource.seeded(seed + 2, (copies,)))
        own = _second_moments(single)
        diag = torch.arange(x.shape[-2])
        _close(
            part, "one_point's law against the same token's law", own[0][diag, diag], own[1][diag, diag],
            moments[0][diag, diag], z, other_se=moments[1][diag, diag],
        )  # fmt: skip
        ran.append("one_point against each token's law (BEYOND 1)")
    return ran


def _attention_checks(part: Any, x: torch.Tensor, seed: int) -> list[str]:
    _same_batched(part, "drift", lambda y, s: part.drift(y, s), x, seed, random=False)
    return ["drift: shape, dtype, finite; batched equals unbatched"]


def _observable_checks(part: Any, x: torch.Tensor) -> list[str]:
    batch = torch.stack([x, project(x.flip(0))])  # (2, N, d)
    beta = torch.ones(2, dtype=x.dtype)
    out = torch.as_tensor(part(batch, beta, None))
    _shape(part, "observable", out, (2,))
    alone = torch.as_tensor(part(batch[1:], beta[1:], None))
    _close(part, "observable: batched equals unbatched", out[1:], torch.zeros_like(alone), alone, 0.0, atol=1e-12)
    return ["observable: shape (...,); batched equals unbatched"]


def _same_batched(part: Any, what: str, call: Callable, x: torch.Tensor, seed: int, random: bool) -> None:
    """``call(y, source)`` on a batch of two (x and another state) equals the two unbatched calls with the same
    seeds; the output has the input's shape and dtype and is finite."""
    batch = torch.stack([x, project(x.roll(1, -1))])  # (2, N, d)
    seeds = [seed + 10, seed + 11]
    out = call(batch.clone(), Streams(seeds, (2,)))
    _shape(part, what, out, tuple(batch.shape))
    for k in range(2):
        alone = call(batch[k].clone(), Streams(seeds[k], ()))
        if not torch.allclose(out[k], alone, rtol=1e-9, atol=1e-12):
            gap = float((out[k] - alone).abs().max())
            raise PartCheckError(part, f"{what}: batched equals unbatched", f"element {k} differs by {gap:.3g}")
    if random and torch.equal(call(x.clone(), Streams(seed, ())), call(x.clone(), Streams(seed + 1, ()))):
        raise PartCheckError(part, f"{what}: draws from the source", "two seeds gave the same numbers")


def _second_moments(draws: torch.Tensor) -> torch.Tensor:
    """Mean and standard error of xi_i xi_j^T / dt over R draws ``(R, N, d)`` -> ``(2, N, N, d, d)``."""
    outer = draws[:, :, None, :, None] * draws[:, None, :, None, :] / DT  # (R, N, N, d, d)
    return torch.stack([outer.mean(0), outer.std(0) / math.sqrt(draws.shape[0])])


def _shape(part: Any, what: str, out: Any, shape: tuple[int, ...]) -> None:
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != shape:
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise PartCheckError(part, f"{what}: shape", f"returned {got}, the contract states {shape}")
    if out.dtype != torch.float64:
        raise PartCheckError(part, f"{what}: dtype", f"returned {out.dtype} for float64 tokens")
    if not torch.isfinite(out).all():
        raise PartCheckError(part, f"{what}: finite", "returned NaN or inf")


def _close(
    part: Any, what: str, mean: torch.Tensor, se: torch.Tensor, want: torch.Tensor, z: float,
    other_se: torch.Tensor | None = None, atol: float = 1e-10,
) -> None:  # fmt: skip
    """|mean - want| <= z * se (+ atol) elementwise (``other_se``: the s.e. of ``want`` when it is estimated too)."""
    se = se if other_se is None else torch.sqrt(se**2 + other_se**2)
    gap = (mean - want).abs() - z * se
    if (gap > atol).any():
        k = int(gap.flatten().argmax())
        m, w, s = (float(t.flatten()[k]) for t in (mean, want, se))
        raise PartCheckError(part, what, f"measured {m:.4g} +- {s:.2g}, declared {w:.4g} (beyond {z:g} s.e.)")


def _name(part: Any) -> str:
    return getattr(part, "__name__", type(part).__name__)
