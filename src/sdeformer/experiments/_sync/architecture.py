"""Where the synchronization theorem applies, part by part (THEORY section 5; BEYOND sections 6-9 and 11).

The theorem is about one model: the time-homogeneous SDE on the unit sphere

    dX_i = [P_{X_i} Attn(mu_t^N, X_i) - kappa(1) (d-1)/2 X_i] dt + P_{X_i} dW(t, X_i),

with the all-to-all softmax attention ``Attn(mu, x)`` of the tokens' empirical measure (exchangeable tokens) and a
Brownian field of kernel kappa (the MLP's); it bounds E E_beta(t) by exp((eps + lambda_bar') t) E E_beta(0) if
the field is not odd, lambda_bar < 0 and eps + lambda_bar' < 0 (eps certified for V = s I, Q^T K = beta I:
``eps``). This module is the one place that says, for the parts beyond the paper that a sync check or a phase
cell runs with (``norm``, ``alibi``, ``mask``, ``causal``, ``cross``: the config fields of BEYOND sections 6-9),
whether that model is still the theorem's, and why not (``part_reasons``), and for the kernel conditions
(``kernel_reasons``); ``cell_verdict`` turns them into a phase cell's verdict. Where a part breaks the
assumptions the energies are still simulated and reported; only the theorem's verdict is "not applicable".

``given`` keeps the parts set off their defaults (so a default run's folder and cache keys stay as they were),
``attention_name`` names the attention of ``registry.ATTENTIONS`` they need, ``model_config`` validates them as
``simulate`` does (``config.ModelConfig``). Torch-free at import (the command line's ``--help``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...registry import NORMS

if TYPE_CHECKING:
    from ...config import ModelConfig
    from ...core._kernel import KernelTheory

NOT_APPLICABLE = "not applicable"
CELL_VERDICTS = ("synchronizes", "does not", NOT_APPLICABLE)  # a phase cell's theorem verdict
DEFAULTS: dict[str, Any] = {"norm": "post", "alibi": 0.0, "mask": "", "causal": False, "cross": 0}  # the paper's
NORM_REASONS = {  # derived from each scheme's limit (BEYOND section 6, dynamics._norms.limits)
    "pre": "the radius grows (dr = <theta, A> dt + ...), so the direction's drift and noise decay like 1/r and 1/r^2",
    "peri": "the radius grows like t, so the direction's drift and noise decay like 1/r and 1/r^2",
    "mix": "after the switch the radius grows (Pre-LN), so the direction's coefficients decay like 1/r",
    "ngpt": "its limit stays on the sphere, but its drift is alpha A / |A| (not the softmax Attn; not Lipschitz where "
    "A = 0) and its noise the normalized field (kernel alpha^2 c_d(rho) / d, not kappa): the theorem's lambda_bar, "
    "lambda_bar' and eps are not this model's",
    "sqrt": "the coefficients decay like 1/sqrt(1 + t) and 1/(1 + t): not a time-homogeneous SDE",
}
OTHER_NORM = "no synchronization rule is derived for this scheme (the theorem's SDE is Post-LN's)"
ORDER = "the drift depends on the token order, not on the empirical measure alone (Attn(mu, x))"
ENERGY = "E_beta can grow along its noiseless flow even for V = I (BEYOND section 11): no eps is certified"
PART_REASONS = {
    "alibi": f"ALiBi: the positional bias -lambda |i - j| breaks the tokens' exchangeability: {ORDER}; {ENERGY}",
    "mask": f"a graph mask: token i attends to its neighbours only, not all-to-all: {ORDER}; {ENERGY}",
    "causal": f"a causal mask: token i attends to j <= i only: {ORDER}; {ENERGY}",
    "cross": "two species: the encoder never attends to the decoder, the decoder attends causally to itself and to "
    f"the encoder in a second softmax: not one all-to-all softmax; {ENERGY}",
}


def given(values: Mapping[str, Any]) -> dict[str, Any]:
    """The architecture parts among ``values`` that are set (not None) and off their defaults."""
    return {k: values[k] for k in DEFAULTS if values.get(k) is not None and values[k] != DEFAULTS[k]}


def attention_name(parts: Mapping[str, Any]) -> str:
    """The attention of ``registry.ATTENTIONS`` that reads these parts: ALiBi for a slope, the masked softmax for
    a graph or two species, else the paper's softmax (which takes the causal mask itself)."""
    p = {**DEFAULTS, **given(parts)}
    return "alibi" if p["alibi"] else "graph" if p["mask"] or p["cross"] else "softmax"


