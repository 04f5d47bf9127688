"""Layers that carry the theory into ordinary PyTorch transformers (THEORY sections 1, 5 and 7).

- ``CommonNoise``: the MLP sub-step of THEORY section 1 as a residual-stream perturbation,
  ``x <- x + scale sqrt(dt) |x| G(x / |x|)``, with a fresh random MLP ``G`` (``sdeformer.noise._mlp.MLPNoise``)
  per forward pass, per layer and per sequence, shared by all tokens of that sequence (common noise).
  On unit-norm tokens the added vector has per-coordinate variance ``scale^2 dt kappa(1)``; after a
  normalisation it is exactly the theory's update ``LN(y + sqrt(dt) G(y))`` with y = x / |x|.
- ``InteractionEnergy``: ``weight * E_beta`` of the normalised token states (THEORY section 5), a loss term;
  a positive weight penalises token divergence (pushes towards synchronization), a negative one spreads
  the tokens apart.
- ``attach``: forward hooks that add the noise to, and record the energy of, the outputs of the blocks of
  any transformer (Hugging Face ``transformers`` models included) without editing its code.

This module never imports ``transformers``: a model is found by duck typing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from .core._errors import ConfigError
from .core._rng import derive_seeds
from .core._validate import finite_float, nonneg_float, positive_float
from .noise._mlp import MLPNoise
from .observables import interaction_energy


class _BatchDraw:
    """A ``contracts.RandomSource`` drawing a whole batch in one call (what ``MLPNoise.sample`` needs).

    One generator serves all sequences (their fields are independent draws from it); unlike ``rng.Streams``,
    a batched draw is not the unbatched draws stacked, which the layer does not need and which would
    cost one generator call per sequence and layer in training.
    """

    def __init__(self, generator: torch.Generator, batch: tuple[int, ...]):
        self.generator, self.batch = generator, batch

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """Standard normals ``(*batch, *shape)``."""
        return torch.randn(
            self.batch + tuple(shape), generator=self.generator, dtype=dtype, device=self.generator.device
        )


class CommonNoise(nn.Module):
    """Common noise in the residual stream (THEORY sections 1 and 7).

    ``forward(x)`` with ``x`` ``(..., N, d)`` returns ``x + scale sqrt(dt) |x_i| G(x_i / |x_i|)`` for every
    token i, with one freshly drawn ``G(y) = m^{-1/2} W act(d^{-1/2} U y + bU) + bW`` per call and per
    sequence (leading index), identical for all N tokens of that sequence. With ``normalize=False`` the raw
    ``G(x)`` is used instead. Identity in eval mode (``module.eval()``) and when ``scale == 0``.

    Args: dt > 0 (the layer's step T / L), scale >= 0, activation (name, Activation or callable),
    width m >= 1, su, sw >= 0 (bias stds), normalize, seed (int; None draws one from OS entropy).
    Successive calls draw independent fields from the module's own generator; ``reseed`` replays them.
    Raises ConfigError for bad values.
    """

    def __init__(
        self,
        dt: float = 1.0,
        scale: float = 1.0,
        activation="gelu",
        width: int = 256,
        su: float = 0.0,
        sw: float = 0.0,
        normalize: bool = True,
        seed: int | None = None,
    ):
        super().__init__()
        self.dt = positive_float("dt", dt)
        self.scale = nonneg_float("scale", scale)
        self.field = MLPNoise(activation, width, su, sw)
        self.normalize = bool(normalize)
        self.reseed(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the module's random stream (None: a fresh seed from OS entropy)."""
        self.seed = int(np.random.SeedSequence().generate_state(1)[0]) if seed is None else int(seed)
        self._generators: dict[torch.device, torch.Generator] = {}

    def _generator(self, device: torch.device) -> torch.Generator:
        if device not in self._generators:
            self._generators[device] = torch.Generator(device=device).manual_seed(self.seed)
        return self._generators[device]

    def noise(self, x: torch.Tensor) -> torch.Tensor:
        """The added vector ``scale sqrt(dt) |x| G(x/|x|)`` for one fresh field. ``(..., N, d) -> (..., N, d)``."""
        if x.ndim < 2:
            raise ConfigError("x.shape", tuple(x.shape), "tokens must be shaped (..., N, d)")
        streams = _BatchDraw(self._generator(x.device), tuple(x.shape[:-2]))
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)  # (..., N, 1)
        y = x / norm if self.normalize else x  # (..., N, d)
        g = self.field.apply(self.field.sample(x.shape[-1], streams, y), y)  # (..., N, d)
        g = g * norm if self.normalize else g
        return self.scale * math.sqrt(self.dt) * g

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.scale == 0.0:
            return x
        return x + self.noise(x)

    def extra_repr(self) -> str:
        f = self.field
        return (
            f"dt={self.dt:g}, scale={self.scale:g}, activation={f.activation.name}, width={f.width}, "
            f"su={f.su}, sw={f.sw}, normalize={self.normalize}"
        )


