"""sum_{i, j} |<u_i, u_j>| of unit tokens on S^2 below N^2 work, exactly (THEORY section 5 at large N).

A block of pairs whose cosines all have one sign s sums to s <S_A, S_B>, S_A = sum_{i in A} u_i: exact, the
reordering of a sum. The tokens are sorted into the cells of an octree of [-1, 1]^3 (Morton codes); a cell A has
its centroid c_A and radius rho_A = max_{i in A} |u_i - c_A| (from the tokens, so every u_i lies in the ball).
For u in A and v in B, |<u, v> - <c_A, c_B>| <= |c_A| rho_B + rho_A |c_B| + rho_A rho_B =: m_AB, so the sign of
<c_A, c_B> holds for the whole block when |<c_A, c_B>| > m_AB + ``SIGN_MARGIN``. Pairs of cells (A <= B in
Morton order, weight 2 for A < B) start from a coarse level; a decided pair adds w s <S_A, S_B>, an undecided
one is split into the pairs of its children, down to cells of at most ``LEAF_TOKENS`` tokens (or the finest
level), whose blocks are summed term by term (|<u_i, u_j>| in float64, zero-padded blocks: a zero token adds 0).

Only near-orthogonal blocks are refined: the pairs within ~rho of the great circle orthogonal to a cell, so the
work grows as N^{3/2} for spread tokens (a band of width ~rho around each cell's circle), less for clustered ones.
The value equals the pair sum to rounding (~1e-16 relative per term; tests against the N^2 sum); decided blocks
hold no cosine within ``SIGN_MARGIN`` (1e-12) of 0, far beyond its rounding.
"""

from __future__ import annotations

import numpy as np
import torch

DEPTH = 16  # octree levels below the root (cells of side 2^-15 at the finest)
START_LEVEL = 2  # the first level's pairs are all listed (at most 64 cells: 2,080 pairs)
LEAF_TOKENS = 8  # cells with at most this many tokens are summed term by term
SIGN_MARGIN = 1e-12  # a decided block's cosines are at least this far from 0
WORKING_PER_TOKEN = 352  # bytes per token: the tree (sorted copies, codes, the levels' cells) ...
WORKING_FIXED = 40 << 20  # ... and the pieces of cell pairs in flight (``working_bytes``: measured)
PAIR_CHUNK = 1 << 16  # cell pairs refined at a time, children included (depth first: O(PAIR_CHUNK x DEPTH) memory)


def abs_cosine_sum(u: np.ndarray) -> float:
    """sum_{i, j} |<u_i, u_j>| over all ordered pairs, the diagonal included, of tokens ``(N, 3)`` float64."""
    tree = _Octree(u)
    total = 0.0
    for level_pairs in _split(*_first_pairs(tree)):
        total += _refine(tree, START_LEVEL, *level_pairs)
    return total


def working_bytes(n: int) -> int:
    """Peak bytes ``abs_cosine_sum`` adds for ``n`` tokens (above its input): ``WORKING_PER_TOKEN`` n +
    ``WORKING_FIXED``, fitted between the peaks measured in a fresh process (``benchmarks/memory.py --octree``):
    51 / 54 / 107 MB for spread tokens and 72 / 98 / 167 MB in 64 clusters (which refine deeper: more levels of
    cells) at N = 2^16 / 2^17 / 2^18, against 65 / 88 / 134 MB: within 1.5x of both but the spread peak at
    2^17 (1.63x over).
    """
    return WORKING_PER_TOKEN * n + WORKING_FIXED


def _spread(x: np.ndarray) -> np.ndarray:
    """The bits of ``x`` (< 2^16) at every third position (Morton interleave)."""
    x = x.astype(np.uint64)
    for shift, mask in ((32, 0x1F00000000FFFF), (16, 0x1F0000FF0000FF), (8, 0x100F00F00F00F00F)):
        x = (x | (x << np.uint64(shift))) & np.uint64(mask)
    for shift, mask in ((4, 0x10C30C30C30C30C3), (2, 0x1249249249249249)):
        x = (x | (x << np.uint64(shift))) & np.uint64(mask)
    return x


