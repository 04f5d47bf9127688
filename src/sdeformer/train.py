"""Training through the noisy model (docs/field.md, "Training through the model"): a trainable linear feed-forward
map inside the stochastic transformer of THEORY section 1, and a small optimizer loop over the model's parameters.

- ``LinearFeedForward(weight)``: the drift x -> W_l x of layer l, added to the attention's (the layer then reads
  Y = LN(X + dt (Attn_X(X) + W_l X))); ``weight`` is ``(L, d, d)`` (one map per layer, the parameter-linear
  feed-forward map of Isobe, Inoue, Imaizumi 2026) or ``(d, d)`` (one map shared by the layers). The layer index
  is read from the model's clock (``StochasticTransformer.clock``, layers done), which ``run`` and the
  ``checkpoint=`` recomputation both reset, so a recomputed segment sees its own layers' maps.
- ``noisy_model(layers, horizon, noise, beta, feed_forward)``: the softmax attention beta I plus the map, bound.
- ``train(loss, parameters, steps, lr)``: ``steps`` optimizer steps on ``loss(seed_k) + sum_p penalty_p |p|^2``;
  ``loss`` is the caller's, run on the noise path of seed seed_k (``seed + k``, a fresh path per step, or
  ``seed`` for one fixed path), its gradient through the whole run (tests/test_gradients.py holds those against
  central differences). The parameters are leaf tensors updated in place.

The radial part of W x is removed by the layer norm (to first order in dt), so W and W + c I act alike up to
O(dt^2): a map is identified only modulo the identity.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from .attention._softmax import MultiHeadAttention, SoftmaxAttention
from .contracts import NoiseField, RandomSource
from .core._errors import ConfigError
from .dynamics._discrete import StochasticTransformer

OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}


class LinearFeedForward:
    """x -> W_l x at layer l (``weight`` ``(L, d, d)``) or x -> W x (``(d, d)``); an ``AttentionDrift``.
    ``clock()`` gives the layers done (the model's clock: layer l runs with clock = l after its advance);
    ``noisy_model`` binds it. Raises ConfigError for a weight of another shape."""

    def __init__(self, weight: torch.Tensor, clock: Callable[[], int] | None = None):
        if weight.dim() not in (2, 3) or weight.shape[-1] != weight.shape[-2]:
            raise ConfigError("weight", tuple(weight.shape), "(d, d) or (L, d, d)")
        self.weight, self.clock = weight, clock

    def drift(self, x: torch.Tensor, source: RandomSource | None = None) -> torch.Tensor:
        w = self.weight
        if w.dim() == 3:
            if self.clock is None:
                raise ConfigError("clock", None, "a per-layer weight (L, d, d) needs the model's clock (noisy_model)")
            w = w[self.clock() - 1]  # (d, d): this layer's map
        return x @ w.mT  # (..., N, d)


def noisy_model(
    layers: int,
    horizon: float,
    noise: NoiseField | None,
    beta: float | torch.Tensor,
    feed_forward: LinearFeedForward,
) -> StochasticTransformer:
    """The stochastic transformer with attention beta I plus ``feed_forward`` (its clock bound to the model's).
    Raises ConfigError for a per-layer weight whose length is not ``layers``."""
    w = feed_forward.weight
    if w.dim() == 3 and w.shape[0] != layers:
        raise ConfigError("weight", tuple(w.shape), f"one map per layer: first dimension {layers}")
    model = StochasticTransformer(layers, horizon, noise, MultiHeadAttention([SoftmaxAttention(beta), feed_forward]))
    feed_forward.clock = lambda: model.clock
    return model


@dataclass(frozen=True)
class Training:
    """``losses``: the caller's loss at each step (before its update); ``penalties``: the L2 term there."""

    losses: list[float]
    penalties: list[float]


def _check(parameters: Mapping[str, torch.Tensor], steps: int, lr: float, optimizer: str, penalty) -> None:
    if not parameters:
        raise ConfigError("parameters", {}, "at least one tensor to train")
    for name, p in parameters.items():
        if not (isinstance(p, torch.Tensor) and p.is_leaf and p.requires_grad and p.is_floating_point()):
            raise ConfigError(name, type(p).__name__, "a floating leaf tensor with requires_grad=True")
    if int(steps) != steps or steps < 1:
        raise ConfigError("steps", steps, "an integer >= 1")
    if not (math.isfinite(lr) and lr > 0):
        raise ConfigError("lr", lr, "a finite rate > 0")
    if optimizer not in OPTIMIZERS:
        raise ConfigError("optimizer", optimizer, f"one of {list(OPTIMIZERS)}")
    for name, weight in penalty.items():
        if name not in parameters or not (math.isfinite(weight) and weight >= 0):
            raise ConfigError("penalty", {name: weight}, "weights >= 0 for names among the parameters")


def train(
    loss: Callable[[int], torch.Tensor],
    parameters: Mapping[str, torch.Tensor],
    steps: int,
    lr: float = 1e-2,
    *,
    penalty: Mapping[str, float] | None = None,
    optimizer: str = "adam",
    decay: float = 1.0,
    seed: int = 0,
    fresh_noise: bool = True,
    progress: Callable[[int], None] | None = None,
) -> Training:
    """Minimise ``loss(seed_k) + sum_name penalty[name] |parameters[name]|^2`` by ``steps`` steps of
    ``optimizer`` (``"adam"`` or ``"sgd"``, rate ``lr`` times ``decay`` ** k at step k); seed_k = seed + k
    (``fresh_noise``) or seed. ``progress(k)`` after step k. Raises ConfigError for a bad argument, a parameter
    that is not a leaf requiring grad, or a loss that is not a finite scalar (naming the step: a smaller ``lr``
    may help)."""
    penalty = dict(penalty or {})
    _check(parameters, steps, lr, optimizer, penalty)
    if not 0.0 < decay <= 1.0:
        raise ConfigError("decay", decay, "a factor in (0, 1] per step")
    opt = OPTIMIZERS[optimizer](list(parameters.values()), lr=lr)
    schedule = torch.optim.lr_scheduler.ExponentialLR(opt, decay)
    losses, penalties = [], []
    for k in range(int(steps)):
        opt.zero_grad(set_to_none=True)
        value = loss(seed + k if fresh_noise else seed)
        if not (isinstance(value, torch.Tensor) and value.dim() == 0 and torch.isfinite(value)):
            raise ConfigError("lr", lr, f"the loss is not a finite scalar tensor at step {k} (try a smaller lr)")
        reg = sum((w * parameters[n].pow(2).sum() for n, w in penalty.items()), value.new_zeros(()))
        (value + reg).backward()
        opt.step()
        schedule.step()
        losses.append(float(value.detach()))
        penalties.append(float(reg.detach()))
        if progress is not None:
            progress(k + 1)
    return Training(losses, penalties)
