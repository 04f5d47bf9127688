"""Many small runs of the paper's layer as one vector program: the batch as the last axis (THEORY section 1; the
phase-diagram case of docs/benchmarks.md, "Many small runs in one batch").

A batch of B small runs ``(B, N, d)`` spends its time in torch's per-row kernels (``bmm`` of 4 x 4 matrices, a
softmax over 4 keys, a norm of 4 coordinates). Held as ``(N, d, B)``, every operation of a layer is a pass over B
contiguous numbers, and ``core._batch_last`` computes each exactly as torch's kernel does for one run: the result
equals the usual layout's bit for bit (tests/test_batch_last.py), only faster. ``StochasticTransformer.run`` takes
this path by itself where it applies (``applies``): a CPU batch ``(B, N, d)`` of at least ``MIN_RUNS`` runs in
float32 or float64, the Post-LN layer, the paper's attention (Q^T K = beta I, V = scale I, not causal, small
enough for the stacked path) and the MLP noise drawn directly (a piecewise-linear activation, every product small
enough for torch's plain ``bmm`` loop), beta, scale and the bias stds numbers or one per run (a phase diagram's
batch, ``engine.build_batched``), and no observers. The normals come from
the source's ``randn_last`` where it has one (``SplitMixStreams`` makes them in this layout), else from its
``randn`` transposed: the same numbers either way.
"""

from __future__ import annotations

import math

import torch

from ..attention._softmax import SoftmaxAttention, _small
from ..contracts import RandomSource
from ..core._batch_last import matmul_last, project_last, softmax_last
from ..noise._mlp import MLPNoise

MIN_RUNS = 1024  # runs from which the batch-last layout pays: level at 1,024, 0.8x at 4,096 (docs/benchmarks.md)
PLAIN_LOOP_LIMIT = 400  # torch's bmm runs its plain loop for products of fewer multiply-adds (is * js * ks)


def _per_run_ok(value, runs: int) -> bool:
    """A number, or one value for every run or all of them (``(runs,)`` or ``(1,)``); anything else takes the usual
    layout, which names the parameter in its error; so does one that requires a gradient (the batch-last kernels
    write into ``out=``, which autograd refuses)."""
    if isinstance(value, (int, float)):
        return True
    shaped = isinstance(value, torch.Tensor) and (value.ndim == 0 or (value.ndim == 1 and len(value) in (1, runs)))
    return shaped and not value.requires_grad


def _attention_fits(attention, n: int, d: int, runs: int) -> bool:
    if attention is None:
        return True
    if type(attention) is not SoftmaxAttention or attention.causal:
        return False
    numbers = all(_per_run_ok(v, runs) for v in (attention.beta, attention.scale))
    plain = numbers and all(getattr(attention, m) is None for m in "QKV")
    return plain and _small(n, d, d) and n * n * d < PLAIN_LOOP_LIMIT


def _noise_fits(noise, n: int, d: int, runs: int) -> bool:
    if noise is None:
        return True
    if type(noise) is not MLPNoise or noise.sampling != "direct" or noise.matmul_dtype is not None:
        return False
    stds = all(_per_run_ok(v, runs) for v in (noise.su, noise.sw))
    return stds and noise.activation.leak is not None and n * d * noise.width < PLAIN_LOOP_LIMIT


def _per_run(value, like: torch.Tensor, lead: int):
    """A parameter as the usual layout's ``run_param`` makes it, batch-last: a number as it is, per-run values in
    ``like``'s dtype as ``(1, ..., 1, B)`` with ``lead`` ones (a 0-d tensor stays 0-d)."""
    if isinstance(value, (int, float)):
        return value
    t = torch.as_tensor(value, dtype=like.dtype, device=like.device)
    return t.reshape((1,) * lead + (-1,)) if t.ndim else t


def _is(value, number: float) -> bool:
    return isinstance(value, (int, float)) and value == number