class _Octree:
    """Tokens sorted by Morton code; per level (built when first reached) the cells' first token, count, sum
    ``s`` ``(C, 3)`` and ``f`` ``(C, 5)`` = centroid, its norm, radius."""

    def __init__(self, u: np.ndarray) -> None:
        side = 1 << DEPTH
        q = np.clip(((u + 1) * (side / 2)).astype(np.int64), 0, side - 1)  # (N, 3)
        code = (_spread(q[:, 0]) << np.uint64(2)) | (_spread(q[:, 1]) << np.uint64(1)) | _spread(q[:, 2])
        order = np.argsort(code, kind="stable")
        self.code, self.u = code[order], np.ascontiguousarray(u[order])  # (N,), (N, 3)
        self.padded = torch.from_numpy(np.vstack([self.u, np.zeros((1, 3))]))  # index N: the zero token
        self.levels: dict[int, dict[str, torch.Tensor]] = {}
        self.keys: dict[int, np.ndarray] = {}

    def level(self, ell: int) -> dict[str, torch.Tensor]:
        if ell not in self.levels:
            key = self.code >> np.uint64(3 * (DEPTH - ell))
            start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])  # (C,)
            count = np.diff(np.r_[start, len(key)])
            s = np.add.reduceat(self.u, start, axis=0)  # (C, 3)
            c = s / count[:, None]
            dist = np.linalg.norm(self.u - np.repeat(c, count, axis=0), axis=1)
            rho = np.maximum.reduceat(dist, start) * (1 + 1e-12)  # rounding of the distances
            f = np.column_stack([c, np.linalg.norm(c, axis=1), rho])
            self.keys[ell] = key[start]
            self.levels[ell] = {
                "start": torch.from_numpy(start),
                "count": torch.from_numpy(count),
                "s": torch.from_numpy(s),
                "f": torch.from_numpy(f),
            }
        return self.levels[ell]

    def children(self, ell: int) -> tuple[torch.Tensor, torch.Tensor]:
        """First child (at level ell + 1) and number of children of each cell of level ``ell``."""
        if "lo" not in self.level(ell):
            self.level(ell + 1)
            up = self.keys[ell + 1] >> np.uint64(3)
            lo = np.searchsorted(up, self.keys[ell])
            self.levels[ell]["lo"] = torch.from_numpy(lo)
            self.levels[ell]["n"] = torch.from_numpy(np.searchsorted(up, self.keys[ell], side="right") - lo)
        return self.levels[ell]["lo"], self.levels[ell]["n"]


def _first_pairs(tree: _Octree) -> tuple[torch.Tensor, torch.Tensor]:
    n = len(tree.level(START_LEVEL)["count"])
    a, b = torch.triu_indices(n, n)
    return a, b


def _split(a: torch.Tensor, b: torch.Tensor):
    """Pieces of at most ``PAIR_CHUNK`` pairs."""
    return zip(a.split(PAIR_CHUNK), b.split(PAIR_CHUNK))


def _refine(tree: _Octree, ell: int, a: torch.Tensor, b: torch.Tensor) -> float:
    """sum over the blocks of the cell pairs (a_k <= b_k) of level ``ell`` of w |<u_i, u_j>|, w = 2 if a_k < b_k."""
    cells = tree.level(ell)
    fa, fb = cells["f"][a], cells["f"][b]  # (P, 5)
    g = (fa[:, :3] * fb[:, :3]).sum(1)
    decided = g.abs() > fa[:, 3] * fb[:, 4] + fa[:, 4] * fb[:, 3] + fa[:, 4] * fb[:, 4] + SIGN_MARGIN
    da, db = a[decided], b[decided]
    w = 2.0 - (da == db).double()
    total = float((w * g[decided].sign() * (cells["s"][da] * cells["s"][db]).sum(1)).sum())
    a, b = a[~decided], b[~decided]
    count = cells["count"]
    small = (count[a] <= LEAF_TOKENS) & (count[b] <= LEAF_TOKENS) | (ell == DEPTH)
    total += _blocks(tree, cells, a[small], b[small])
    a, b = a[~small], b[~small]
    if not len(a):
        return total
    lo, n = tree.children(ell)
    ends = (n[a] * n[b]).cumsum(0)  # children pairs up to each parent pair
    marks = torch.arange(PAIR_CHUNK, max(PAIR_CHUNK, int(ends[-1])), PAIR_CHUNK, dtype=ends.dtype)
    cuts = torch.searchsorted(ends, marks, right=True).tolist()
    for i, j in zip([0, *cuts], [*cuts, len(a)]):  # parents giving at most PAIR_CHUNK + 64 children pairs
        if i < j:
            total += _refine(tree, ell + 1, *_children(lo, n, a[i:j], b[i:j]))
    return total


