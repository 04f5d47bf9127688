"""Where a real model's sublayers live (THEORY section 1: the layer ``Y = LN(X + dt Attn)``,
``X' = LN(Y + sqrt(dt) G(Y))``), for every layout ``sdeformer real`` reads.

Per block: the module whose output is the attention's contribution ``a_l``, the module whose input is the MLP's
input ``y_l`` and the one whose output is the MLP's output ``f_l``; the norms of a Post-LN model; the final norm
of a Pre-LN one (the stream is read before it). The stream is ``h_{l+1} = LN2(LN1(h_l + a_l) + f_l)`` (Post-LN)
or ``h_{l+1} = h_l + a_l + f_l`` (Pre-LN, also with GPT-NeoX's parallel residual, whose MLP reads
``LN2(h_l)`` instead of ``LN2(h_l + a_l)``). For a gated MLP (Llama's SwiGLU) ``f_l`` is the MLP's output,
``down(act(gate(y)) * up(y))``, and ``y_l`` its input (the post-attention RMSNorm's output).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..core._errors import ConfigError


@dataclass
class Layout:
    """Where one model's sublayers live: per block the modules whose output is ``a_l``, whose input is ``y_l``
    and whose output is ``f_l``; the norms that recompose the stream; causal attention or not."""

    model_type: str
    post_ln: bool
    attn: list[torch.nn.Module]
    mlp_in: list[torch.nn.Module]
    mlp_out: list[torch.nn.Module]
    norms: list[tuple[torch.nn.Module, torch.nn.Module]]  # post-LN: (LN after attention, LN after MLP)
    final_norm: torch.nn.Module | None  # pre-LN: the norm after the last block (the stream is read before it)
    causal: bool


def _blocks(model: Any, path: str, needs: tuple[str, ...]) -> list | None:
    """The blocks at the dotted ``path`` when every block has the attributes ``needs`` (dotted), else None."""
    blocks: Any = model
    for part in path.split("."):
        blocks = getattr(blocks, part, None)
    if blocks is None or len(blocks) == 0:
        return None

    def has(block, dotted: str) -> bool:
        for part in dotted.split("."):
            block = getattr(block, part, None)
        return block is not None

    return list(blocks) if all(has(b, n) for b in blocks for n in needs) else None


def _bert(model: Any) -> Layout | None:
    layers = _blocks(model, "encoder.layer", ("attention.output.dense", "intermediate", "output.dense"))
    if layers is None:
        return None
    norms = [(b.attention.output.LayerNorm, b.output.LayerNorm) for b in layers]
    mlp = ([b.intermediate for b in layers], [b.output.dense for b in layers])
    return Layout(model.config.model_type, True, [b.attention.output.dense for b in layers], *mlp, norms, None, False)


def _mpnet(model: Any) -> Layout | None:
    layers = _blocks(model, "encoder.layer", ("attention.attn", "attention.LayerNorm", "intermediate", "output.dense"))
    if layers is None:
        return None
    norms = [(b.attention.LayerNorm, b.output.LayerNorm) for b in layers]
    mlp = ([b.intermediate for b in layers], [b.output.dense for b in layers])
    return Layout(model.config.model_type, True, [b.attention.attn for b in layers], *mlp, norms, None, False)


def _distilbert(model: Any) -> Layout | None:
    layers = _blocks(model, "transformer.layer", ("attention", "sa_layer_norm", "ffn", "output_layer_norm"))
    if layers is None:
        return None
    norms = [(b.sa_layer_norm, b.output_layer_norm) for b in layers]
    ffn = [b.ffn for b in layers]
    return Layout(model.config.model_type, True, [b.attention for b in layers], ffn, ffn, norms, None, False)


def _gpt2(model: Any) -> Layout | None:
    layers = _blocks(model, "h", ("attn", "mlp"))
    if layers is None:
        return None
    mlp = [b.mlp for b in layers]
    return Layout(model.config.model_type, False, [b.attn for b in layers], mlp, mlp, [], model.ln_f, True)


def _llama(model: Any) -> Layout | None:
    """Llama, Mistral, SmolLM, Qwen2 (RMSNorm Pre-LN, gated MLP) and GPT-NeoX / Pythia (LayerNorm, parallel
    residual): ``layers.K`` with an attention, an MLP and two input norms."""
    for attn in ("self_attn", "attention"):
        layers = _blocks(model, "layers", (attn, "mlp", "input_layernorm", "post_attention_layernorm"))
        final = getattr(model, "norm", None) or getattr(model, "final_layer_norm", None)
        if layers is not None and final is not None:
            mlp = [b.mlp for b in layers]
            return Layout(model.config.model_type, False, [getattr(b, attn) for b in layers], mlp, mlp, [], final, True)
    return None


def _opt(model: Any) -> Layout | None:
    layers = _blocks(model, "decoder.layers", ("self_attn", "fc1", "fc2", "self_attn_layer_norm", "final_layer_norm"))
    if layers is None or getattr(model.decoder, "project_out", None) is not None:
        return None
    attn, fc = [b.self_attn for b in layers], ([b.fc1 for b in layers], [b.fc2 for b in layers])
    if model.config.do_layer_norm_before:
        return Layout(model.config.model_type, False, attn, *fc, [], model.decoder.final_layer_norm, True)
    norms = [(b.self_attn_layer_norm, b.final_layer_norm) for b in layers]
    return Layout(model.config.model_type, True, attn, *fc, norms, None, True)


FINDERS: dict[str, Callable[[Any], Layout | None]] = {
    "BERT / MiniLM (Post-LN)": _bert,
    "MPNet (Post-LN)": _mpnet,
    "DistilBERT (Post-LN)": _distilbert,
    "GPT-2 (Pre-LN)": _gpt2,
    "Llama / Mistral / SmolLM / Qwen2 (RMSNorm Pre-LN, gated MLP), GPT-NeoX / Pythia (parallel residual)": _llama,
    "OPT (without input/output projections)": _opt,
}
LOOKED_FOR = "; ".join(FINDERS)
REFUSED = {"albert": "shares one block's weights across all layers (no per-layer MLP to measure)"}


def layout(model: Any) -> Layout:
    """The sublayers of a model of one of the ``FINDERS`` layouts; ConfigError naming the model type and the
    supported layouts otherwise (or why the type is refused: ``REFUSED``)."""
    kind = getattr(getattr(model, "config", None), "model_type", type(model).__name__)
    if kind in REFUSED:
        raise ConfigError("model", kind, f"is not supported: {REFUSED[kind]}; supported layouts: {LOOKED_FOR}")
    for find in FINDERS.values():
        found = find(model)
        if found is not None:
            return found
    raise ConfigError("model", kind, f"sublayers not found: not one of the supported layouts ({LOOKED_FOR})")