def applies(model, x: torch.Tensor, source: RandomSource, observers: tuple) -> bool:
    """Whether ``model`` (a ``StochasticTransformer``) runs the tokens ``x`` with ``source`` batch-last (see the
    module doc)."""
    from ._norms.schemes import PostLN

    if x.ndim != 3 or x.shape[0] < MIN_RUNS or x.device.type != "cpu" or observers or x.requires_grad:
        return False
    if tuple(getattr(source, "batch", ())) != (x.shape[0],):
        return False
    if x.dtype not in (torch.float32, torch.float64) or type(model.norm) is not PostLN:
        return False
    runs, n, d = x.shape
    attention, noise = model._attention, model.noise
    fits = _attention_fits(attention, n, d, runs) and _noise_fits(noise, n, d, runs)
    return fits and (attention is not None or noise is not None)


def enter(x: torch.Tensor) -> torch.Tensor:
    """``(B, N, d) -> (N, d, B)``, contiguous."""
    return x.permute(1, 2, 0).contiguous()


def leave(x: torch.Tensor) -> torch.Tensor:
    """Saved states ``(S, N, d, B) -> (S, B, N, d)``, contiguous."""
    return x.permute(0, 3, 1, 2).contiguous()


def normals(source: RandomSource, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """``source.randn(shape, dtype)`` with the batch last, ``(*shape, B)``."""
    draw = getattr(source, "randn_last", None)
    if draw is not None:
        return draw(shape, dtype)
    z = source.randn(shape, dtype)  # (B, *shape)
    return z.reshape(z.shape[0], -1).t().contiguous().reshape(*shape, z.shape[0])


def attention_drift(x: torch.Tensor, attention: SoftmaxAttention) -> torch.Tensor:
    """``SoftmaxAttention(beta, scale).drift`` of each run (beta, scale numbers or one per run): softmax(beta x
    x^T) x, times the scale. ``(N, d, B) -> (N, d, B)``."""
    beta = _per_run(attention.beta, x, 2)
    queries = x if _is(beta, 1) else x * beta  # x * 1 is x, bit for bit
    scores = matmul_last(queries, x.transpose(0, 1))  # (N, N, B)
    out = matmul_last(softmax_last(scores), x)
    return out if _is(attention.scale, 1) else out * _per_run(attention.scale, x, 2)


def mlp_increment(noise: MLPNoise, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
    """``MLPNoise.increment`` of each run (``sample`` then ``apply``, the same draws and operations; bias stds
    numbers or one per run). ``(N, d, B) -> (N, d, B)``."""
    m, d, dtype = noise.width, y.shape[1], y.dtype
    U = normals(source, (m, d), dtype)  # (m, d, B)
    bU = normals(source, (m,), dtype)  # (m, B); drawn even where its std is 0 (the streams advance alike)
    W = normals(source, (d, m), dtype)  # (d, m, B)
    bW = normals(source, (d,), dtype)  # (d, B)
    pre = matmul_last(y / math.sqrt(d), U.transpose(0, 1))  # (N, m, B)
    pre = pre if _is(noise.su, 0) else pre.add_(bU.mul_(_per_run(noise.su, y, 1)))
    out = matmul_last(noise.activation.apply_(pre), W.transpose(0, 1))  # (N, d, B)
    out.mul_(1 / math.sqrt(m))
    out = out if _is(noise.sw, 0) else out.add_(bW.mul_(_per_run(noise.sw, y, 1)))
    return math.sqrt(dt) * out


def layer(model, x: torch.Tensor, source: RandomSource) -> torch.Tensor:
    """``PostLN.layer`` of each run: ``LN(x + dt Attn(x))``, then ``LN(y + sqrt(dt) G(y))``. ``(N, d, B)``."""
    dt, attention, noise = model.dt, model._attention, model.noise
    model.clock += 1
    if attention is not None:
        x = project_last(x + dt * attention_drift(x, attention))
    if noise is not None:
        x = project_last(x + mlp_increment(noise, x, dt, source))
    return x