def _children(lo: torch.Tensor, n: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The pairs of children (next level) of cell pairs (a_k <= b_k), each unordered pair once."""
    na, nb = n[a], n[b]
    reps = na * nb
    pair = torch.repeat_interleave(reps)
    local = torch.arange(len(pair)) - (reps.cumsum(0) - reps).repeat_interleave(reps)
    ca = lo[a][pair] + local.div(nb[pair], rounding_mode="floor")
    cb = lo[b][pair] + local.remainder(nb[pair])
    keep = ca <= cb  # a parent pair (A, A) gives each unordered pair of its children once
    return ca[keep], cb[keep]


def _blocks(tree: _Octree, cells: dict[str, torch.Tensor], a: torch.Tensor, b: torch.Tensor) -> float:
    """sum_k w_k sum_{i in a_k, j in b_k} |<u_i, u_j>| term by term, blocks padded with zero tokens to a power
    of two (a zero token adds 0)."""
    if not len(a):
        return 0.0
    big = torch.maximum(cells["count"][a], cells["count"][b])
    if int(big.max()) > LEAF_TOKENS:  # the finest level: large cells (coincident tokens), one block at a time
        return sum(_block(tree, cells, int(i), int(j)) for i, j in zip(a, b))
    total = 0.0
    width = 1
    while width <= LEAF_TOKENS:
        sel = (big <= width) & (big > width // 2)
        for pa, pb in _split(a[sel], b[sel]):
            ta, tb = tree.padded[_members(cells, pa, width)], tree.padded[_members(cells, pb, width)]  # (P, w, 3)
            c = torch.bmm(ta, tb.transpose(1, 2)).abs_().sum((1, 2))  # (P,)
            total += float(((2.0 - (pa == pb).double()) * c).sum())
        width *= 2
    return total


def _members(cells: dict[str, torch.Tensor], a: torch.Tensor, width: int) -> torch.Tensor:
    """Token indices ``(P, width)`` of cells ``a``, the zero token (index N) past each cell's count."""
    k = torch.arange(width)
    start, count = cells["start"][a][:, None], cells["count"][a][:, None]
    zero = int(cells["start"][-1] + cells["count"][-1])
    return torch.where(k < count, start + k, zero)


def _block(tree: _Octree, cells: dict[str, torch.Tensor], a: int, b: int) -> float:
    """w sum_{i in a, j in b} |<u_i, u_j>| of two cells of any size, rows of 4,096 at a time."""
    sa, sb = int(cells["start"][a]), int(cells["start"][b])
    ua = tree.padded[sa : sa + int(cells["count"][a])]
    ub = tree.padded[sb : sb + int(cells["count"][b])]
    total = sum(float((rows @ ub.T).abs_().sum()) for rows in ua.split(4096))
    return (1.0 if a == b else 2.0) * total


def block_max(u, starts, a, b) -> np.ndarray:
    """max_{i in a_k, j in b_k} <u_i, u_j> for pairs of cells (a_k, b_k) of at most ``LEAF_TOKENS`` tokens each,
    cell c holding ``u[starts[c]:starts[c + 1]]`` of tokens ``(N, 3)``: float64 ``(P,)`` (0 for a block padded
    with zero tokens that holds no positive cosine)."""
    padded = torch.from_numpy(np.vstack([u, np.zeros((1, 3))]))
    start, count = torch.from_numpy(starts[:-1]), torch.from_numpy(np.diff(starts))
    cells = {"start": start, "count": count}
    a, b = torch.from_numpy(a), torch.from_numpy(b)
    out = torch.zeros(len(a), dtype=torch.float64)
    big = torch.maximum(count[a], count[b])
    width = 1
    while width <= LEAF_TOKENS:
        sel = ((big <= width) & (big > width // 2)).nonzero().squeeze(1)
        ta, tb = padded[_members(cells, a[sel], width)], padded[_members(cells, b[sel], width)]
        out[sel] = torch.bmm(ta, tb.transpose(1, 2)).amax((1, 2)) if len(sel) else out[sel]
        width *= 2
    return out.numpy()
