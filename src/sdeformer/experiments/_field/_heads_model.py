"""``heads``'s model run forward and backward: the hidden states and the backpropagated variables of H i.i.d. heads
against the H -> infinity limit on the same draws, and the slope fits (Gibson, Reisinger, arXiv 2605.11059;
docs/field.md, "Many heads").

Layer l of L (dt = T / L), the model of ``_heads``: x_{l+1} = x_l + dt D(x_l) + dt (scale / H) sum_h B_h(x_l), D
the mean head, B_h the random heads (``ResampledHeads``); the limit: x_{l+1} = x_l + dt D(x_l). The terminal
loss Phi(x) = (1/N) sum_i [<e_1, x_i> + (kappa / 2) |x_i|^2] (``curvature`` kappa couples the adjoint's terminal value
to the forward deviation). The backpropagated variable (the adjoint) of layer l is p_l = N dPhi(x_L) / dx_l
``(N, d)``, the per-token gradient in the mean-field scaling: p_L,i = e_1 + kappa x_i(L) and
p_l = (d layer_l / dx_l)^T p_{l+1} = p_{l+1} + dt (...)^T p_{l+1}, the discrete backward equation of the
forward-backward limit. Its
H -> infinity limit p_l^inf is the same recursion along the limit's states. The deviation measured:
the token mean of |p_l - p_l^inf|^2 at the first layer (l = 0, the input's adjoint, backpropagated through all
L layers) and its mean over the layers l = 0 .. L-1.

The backward pass recomputes one layer at a time from its stored input, the heads' draws replayed by resetting
the generator to its state before that layer, so memory is L states, not L layers' graphs (H = 256 heads, 64 draws,
128 layers: peak resident memory 0.76 GB against 5.1 GB for one graph of the whole run, the same time; docs/field.md).

Exact at beta = 0, head_beta = 0, kappa = 0 (every head sees the token mean): p_l = A_l^T ... A_{L-1}^T e_1 with
A = (1 + dt) I + dt G, G = (1/H) sum_h V_h, so E|p_l - p_l^inf|^2 = g^(L-l) - (1 + dt)^(2(L-l)),
g = (1 + dt)^2 + dt^2 d sV^2 / H: the forward closed form with |m0|^2 replaced by |e_1|^2 = 1 (the tests).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from ._common import Z95

THEORY_SLOPE = -0.5  # the paper's exponent of H at fixed L (forward and backward)


class Deviations(NamedTuple):
    """``(seeds,)`` each: the token mean of |x(L) - x^inf(L)|^2; of |p_0 - p_0^inf|^2; of |p_l - p_l^inf|^2
    averaged over the layers (the last two None when the backward pass was not asked for)."""

    forward: np.ndarray
    first: np.ndarray | None
    layers: np.ndarray | None


def terminal(x: torch.Tensor, curvature: float) -> torch.Tensor:
    """N Phi(x) summed over any batch: sum_i <e_1, x_i> + (kappa / 2) |x_i|^2, so its gradient is p_L."""
    return x[..., 0].sum() + 0.5 * curvature * (x * x).sum()


def deviations(s, heads: int, layers: int, seed: int, scale: float = 1.0, backward: bool = False) -> Deviations:
    """The model of H heads on ``s.seeds`` draws (``BulkSource`` seeded ``seed``) against the limit, both from the
    start ``uniform_sphere(s.tokens, s.dim, seed=s.seed)``; ``scale`` multiplies the heads' 1/H (sqrt(H): the
    wrong 1/sqrt(H) scaling); ``backward``: the adjoints too (module docstring)."""
    import sdeformer as sdf
    from sdeformer.attention._softmax import softmax_attention
    from sdeformer.core._threads import torch_threads
    from sdeformer.noise._heads import ResampledHeads
    from sdeformer.noise._sources import BulkSource

    x0 = sdf.uniform_sphere(s.tokens, s.dim, seed=s.seed, dtype=torch.float64)  # (N, d), one start for all
    field, source = ResampledHeads(heads, s.head_beta), BulkSource.seeded(seed, (s.seeds,))
    dt = s.horizon / layers
    step = (dt * scale) ** 2 / heads  # the field's increment is sqrt(step / H) sum_h B_h = dt scale / H sum_h B_h

    def mean_layer(x: torch.Tensor) -> torch.Tensor:
        return x + dt * softmax_attention(s.beta * x, x, x)

    def layer(x: torch.Tensor) -> torch.Tensor:
        return mean_layer(x) + field.increment(x, step, source)

    inputs, states = [], []  # per layer: its input (S, N, d) and the generator's state before its draws
    with torch_threads(1):  # small tensors: one thread is 6x faster on 2 shared cores (docs/field.md)
        limits = [x0.clone().requires_grad_(backward)]  # (N, d) per layer: the H -> infinity recursion
        for _ in range(layers):
            limits.append(mean_layer(limits[-1]))
        x = x0.expand(s.seeds, -1, -1).clone()  # (S, N, d)
        with torch.no_grad():
            for _ in range(layers):
                inputs.append(x)
                states.append(source.generator.get_state())
                x = layer(x)
        forward = ((x - limits[-1].detach()) ** 2).sum(-1).mean(-1).numpy()
        if not backward:
            return Deviations(forward, None, None)
        p_inf = torch.autograd.grad(terminal(limits[-1], s.curvature), limits[:-1])  # L x (N, d)
        xl = x.requires_grad_()
        (p,) = torch.autograd.grad(terminal(xl, s.curvature), xl)  # (S, N, d): p_L
        squares = []
        for layer_index in reversed(range(layers)):
            source.generator.set_state(states[layer_index])  # the same heads as the forward pass
            xl = inputs[layer_index].requires_grad_()
            (p,) = torch.autograd.grad(layer(xl), xl, grad_outputs=p)  # p_l = (d layer / dx_l)^T p_{l+1}
            squares.append(((p - p_inf[layer_index]) ** 2).sum(-1).mean(-1))  # (S,)
    return Deviations(forward, squares[-1].numpy(), torch.stack(squares).mean(0).numpy())


def fit(x: list[int], squares: list[np.ndarray], seed: int) -> tuple[float, float, float]:
    """The slope of log sqrt(mean dev^2) on log x and its bootstrap 95 % interval over the draws."""
    from sdeformer.observables import bootstrap_slope

    lx, ly = np.log(np.asarray(x, float)), 0.5 * np.log([q.mean() for q in squares])
    lo, hi = bootstrap_slope(x, np.stack(squares), seed=seed)
    return float(np.polyfit(lx, ly, 1)[0]), lo / 2, hi / 2


def bands(squares: list[np.ndarray]) -> tuple[list[float], list[float], list[float]]:
    """Per x: sqrt(mean q) and the square roots of the mean's 95 % normal interval (clipped at 0)."""
    mean = np.array([q.mean() for q in squares])
    half = np.array([Z95 * q.std(ddof=1) / math.sqrt(len(q)) for q in squares])
    return np.sqrt(mean).tolist(), np.sqrt(np.maximum(mean - half, 0.0)).tolist(), np.sqrt(mean + half).tolist()


def verdicts(lo: float, hi: float, wrong_lo: float, wrong_hi: float) -> tuple[bool, bool]:
    """(the model agrees: -1/2 inside its slope interval, 0 outside; the wrong model is rejected: -1/2 outside)."""
    return lo <= THEORY_SLOPE <= hi and not lo <= 0.0 <= hi, not wrong_lo <= THEORY_SLOPE <= wrong_hi