class InteractionEnergy(nn.Module):
    """``weight * mean E_beta`` of normalised token states, as a loss term (THEORY sections 5 and 7).

    ``forward(states)`` takes one tensor ``(..., N, d)`` or a sequence of them (one per layer) and returns a
    scalar: ``weight`` times the mean over layers and sequences of
    ``E_beta(X) = 1/(2 N^2) sum_{i,j} (e^beta - e^{beta <X_i, X_j>/(|X_i| |X_j|)})``.
    ``record(x)`` stores a state (used by ``attach``'s hooks); ``loss()`` returns the term for everything
    recorded since the last call and clears the record (zero when nothing was recorded).
    Raises ConfigError for beta <= 0 or a non-finite weight.
    """

    def __init__(self, beta: float = 1.0, weight: float = 1.0):
        super().__init__()
        self.beta = positive_float("beta", beta)
        self.weight = finite_float("weight", weight)
        self._recorded: list[torch.Tensor] = []

    def energy(self, x: torch.Tensor) -> torch.Tensor:
        """E_beta of the normalised tokens, ``(..., N, d) -> (...)``."""
        return interaction_energy(x, self.beta)

    def forward(self, states: torch.Tensor | Sequence[torch.Tensor]) -> torch.Tensor:
        states = [states] if isinstance(states, torch.Tensor) else list(states)
        if not states:
            raise ConfigError("states", states, "need at least one tensor (..., N, d)")
        return self.weight * torch.stack([self.energy(s).mean() for s in states]).mean()

    def record(self, x: torch.Tensor) -> None:
        self._recorded.append(x)

    def loss(self) -> torch.Tensor:
        """The term for the recorded states (then cleared); a zero tensor when none were recorded."""
        states, self._recorded = self._recorded, []
        return self(states) if states else torch.zeros(())


# -- hooks --------------------------------------------------------------------------------------------

_LAYER_PATHS = (
    "encoder.layer",
    "transformer.h",
    "model.layers",
    "model.decoder.layers",
    "gpt_neox.layers",
    "h",
    "layers",
    "blocks",
    "layer",
)


def _get_path(model: nn.Module, path: str):
    obj = model
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def transformer_layers(model: nn.Module) -> nn.ModuleList:
    """The list of transformer blocks of ``model`` (BERT ``encoder.layer``, GPT-2 ``transformer.h``, Llama
    ``model.layers``, ..., or any ``blocks``/``layers`` ModuleList). Raises ConfigError when none is found.
    """
    for path in _LAYER_PATHS:
        found = _get_path(model, path)
        if isinstance(found, nn.ModuleList) and len(found) > 0:
            return found
    n = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    lists = [m for m in model.modules() if isinstance(m, nn.ModuleList) and (n is None or len(m) == n)]
    if not lists:
        raise ConfigError("model", type(model).__name__, "no ModuleList of transformer blocks found")
    return max(lists, key=len)


def _hidden(output) -> torch.Tensor:
    return output if isinstance(output, torch.Tensor) else output[0]


def _replace_hidden(output, hidden: torch.Tensor):
    if isinstance(output, torch.Tensor):
        return hidden
    return (hidden, *output[1:])  # older transformers: a tuple (hidden, attentions, ...)


class Hooks:
    """Handle returned by ``attach``: ``enabled`` switches all hooks; ``remove()`` detaches them.

    Attributes: ``noise`` (one CommonNoise per hooked layer, or empty), ``energy`` (InteractionEnergy or
    None), ``layers`` (indices hooked), ``mode`` ('train': noise only in training mode; 'always': also in
    eval mode, for probes of a frozen model), ``states`` (with ``record=True``: the detached post-noise
    output of every hooked layer, in call order; Hugging Face's ``output_hidden_states`` may be captured
    before these hooks run and then misses the injected noise).
    """

    def __init__(
        self,
        modules: Sequence[nn.Module],
        indices: list[int],
        noise: list[CommonNoise],
        energy: InteractionEnergy | None,
        mode: str,
        record: bool,
    ):
        self.layers, self.noise, self.energy, self.mode, self.record = indices, noise, energy, mode, record
        self.enabled = True
        self.states: list[torch.Tensor] = []
        self._handles = [m.register_forward_hook(self._make_hook(k)) for k, m in enumerate(modules)]

    def _make_hook(self, k: int):
        def hook(module: nn.Module, args, output):
            if not self.enabled:
                return None
            h = _hidden(output)  # (..., N, d)
            if self.noise and (module.training or self.mode == "always"):
                h = h + self.noise[k].noise(h)
            if self.energy is not None:
                self.energy.record(h)
            if self.record:
                self.states.append(h.detach())
            return _replace_hidden(output, h)

        return hook

    @contextmanager
    def disabled(self) -> Iterator[Hooks]:
        """Temporarily switch the hooks off."""
        before, self.enabled = self.enabled, False
        try:
            yield self
        finally:
            self.enabled = before

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []


def attach(
    model: nn.Module,
    *,
    noise: dict | None = None,
    energy: InteractionEnergy | None = None,
    layers: Sequence[int] | None = None,
    seed: int = 0,
    mode: str = "train",
    record: bool = False,
) -> Hooks:
    """Hook common noise and/or the energy term onto the outputs of ``model``'s transformer blocks.

    ``noise``: keyword arguments of ``CommonNoise`` (dt, scale, activation, width, su, sw, normalize);
    each hooked layer gets its own CommonNoise with an independent seed derived from ``seed``.
    ``energy``: an InteractionEnergy that records every hooked layer's (post-noise) output; add
    ``energy.loss()`` to the training loss after each forward pass. ``layers``: block indices (default all).
    ``record``: keep each hooked layer's output in ``Hooks.states`` (clear it between passes).
    The model's code is not edited; ``Hooks.remove()`` restores it exactly.
    Raises ConfigError for a bad layer index or mode.
    """
    if mode not in ("train", "always"):
        raise ConfigError("mode", mode, "one of 'train', 'always'")
    blocks = transformer_layers(model)
    indices = list(range(len(blocks))) if layers is None else [int(i) for i in layers]
    for i in indices:
        if not -len(blocks) <= i < len(blocks):
            raise ConfigError("layers", i, f"block indices in [0, {len(blocks)})")
    indices = [i % len(blocks) for i in indices]
    seeds = derive_seeds(seed, len(indices))
    fields = [CommonNoise(**(noise or {}), seed=s) for s in seeds] if noise is not None else []
    return Hooks([blocks[i] for i in indices], indices, fields, energy, mode, record)
