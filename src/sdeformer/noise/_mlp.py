"""The paper's common noise: a fresh random MLP per layer, shared by all tokens (THEORY section 1).

``MLPNoise`` is the finite-width MLP of THEORY section 1, ``dW(y) = sqrt(dt) G_l(y)`` with

    G_l(y) = m^{-1/2} W_l act(d^{-1/2} U_l y + bU_l) + bW_l,  W, U ~ N(0, 1), bU ~ N(0, sU^2), bW ~ N(0, sW^2)

``su``/``sw`` may be tensors broadcastable to the batch shape (one noise law per batch element).
Two opt-in fast paths (the default draws and stream are unchanged): ``sampling="conditional"``
draws the field at the N tokens with fewer normals but the same joint law, and ``matmul_dtype``
(e.g. ``torch.bfloat16``) runs the MLP matmuls in reduced precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import torch

from ..contracts import RandomSource
from ..core._activations import Activation, get_activation
from ..core._errors import ConfigError
from ..core._kernel import KernelTheory, kernel_theory
from ..core._rng import skip
from ..core._shapes import run_param
from ..core._sphere import project
from ..core._validate import nonneg_std, positive_int
from ._covariance import IsotropicKernel

SAMPLING_MODES = ("direct", "conditional")
TOKEN_BLOCK = 2048  # tokens per block of the hidden layer in ``MLPNoise.apply``
# tokens from which apply goes in blocks: measured 1.65-2.5x faster at N = 8,192 and 1.7-3.7x at 65,536 (d = 3,
# 64, m = 1,024, one thread) under ATEN_CPU_CAPABILITY default, avx2 and avx512, the same values bit for bit; at
# N = 4,096 0.3-2x (docs/scaling.md)
BLOCK_FROM = 8192
ROOT_FLOPS_PER_NORMAL = 100  # Householder-QR flops that take as long as one normal draw (docs/benchmarks.md)


def root_pays(n: int, k: int, cols: int) -> bool:
    """Whether drawing f @ Z (f ``(N, k)``, Z ``(k, cols)``) through the N x N QR root is cheaper than directly:
    it saves (k - N) cols normals for about 2 k N^2 flops."""
    return k > n and 2 * k * n * n < ROOT_FLOPS_PER_NORMAL * (k - n) * cols


def _zero(std) -> bool:
    """Whether a bias std is the number 0 (not a tensor of per-run stds)."""
    return isinstance(std, (int, float)) and std == 0


def _bias(source: RandomSource, size: int, std, like: torch.Tensor, name: str) -> torch.Tensor | None:
    """One bias draw times its std ``(..., size)``, or None where the std is the number 0 (a zero bias adds nothing):
    the draw is then skipped (``core._rng.skip``), so the stream's later numbers are those of a drawn bias."""
    if _zero(std):
        skip(source, (size,), like.dtype)
        return None
    return source.randn((size,), like.dtype) * run_param(std, like, 1, batch=source.batch, name=name)


@dataclass(frozen=True)
class MLPParams:
    """One layer's random MLP for every batch element."""

    U: torch.Tensor  # (..., m, d)
    bU: torch.Tensor | None  # (..., m); None where su is the number 0
    W: torch.Tensor  # (..., d, m)
    bW: torch.Tensor | None  # (..., d); None where sw is the number 0


@lru_cache(maxsize=32)
def _mlp_theory(activation: Activation, d: int, su: float, sw: float) -> KernelTheory:
    return kernel_theory(activation, d, su=su, sw=sw)