def config_fields(parts: Mapping[str, Any]) -> dict[str, Any]:
    """The ``config.ModelConfig`` fields of the parts: those set, and the attention that reads them (none for the
    default softmax), e.g. ``{"mask": "path", "attention": "graph"}`` (a sweep spec's base)."""
    name = attention_name(parts)
    return given(parts) | ({} if name == "softmax" else {"attention": name})


def model_config(parts: Mapping[str, Any], **fields: Any) -> ModelConfig:
    """The ``config.ModelConfig`` of ``fields`` and ``config_fields(parts)``: the parts validated as ``simulate``
    validates them (ConfigError naming norm, alibi, mask, causal or cross)."""
    from ...config import ModelConfig

    return ModelConfig(**fields, **config_fields(parts))


def all_to_all(mask: str, tokens: int) -> bool:
    """Whether the graph ``mask`` on ``tokens`` tokens lets every token attend to every token (the complete
    graph, by name or from a file): then the masked attention is the paper's all-to-all softmax."""
    from ...attention._masks import graph_adjacency

    return not mask or bool(graph_adjacency(mask, tokens).all())


def part_reasons(parts: Mapping[str, Any], tokens: int) -> dict[str, str]:
    """Why the theorem does not apply to the model with these parts, ``{part: reason}`` (empty: it can): any
    scheme but Post-LN (its limit, BEYOND 6), an ALiBi slope, a graph mask other than the complete graph, the
    causal mask, two species. Raises ConfigError for an unknown scheme."""
    p = {**DEFAULTS, **given(parts)}
    scheme = NORMS[str(p["norm"]).partition(":")[0]].name  # ConfigError naming norm for an unknown one
    out = {} if scheme == "post" else {"norm": f"{p['norm']}: " + NORM_REASONS.get(scheme, OTHER_NORM)}
    off = {"alibi": p["alibi"], "mask": not all_to_all(p["mask"], tokens), "causal": p["causal"], "cross": p["cross"]}
    return out | {name: PART_REASONS[name] for name, on in off.items() if on}


def kernel_reasons(theory: KernelTheory, eps: float) -> dict[str, str]:
    """Why the theorem's kernel conditions fail for ``theory`` (THEORY sections 2 and 5.2) with the attention's
    ``eps``, ``{condition: reason}`` (empty: they hold): an odd field, lambda_bar >= 0, eps + lambda_bar' >= 0."""
    out = {}
    if theory.odd_field:
        out["odd_field"] = "the field is odd (an odd activation with sU = sW = 0): two antipodal clusters"
    if not theory.lambda_bar < 0:
        out["lambda_bar"] = f"lambda_bar = {theory.lambda_bar:.4g} >= 0: the kernel criterion fails"
    if not eps + theory.lambda_bar_prime < 0:
        out["eps"] = f"eps + lambda_bar' = {eps + theory.lambda_bar_prime:.4g} >= 0: the bound does not decay"
    return out


def cell_verdict(reasons: Mapping[str, str], theory: KernelTheory, scale: float) -> str:
    """A phase cell's verdict (CELL_VERDICTS) from all its ``reasons`` (``part_reasons`` and ``kernel_reasons``):
    "synchronizes" where the theorem applies; "does not" for a noise-only cell (``scale`` 0) of the theorem's
    model whose field fails the kernel criterion (odd, or lambda_bar >= 0: THEORY section 2); else "not
    applicable" (a part breaks the assumptions, or the attention may synchronize what the noise does not)."""
    if not reasons:
        return "synchronizes"
    if scale == 0 and not set(reasons) & set(DEFAULTS) and not theory.synchronizes:
        return "does not"
    return NOT_APPLICABLE
