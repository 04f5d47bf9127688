"""Small-matrix operations on a stack of runs held with the batch as the last axis, each equal bit for bit to the
torch operation a run takes in the usual layout (docs/benchmarks.md, "Many small runs in one batch").

A stack of B runs of N tokens in dimension d is ``(B, N, d)`` in the usual layout, where each of torch's small
kernels (``bmm`` of matrices this small, ``softmax`` over 4 keys, ``vector_norm`` over 4 coordinates) pays per
row; batch-last, ``(N, d, B)``, every step is an elementwise pass over B contiguous numbers. The three operations
here give the usual layout's numbers exactly, by computing what torch's CPU kernel computes, in its order:

- ``matmul_last``: torch's ``bmm`` of products with fewer than 400 multiply-adds (``is * js * ks < 400``) runs a
  plain loop, ``acc = 0; acc += a[i, k] * b[k, j]`` for k in order, in the dtype (no fused multiply-add): here the
  same sums, k in order, over B at once.
- ``softmax_last``: torch's last-axis softmax is max, exp (its vectorised exp, not ``torch.exp``'s), the sum, then
  times the reciprocal of the sum. A row shorter than a SIMD vector sums its entries in order; a full vector sums
  by a halving tree (lane i plus lane i + w/2, then + w/4, ...). Padding each row to one full vector with -inf
  (exp 0) and placing entry 0 at lane 0, entry 1 at lane w/2, entry 2 at w/4, ... makes the tree add them in order
  (for up to log2(w) + 1 entries), with the same exp and reciprocal, and the full-vector path is 3-5x faster.
- ``project_last``: ``v / vector_norm(v)``. torch's norm of 4 coordinates (float32 and float64 on an AVX2 CPU)
  sums the rounded squares in order and takes a correctly rounded square root, and so does this, over B at once;
  other counts use fused multiply-adds on this build (2, 3) or a mix (5-7) and are left to torch.

The softmax and the norm rest on how this torch build vectorises (the SIMD width of the CPU capability torch
uses): each is checked once per process against the usual layout on probe inputs (``softmax_plan``,
``norm_holds``), and where it does not hold (another build, another width) the operation falls back to a
transpose, the usual kernel and a transpose back: slower, never different.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import torch

SIMD_BYTES = {"AVX2": 32, "AVX512": 64}  # torch's vector width per CPU capability (torch.backends.cpu)
PROBE_RUNS = 257  # runs in a probe (odd: no lane pattern hides a difference)


def matmul_last(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b per run: ``(I, K, B) @ (K, J, B) -> (I, J, B)``, equal to ``bmm`` of the usual layout where torch uses
    its plain loop (I K J < 400); the products in one pass, then summed k by k from zero."""
    out = a[:, 0].unsqueeze(1) * b[0] + 0.0  # (I, J, B): acc = 0 + a_i0 b_0j (a -0 product sums to +0 as in torch)
    term = torch.empty_like(out)
    for k in range(1, a.shape[1]):
        out += torch.mul(a[:, k].unsqueeze(1), b[k], out=term)
    return out


def tree_lanes(entries: int, width: int) -> tuple[int, ...] | None:
    """The lanes of a ``width``-lane row whose halving-tree sum adds ``entries`` values in order: 0, width/2,
    width/4, ... (None where the tree is too shallow)."""
    if entries - 1 > int(math.log2(width)):
        return None
    return (0,) + tuple(width >> k for k in range(1, entries))


def simd_width(dtype: torch.dtype) -> int | None:
    """Lanes of torch's CPU vector for ``dtype`` under its CPU capability (None where unknown)."""
    size = SIMD_BYTES.get(torch.backends.cpu.get_cpu_capability())
    return None if size is None else size * 8 // torch.finfo(dtype).bits


def _softmax_rows(s: torch.Tensor) -> torch.Tensor:
    """The usual layout's softmax: transpose to rows ``(B, I, J)``, torch's softmax, transpose back ``(I, J, B)``."""
    return torch.softmax(s.permute(2, 0, 1).contiguous(), -1).permute(1, 2, 0).contiguous()