class MLPNoise(IsotropicKernel):
    """The random width-m MLP block, freshly drawn in every layer and shared by all tokens.

    Args: activation (name, Activation or callable), width m >= 1, su, sw >= 0 (floats or batch tensors).
    sampling: ``"direct"`` (default: draw U, bU, W, bW) or ``"conditional"``. Given the tokens y, the
    pre-activations are Gaussian with i.i.d. columns of covariance F F^T, F = [y / sqrt(d), sU 1]
    ``(N, d+1)``; given them, the output columns are i.i.d. Gaussian with covariance A A^T / m,
    A = act(pre) ``(N, m)``. The conditional mode draws a stage through the N x N QR factor R^T of F (or A)
    where that is cheaper than the direct product (``root_pays``): then N m (or N d) normals replace
    (d+1) m (or m d); see ``normals_per_layer``. It preserves the joint law of G_l at the N tokens, hence the law
    of the whole trajectory, but not the stream (numbers differ from the direct mode for the same seed).
    matmul_dtype: None (default: the tokens' dtype) or a dtype such as ``torch.bfloat16`` for the MLP
    matmuls; results return in the tokens' dtype.
    Raises ConfigError for a bad width, a negative/NaN bias std, an unknown sampling mode or a
    non-floating matmul_dtype.
    """

    def __init__(
        self,
        activation="relu",
        width: int = 2048,
        su: float | torch.Tensor = 0.0,
        sw: float | torch.Tensor = 0.0,
        *,
        sampling: str = "direct",
        matmul_dtype: torch.dtype | None = None,
    ):
        width = positive_int("width", width)
        nonneg_std("su", su)
        nonneg_std("sw", sw)
        if sampling not in SAMPLING_MODES:
            raise ConfigError("sampling", sampling, f"one of {list(SAMPLING_MODES)}")
        if matmul_dtype is not None and not (isinstance(matmul_dtype, torch.dtype) and matmul_dtype.is_floating_point):
            raise ConfigError("matmul_dtype", matmul_dtype, "None or a floating torch.dtype (e.g. torch.bfloat16)")
        self.activation: Activation = get_activation(activation)
        self.width = width
        self.su, self.sw = su, sw
        self.sampling, self.matmul_dtype = sampling, matmul_dtype

    @classmethod
    def from_config(cls, p) -> MLPNoise:
        """The MLP noise of a config (``registry.Params``; ``p.options``: the fast paths)."""
        return cls(p.activation, p.width, p.su, p.sw, **{"sampling": p.sampling, **p.options})

    def kernel(self, x: torch.Tensor) -> torch.Tensor:
        """kappa(<x_i, x_j>) ``(..., N, N)`` at any width (THEORY section 2); scalar bias stds only."""
        if torch.as_tensor(self.su).ndim or torch.as_tensor(self.sw).ndim:
            raise ConfigError("su", self.su, "a scalar bias std is needed for the MLP kernel")
        th = _mlp_theory(self.activation, x.shape[-1], float(self.su), float(self.sw))
        u = project(x)
        return th.kappa(u @ u.transpose(-1, -2)).to(x)  # (..., N, N)

    def variance(self, y: torch.Tensor) -> torch.Tensor:
        """k(y_i, y_i) = kappa(1) on the sphere, ``(..., N, 1)`` (isotropic: tr(P k I) / (d - 1) = k)."""
        return torch.diagonal(self.kernel(y), dim1=-2, dim2=-1).unsqueeze(-1)

    def one_point(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        """G_i(y_i) of an independent width-m MLP per token, from its conditional law (BEYOND section 1): m + d
        normals per token, pre = sqrt(|y|^2/d + sU^2) z_m, then sqrt(|act(pre)|^2/m + sW^2) z_d. ``(..., N, d)``."""
        n, d, m = y.shape[-2], y.shape[-1], self.width
        pre_std = (y.pow(2).sum(-1, keepdim=True) / d + run_param(self.su, y, 2) ** 2).sqrt()  # (..., N, 1)
        pre = source.randn((n, m), y.dtype) * pre_std  # (..., N, m)
        hidden = self.activation(pre).pow(2).mean(-1, keepdim=True)  # (..., N, 1)
        draw = source.randn((n, d), y.dtype) * (hidden + run_param(self.sw, y, 2) ** 2).sqrt()  # (..., N, d)
        return math.sqrt(dt) * draw

    def sample(self, d: int, source: RandomSource, like: torch.Tensor) -> MLPParams:
        """Draw one layer's (U, bU, W, bW) for every batch element of ``source``."""
        m, dtype = self.width, like.dtype
        U = source.randn((m, d), dtype)  # (..., m, d)
        bU = _bias(source, m, self.su, like, "su")  # (..., m)
        W = source.randn((d, m), dtype)  # (..., d, m)
        bW = _bias(source, d, self.sw, like, "sw")  # (..., d)
        return MLPParams(U, bU, W, bW)

    def apply(self, p: MLPParams, y: torch.Tensor) -> torch.Tensor:
        """G(y) for one drawn MLP. ``y``: (..., N, d) -> (..., N, d). From ``BLOCK_FROM`` tokens on, in blocks of
        ``TOKEN_BLOCK`` tokens: the hidden layer is (..., block, m), not (..., N, m) (each token's row is its own;
        the choice depends on N only, so batched equals unbatched)."""
        n = y.shape[-2]
        if n < BLOCK_FROM:
            return self._apply(p, y)
        out = torch.empty_like(y)  # written block by block: nothing of a block outlives it (no heap holes)
        for s in range(0, n, TOKEN_BLOCK):
            out[..., s : s + TOKEN_BLOCK, :] = self._apply(p, y[..., s : s + TOKEN_BLOCK, :])
        return out

    def _apply(self, p: MLPParams, y: torch.Tensor) -> torch.Tensor:
        """G(y) in one piece, (..., N, m) hidden layer."""
        d = y.shape[-1]
        # scale the small operands, not the (..., N, m) hidden layer; add the bias in place, unless its std is the
        # number 0 (its values are then +-0: adding them changes no value, at most a zero's sign)
        pre = self._mm(y / math.sqrt(d), p.U.transpose(-1, -2))  # (..., N, m)
        pre = pre if p.bU is None else pre.add_(p.bU.unsqueeze(-2))
        out = self._mm(self.activation.apply_(pre), p.W.transpose(-1, -2))  # (..., N, d)
        out.mul_(1 / math.sqrt(self.width))
        return out if p.bW is None else out.add_(p.bW.unsqueeze(-2))

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        """sqrt(dt) G_l(y) with a fresh G_l. ``(..., N, d) -> (..., N, d)``."""
        if self.sampling == "conditional":
            return math.sqrt(dt) * self._conditional(y, source)
        return math.sqrt(dt) * self.apply(self.sample(y.shape[-1], source, y), y)

    def normals_per_layer(self, n: int, d: int) -> int:
        """Standard normals one layer draws per batch element for N = ``n`` tokens in dimension ``d``."""
        m = self.width
        if self.sampling == "conditional":
            return (n if root_pays(n, d + 1, m) else d + 1) * m + (n if root_pays(n, m, d) else m) * d + d
        return 2 * m * d + m + d

    def _mm(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """a @ b, computed in ``matmul_dtype`` when set, returned in a's dtype. Two matrices (one run) are multiplied
        as a stack of one: each run of a batch is one entry of a batched product, and torch picks another kernel
        (another rounding) for a small 2-D product, so this keeps batched equal to unbatched at every width."""
        if a.ndim == b.ndim == 2:
            return self._mm(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0)
        if self.matmul_dtype is None:
            return a @ b
        return (a.to(self.matmul_dtype) @ b.to(self.matmul_dtype)).to(a.dtype)

    def _gaussian_columns(self, f: torch.Tensor, cols: int, source: RandomSource) -> torch.Tensor:
        """A draw with the law of f @ Z, Z ``(k, cols)`` i.i.d. N(0, 1), for f ``(..., N, k)``: directly, or
        where ``root_pays`` as R^T @ Z', Z' ``(N, cols)``, with f^T = Q R (so f f^T = R^T R: same Gaussian law,
        N cols normals). Householder QR keeps equal (or opposite) rows of f equal (opposite) to rounding, so
        coinciding tokens keep getting identical increments (an eigen-root would differ by sqrt(eps))."""
        n, k = f.shape[-2:]
        if not root_pays(n, k, cols):
            return self._mm(f, source.randn((k, cols), f.dtype))  # (..., N, cols)
        root = torch.linalg.qr(f.transpose(-1, -2), mode="r").R.transpose(-1, -2)  # (..., N, N)
        return self._mm(root, source.randn((n, cols), f.dtype))  # (..., N, cols)

    def _conditional(self, y: torch.Tensor, source: RandomSource) -> torch.Tensor:
        """G_l at the tokens y ``(..., N, d)`` drawn stage by stage from its conditional Gaussian laws."""
        d, batch = y.shape[-1], source.batch
        su = run_param(self.su, y, 2, batch=batch, name="su").expand(y.shape[:-1] + (1,))  # (..., N, 1)
        hidden = torch.cat([y / math.sqrt(d), su], dim=-1)  # (..., N, d+1)
        pre = self._gaussian_columns(hidden, self.width, source)  # (..., N, m)
        out = self._gaussian_columns(self.activation.apply_(pre).div_(math.sqrt(self.width)), d, source)  # (..., N, d)
        return out + (source.randn((d,), y.dtype) * run_param(self.sw, y, 1, batch=batch, name="sw")).unsqueeze(-2)
