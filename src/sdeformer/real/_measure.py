"""The measurement of a real model held against the theory (THEORY sections 1, 2 and 5; BEYOND section 1).

``measure`` captures the sublayers of a local model on a corpus (``load.capture``) and returns one plain-JSON
record: per-layer statistics of the stream (``stats``), the common share of the MLP output, the empirical kernel
against kappa and independent noise (``kernel``), the attention's fit (``attention``) and the residual variance
law; ``controls`` rerun it on the model with its MLPs shuffled across layers and on an untrained copy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..core._errors import ConfigError
from ..core._threads import torch_threads
from . import _load as load
from ._attention import fit_attention
from ._flags import clipped, on_boundary, sign_below, synchronization, trimmed_mean_cos
from ._kernel import held_out, kernel_sums, nan_to_none
from ._kernel_ci import r2_intervals
from ._reference import reference
from ._stats import layer_values, share_statistics, slope, summarise, variance_law
from ._tokens import check_rule, massive, select

CONTROLS = ("trained", "shuffled", "untrained")
FULL_FIT_MAX_DIM = 512  # SmolLM2 (d = 576, 30 blocks): its full fit alone would take hours on 2 busy cores
REFERENCE_KEYS = tuple(f"common_share_{m}{end}" for m in ("theory", "narrowest") for end in ("", "_lo", "_hi")) + (
    "kernel_verdict",
    "kernel_inside_fraction",
    "share_verdict",
)
ACTIVATION = "gelu"


def settings(
    model: str = load.MINILM, text: str | None = None, sentences: int = 256, seed: int = 0, tokens: str = "content"
) -> dict:
    """The settings that determine a record (what ``--out`` is claimed for, with its inputs' content hashes)."""
    if int(sentences) < 2:
        raise ConfigError("sentences", sentences, "must be an integer >= 2")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise ConfigError("seed", seed, "must be an integer in [0, 2^32)")
    return {
        "model": str(model),
        "text": None if text is None else str(text),
        "sentences": int(sentences),
        "seed": seed,
        "tokens": check_rule(tokens),
    }


def controlled(model: torch.nn.Module, control: str, seed: int = 0) -> torch.nn.Module:
    """The model itself (``trained``), a copy with the MLP weights of its blocks permuted cyclically across layers
    (``shuffled``), or an untrained copy of the same shape (``untrained``, seeded)."""
    if control == "trained":
        return model
    if control not in CONTROLS:
        raise ConfigError("control", control, f"one of {list(CONTROLS)}")
    if control == "untrained":
        torch.manual_seed(seed)
        return type(model)(model.config).eval()
    other = copy.deepcopy(model)
    lay = load.layout(other)
    owners = [(m, o) for m, o in zip(lay.mlp_in, lay.mlp_out, strict=True)]
    states = [(copy.deepcopy(i.state_dict()), copy.deepcopy(o.state_dict())) for i, o in owners]
    for k, (i, o) in enumerate(owners):
        si, so = states[(k + 1) % len(states)]
        i.load_state_dict(si)
        if o is not i:
            o.load_state_dict(so)
    return other


def analyse(cap: load.Capture, d: int, causal: bool, seed: int = 0) -> dict[str, Any]:
    """The record's measured part from a ``Capture`` (any model, real or synthetic)."""
    values = layer_values(cap.hidden)
    stats = {name: summarise(v, seed) for name, v in values.items()}
    share = share_statistics(cap.mlp_out, seed)
    sums = kernel_sums(cap.mlp_in, cap.mlp_out)
    kern = held_out(sums, d, ACTIVATION, seed)
    att = fit_attention(cap.hidden, cap.attn, causal, seed=seed)
    r2 = r2_intervals(sums, d, ACTIVATION, seed)
    ref = reference(cap.mlp_in, cap.mlp_out, kern, d, ACTIVATION, seed)
    out = {
        "mean_cos": stats["mean_cos"]["mean"],
        "common_share": share["mean"],
        "attention_beta": att["beta"],
        "attention_explained": att["explained"],
        "attention_scale": att["scale"],
        **{f"attention_{k}_interval": att[f"{k}_interval"] for k in ("beta", "explained", "scale")},
        "kernel_share": kern["share"],
        "kernel_share_interval": kern["share_interval"],
        "statistics": stats,
        "mean_cos_slope": slope(values["mean_cos"], seed),
        "common_share_interval": [share["low"], share["high"]],
        "kernel": nan_to_none(kern),
        "kernel_fit_intervals": {k: r2[f"{k}_fit"] for k in ("theory", "partial")},
        "variance_law": variance_law(cap.hidden, seed),
        "reference": ref,
        **trimmed_mean_cos(cap.hidden, seed),
        **{k: ref[k] for k in REFERENCE_KEYS},
    }
    for kind in ("theory", "independent", "partial"):
        out[f"kernel_r2_{kind}"] = [row[f"r2_{kind}"] for row in kern["layers"]]
        out[f"kernel_r2_{kind}_interval"] = r2[kind]
    return out


def verdict(record: dict, d: int) -> dict:
    """The theory's reading of the fitted kernels (THEORY section 2: synchronization needs lambda_bar < 0; BEYOND
    section 1: a share rho < 1 keeps tokens apart) and whether the tokens' mean cosine grows with depth (its slope
    per layer with its interval). Each per-block verdict is True or False when the 95 % interval decides it, None
    when the interval holds 0 (or 1), when the fit sits on the corner sU = sW = 0 (``kernel_fit_boundary_*``: not
    identified) or when the share is a clip (``partial_share_clipped``). ``tokens_synchronize`` is set by
    ``_flags.synchronization`` (it needs the untrained control)."""
    fits = record["kernel_fit_intervals"]
    layers = record["kernel"]["layers"]
    corner = {k: [on_boundary(row[f"fit_{k}"]) for row in layers] for k in ("theory", "partial")}
    lam = [row["lambda_bar"] for row in layers]
    scaled = {k: [row[f"lambda_bar_scaled_{k}"] for row in layers] for k in ("theory", "partial")}
    share = [row["fit_partial"]["share"] for row in layers]
    clip = clipped(share)
    slope_ = record["mean_cos_slope"]
    return {
        "lambda_bar": lam,
        "lambda_bar_interval": fits["theory"]["lambda_bar"],
        "kernel_fit_boundary_theory": corner["theory"],
        "kernel_fit_boundary_partial": corner["partial"],
        "theory_synchronizes": sign_below(fits["theory"]["lambda_bar"], 0.0, corner["theory"]),
        **{f"lambda_bar_scaled_{k}": v for k, v in scaled.items()},
        **{f"lambda_bar_scaled_{k}_interval": fits[k]["lambda_bar_scaled"] for k in scaled},
        "partial_synchronizes": sign_below(fits["partial"]["lambda_bar_scaled"], 0.0, corner["partial"]),
        "partial_share": share,
        "partial_share_interval": fits["partial"]["share"],
        "partial_share_clipped": clip,
        "share_below_one": sign_below(fits["partial"]["share"], 1.0, clip),
        "mean_cos_slope": slope_["mean"],
        "mean_cos_slope_interval": [slope_["low"], slope_["high"]],
        "mean_cos_grows": True if slope_["low"] > 0 else False if slope_["high"] <= 0 else None,
        "dim": d,
    }


SEPARATED = ("common_share", "attention_explained", "kernel_r2_theory", "kernel_r2_partial")


def _intervals(part: dict) -> dict[str, np.ndarray]:
    """The 95 % intervals ``(2, layers)`` of a record part's per-layer quantities and of the variance-law rate."""
    out = {name: np.array([row["low"], row["high"]]) for name, row in part["statistics"].items()}
    out.update({name: np.asarray(part[f"{name}_interval"]) for name in SEPARATED})
    out["variance_lambda"] = np.asarray(part["variance_law"]["lambda_interval"])[:, None]
    return out


def separated(trained: dict, control: dict) -> dict[str, list[int]]:
    """Per quantity, the layers (0-based index into its list) where the control's 95 % interval and the trained
    model's are disjoint: which statistics tell the control apart."""
    mine, theirs = _intervals(trained), _intervals(control)
    return {
        name: np.flatnonzero((theirs[name][1] < lo) | (theirs[name][0] > hi)).tolist()
        for name, (lo, hi) in mine.items()
    }


def measure(
    model: str | Path = load.MINILM,
    text: str | Path | None = None,
    sentences: int = 256,
    *,
    controls: tuple[str, ...] = ("trained",),
    seed: int = 0,
    tokens: str = "content",
    loaded: tuple[Any, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """The record of ``model`` on ``text`` (one sentence per line; default: the installed Shakespeare), one part
    per control of ``controls``, every statistic on the tokens of the rule ``tokens`` (``_tokens.TOKEN_RULES``;
    the massive tokens and ``common_share_all`` on all tokens). ``loaded``: a preloaded (tokenizer, model).
    ConfigError / MissingPackage on bad input (see ``load``)."""
    cfg = settings(str(model), None if text is None else str(text), sentences, seed, tokens)
    tokenizer, net = loaded if loaded is not None else load.load_model(model)
    lay = load.layout(net)
    lines = (
        load.text_sentences(text, sentences) if text is not None else load.shakespeare_sentences(sentences, tokenizer)
    )
    if len(lines) < 2:
        raise ConfigError("text", str(text), "needs at least 2 sentences")
    d = int(net.config.hidden_size)
    record: dict[str, Any] = {
        "settings": cfg,
        "model_type": lay.model_type,
        "dim": d,
        "layers": len(lay.attn),
        "token_rule": tokens,
        "causal": lay.causal,
    }
    for control in controls:
        cap = load.capture(tokenizer, controlled(net, control, seed), lines, progress=progress)
        with torch_threads(1):  # many small tensors: one intra-op thread is fastest, and far faster on a busy machine
            part = _analysed(select(cap, tokens), d, lay, control, seed)
            part.update(massive(cap.mlp_out, cap.special, seed))
            every = share_statistics(cap.mlp_out, seed)
            part["common_share_all"] = every["mean"]
            part["common_share_all_interval"] = [every["low"], every["high"]]
        if control == "trained":
            record.update(part)
        else:
            if "statistics" in record:
                part["separated"] = separated(record, part)
            record.setdefault("controls", {})[control] = part
    for part in (record, *record.get("controls", {}).values()):
        if "verdict" in part:
            untrained = record.get("controls", {}).get("untrained") if part is record else None
            part["verdict"].update(synchronization(part, untrained))
    record["sentences"] = len(lines)
    record["note"] = f"{record.get('truncated', 0)} sentence(s) truncated to the model's context"
    return record


def _analysed(cap: load.Capture, d: int, lay: load.Layout, control: str, seed: int) -> dict[str, Any]:
    """``analyse`` with the verdict, the counts and, for the trained model, the full ``Q^T K`` fit and the fitted
    stochastic transformer."""
    part = analyse(cap, d, lay.causal, seed)
    part["verdict"] = verdict(part, d)
    part["truncated"] = cap.truncated
    part["tokens"] = int(sum(h.shape[-2] for h in cap.hidden))
    part["sentences_measured"] = len(cap.hidden)
    if control == "trained":
        from ._attention_full import fit_full
        from ._fitted import fitted_model

        if d <= FULL_FIT_MAX_DIM:  # d^2 parameters per block, up to 200 Adam steps over all blocks
            part["attention_full"] = fit_full(cap.hidden, cap.attn, part["attention_beta"], lay.causal, seed=seed)
        else:
            part["attention_full_skipped"] = f"d = {d} > {FULL_FIT_MAX_DIM}: the full Q^T K fit is not run"
        part["fitted"] = fitted_model(cap, {**part, "dim": d}, seed, lay.causal)
    return part