def _softmax_padded(s: torch.Tensor, lanes: tuple[int, ...], width: int) -> torch.Tensor:
    """torch's softmax of rows padded to one full vector, entries at ``lanes``. ``(I, J, B) -> (I, J, B)``."""
    n_i, _, runs = s.shape
    rows = torch.full((runs, n_i, width), -math.inf, dtype=s.dtype, device=s.device)  # (B, I, w)
    for j, lane in enumerate(lanes):
        rows[:, :, lane].copy_(s[:, j].t())
    rows = torch.softmax(rows, -1)
    return rows.index_select(2, torch.tensor(lanes, device=s.device)).permute(1, 2, 0).contiguous()


def softmax_last(s: torch.Tensor) -> torch.Tensor:
    """softmax over the key axis of scores ``(I, J, B)``, equal to torch's softmax of each run's ``(I, J)`` rows."""
    plan = softmax_plan(s.shape[1], s.dtype)
    return _softmax_rows(s) if plan is None else _softmax_padded(s, *plan)


def _norm_in_order(v: torch.Tensor) -> torch.Tensor:
    """|v| over the coordinates of ``(N, d, B)``: the rounded squares summed in order from zero, then a correctly
    rounded square root (numpy's: torch's ``sqrt`` on this build is not always correctly rounded). ``(N, 1, B)``."""
    squares = v * v  # (N, d, B)
    total = squares[:, :1] + 0.0
    for k in range(1, v.shape[1]):
        total += squares[:, k : k + 1]
    np.sqrt(total.numpy(), out=total.numpy())
    return total


def project_last(v: torch.Tensor) -> torch.Tensor:
    """LN(v) = v / |v| over the coordinates of ``(N, d, B)``, equal to ``core._sphere.project`` of each run."""
    if norm_holds(v.shape[1], v.dtype) and v.device.type == "cpu" and not v.requires_grad:
        return v / _norm_in_order(v)
    rows = v.permute(2, 0, 1).contiguous()  # (B, N, d): torch reduces a strided axis in another order
    return v / torch.linalg.vector_norm(rows, dim=-1, keepdim=True).permute(1, 2, 0)


def _probe(shape: tuple[int, int], dtype: torch.dtype) -> torch.Tensor:
    """Probe inputs ``(PROBE_RUNS, *shape)``: normals at scales 1e-3 to 80, ties and a -0 (fixed seed)."""
    g = torch.Generator().manual_seed(20261204)
    x = torch.randn((PROBE_RUNS, *shape), generator=g, dtype=torch.float64)
    scale = torch.tensor([1e-3, 0.1, 1.0, 10.0, 80.0], dtype=torch.float64).repeat(PROBE_RUNS)[:PROBE_RUNS]
    x = (x * scale.view(-1, 1, 1)).to(dtype)
    x[0] = 1.0
    x[1, :, 0] = -0.0
    return x


@cache
def softmax_plan(entries: int, dtype: torch.dtype) -> tuple[tuple[int, ...], int] | None:
    """(lanes, width) of the padded softmax for rows of ``entries`` keys, where this build's SIMD width allows it
    and it gives torch's softmax on the probe inputs (checked once per process); else None."""
    width = simd_width(dtype)
    lanes = None if width is None or entries >= width else tree_lanes(entries, width)
    if width is None or lanes is None:
        return None
    s = _probe((3, entries), dtype)  # (R, I, J)
    padded = _softmax_padded(s.permute(1, 2, 0).contiguous(), lanes, width).permute(2, 0, 1)
    return (lanes, width) if torch.equal(padded, torch.softmax(s, -1)) else None


@cache
def norm_holds(dim: int, dtype: torch.dtype) -> bool:
    """Whether ``_norm_in_order`` gives ``vector_norm``'s numbers for ``dim`` coordinates on this build: equal on
    the probe inputs (checked once per process; on this CPU for 4 coordinates only)."""
    v = _probe((4, dim), dtype)  # (R, N, d)
    return torch.equal(
        _norm_in_order(v.permute(1, 2, 0).contiguous()).permute(2, 0, 1),
        torch.linalg.vector_norm(v, dim=-1, keepdim=True),
    )
