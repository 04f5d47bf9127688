"""Observables of tokens on S^1 and S^2 without the all-pairs cosines (THEORY section 5 at large N).

``sdeformer.observables`` sums over all N^2 pairs (row blocks, ``_pairsums``). On the circle and the sphere
they have shorter exact forms, used from ``SCALABLE_MIN_TOKENS`` tokens on (below, the pair sums; mean |cosine|
on S^2 from ``SPHERE_ABS_MIN_TOKENS``):

- Interaction energy (d = 2, 3): e^{-beta} E_beta = (1 - (1/N^2) sum_{i,j} e^{beta (<u_i, u_j> - 1)}) / 2, the double
  sum from the harmonic sums sum_f w_f (sum_j phi_f(u_j))^2 (``_harmonics``, O(N F) in float64). Truncation moves
  each pair's term by at most ``TOL`` (1e-16), so the mean by at most ``TOL``; rounding adds ~1e-15 (measured,
  tests): |e^{-beta} E - exact| <= ``ENERGY_ATOL`` (1e-13), a bound on the absolute error, so the relative
  error grows as the tokens synchronize (E -> 0).
- Clusters on S^1 (d = 2): the graph 'cos > threshold' links tokens closer than an angle alpha; sorted by angle,
  a component is a run of consecutive tokens, so the count is the number of consecutive (cyclic) pairs that are
  not linked (at least 1). O(N log N). The link test is the pair's cosine in float64 (the breadth-first search
  takes the tokens' dtype: float32 counts may differ where a cosine is within ~1e-7 of the threshold).
- Clusters on S^2 (d = 3, thresholds >= ``GRID_MIN_COS``): where the tokens are spread, the linked pairs
  themselves (a k-d tree) and their components; else cubes small enough that their tokens are all linked, joined
  by union-find where the nearest pair across two near cubes is linked (``sphere_components``).
- Mean |cosine| on S^1: with w = +-u in the upper half plane (angles phi in [0, pi)), |<u_i, u_j>| = <w_i, w_j>
  when |phi_i - phi_j| <= pi / 2, else -<w_i, w_j>; the j of the first kind are one range of the sorted angles, so
  sum_j |<u_i, u_j>| = <w_i, 2 W_in - W_all> from prefix sums of w. O(N log N) in float64.
- Mean |cosine| on S^2 (from ``SPHERE_ABS_MIN_TOKENS``): blocks of pairs of one sign summed as s <S_A, S_B>, only
  the near-orthogonal ones refined to single pairs (``_abscos``, exact, ~N^{3/2}).

Same values as the pair sums to rounding (tests at small N against them; counts equal unless a pair's cosine is
within rounding of the threshold).
"""

from __future__ import annotations

import math

import torch

from ._abscos import LEAF_TOKENS, abs_cosine_sum as abs_cosine_sum_all, block_max, working_bytes
from ._harmonics import harmonic_energy_sum

SCALABLE_MIN_TOKENS = 4096  # from here on (d = 2, 3) the forms above replace the O(N^2) sums (docs/scaling.md)
ENERGY_ATOL = 1e-13  # stated bound on |e^{-beta} E_beta - exact| of the harmonic energy
ENERGY_BETA_MAX = 100.0  # above, the pair sums (F grows as beta: 489 features on S^1, 60,025 on S^2 at 100)


def applies(x: torch.Tensor, dims: tuple[int, ...] = (2, 3)) -> bool:
    """Whether tokens ``(..., N, d)`` take the forms above: d in ``dims``, N >= ``SCALABLE_MIN_TOKENS``, and no
    gradient asked for (the forms return plain numbers; a loss such as ``nn.InteractionEnergy`` keeps the sums)."""
    return x.shape[-1] in dims and x.shape[-2] >= SCALABLE_MIN_TOKENS and not x.requires_grad


def _per_run(u: torch.Tensor, one) -> torch.Tensor:
    """``one(run)`` for each run ``(N, d)`` of unit tokens ``u`` ``(..., N, d)``, as float64 ``(...)``."""
    flat = u.to(torch.float64).reshape(-1, *u.shape[-2:])  # (G, N, d)
    return torch.tensor([float(one(run)) for run in flat], dtype=torch.float64).reshape(u.shape[:-2])


def scaled_energy(u: torch.Tensor, beta: float) -> torch.Tensor:
    """e^{-beta} E_beta of unit tokens ``(..., N, d)``, d = 2, 3, from the harmonic sums: float64 ``(...)``, in
    [0, 1/2] (rounding below 0 clamped)."""
    return _per_run(u, lambda run: max(0.0, 0.5 * (1.0 - float(harmonic_energy_sum(run, beta)))))


def cluster_count(u: torch.Tensor, threshold: float, pairs) -> torch.Tensor:
    """Clusters of unit tokens ``(..., N, d)``: by the forms on S^1, on S^2 from ``GRID_MIN_COS``, else
    ``pairs(u, threshold)`` (the breadth-first search)."""
    if applies(u, (2,)):
        return circle_components(u, threshold)
    return sphere_components(u, threshold) if applies(u, (3,)) and threshold >= GRID_MIN_COS else pairs(u, threshold)


def circle_components(u: torch.Tensor, threshold: float) -> torch.Tensor:
    """Connected components of 'cos(u_i, u_j) > threshold' of unit tokens on S^1 ``(..., N, 2)``: int64 ``(...)``."""
    return _per_run(u, lambda run: _circle_components(run, threshold)).to(torch.int64)


def _circle_components(u: torch.Tensor, threshold: float) -> int:
    v = u[torch.atan2(u[:, 1], u[:, 0]).argsort()]  # (N, 2) in angle order
    linked = (v * v.roll(-1, 0)).sum(-1) > threshold  # (N,): each token with the next, the last with the first
    return max(1, int((~linked).sum()))


SPHERE_ABS_MIN_TOKENS = 1 << 16  # mean |cosine| on S^2 by the octree (``_abscos``) from here: measured faster than
# the row blocks under default, avx2 and avx512, spread and clustered tokens, at 2^16 - 2^18, slower on spread
# tokens at 2^15 (``benchmarks/observables.py --crossover``, docs/scaling.md)


def abs_cosine_applies(x: torch.Tensor) -> bool:
    """Whether sum_{i != j} |<u_i, u_j>| of tokens ``x`` takes a form below (S^1 sorting, S^2 octree)."""
    return applies(x, (2,)) or (applies(x, (3,)) and x.shape[-2] >= SPHERE_ABS_MIN_TOKENS)


def abs_cosine_bytes(tokens: int, dim: int) -> int:
    """Peak working bytes of mean |cosine| of one run of ``tokens`` tokens in ``dim`` dimensions above its float64
    tokens: the octree's (``_abscos.working_bytes``) where it takes the sum, else 0 (row blocks of a fixed size;
    S^1 sorting, O(N) and below the octree's)."""
    return working_bytes(tokens) if dim == 3 and tokens >= max(SPHERE_ABS_MIN_TOKENS, SCALABLE_MIN_TOKENS) else 0


FORMS_BYTES = {2: 8 << 20, 3: 40 << 20}  # the forms' working memory (one state, float64) from SCALABLE_MIN_TOKENS:
# S^1 the energy's feature rows (2 x 2^19 entries at most); S^2 the energy's feature rows (measured 31.5 / 34.5 MB at
# N = 8,192 / 32,768, beta = 1) and the clusters' cubes (53.7 / 44.2 MB, spread tokens), one after the other; 40 MiB
# puts whole runs at N = 8,192 and 32,768 (2 and 16 saved states) within 1.1-1.4x of their peaks (docs/scaling.md)


def forms_bytes(tokens: int, dim: int) -> int:
    """Peak working bytes of one state's observables by the forms above its float64 tokens: the largest of the
    energy's, the clusters' (``FORMS_BYTES``, measured: docs/scaling.md) and mean |cosine|'s (``abs_cosine_bytes``);
    0 below ``SCALABLE_MIN_TOKENS`` or off S^1, S^2 (row blocks of a fixed size)."""
    if dim not in FORMS_BYTES or tokens < SCALABLE_MIN_TOKENS:
        return 0
    return max(FORMS_BYTES[dim], abs_cosine_bytes(tokens, dim))


def abs_cosine_sum(u: torch.Tensor) -> torch.Tensor:
    """sum_{i != j} |<u_i, u_j>| of unit tokens on S^1 / S^2 ``(..., N, d)``: float64 ``(...)``."""
    return _per_run(u, _circle_abs_sum if u.shape[-1] == 2 else _sphere_abs_sum)


def _sphere_abs_sum(u: torch.Tensor) -> float:
    w = u.numpy()
    return abs_cosine_sum_all(w) - float((w * w).sum())


def _circle_abs_sum(u: torch.Tensor) -> float:
    flip = (u[:, 1] < 0) | ((u[:, 1] == 0) & (u[:, 0] < 0))
    w = torch.where(flip[:, None], -u, u)  # (N, 2): the axis of u_i, angle phi in [0, pi)
    phi, order = torch.atan2(w[:, 1], w[:, 0]).sort()
    w = w[order]
    prefix = torch.cat([w.new_zeros(1, 2), w.cumsum(0)])  # (N + 1, 2)
    lo = torch.searchsorted(phi, phi - math.pi / 2)  # first j with phi_j >= phi_i - pi/2
    hi = torch.searchsorted(phi, phi + math.pi / 2, right=True)  # past the last j with phi_j <= phi_i + pi/2
    inside = prefix[hi] - prefix[lo]  # (N, 2): sum of w_j with <w_i, w_j> >= 0
    rows = (w * (2 * inside - prefix[-1])).sum(-1)  # (N,): sum_j |<u_i, u_j>|, the diagonal included
    return float(rows.sum() - (w * w).sum())


GRID_MIN_COS = 0.9  # S^2 clusters by cells for thresholds from here (link radius r <= 0.45); below, the BFS
PAIR_BUDGET = 4  # sum of (tokens per cube)^2 per token up to which the linked pairs themselves are listed
SMALL_CUBE = LEAF_TOKENS  # pairs of cubes of at most this many tokens are tested all at once (padded blocks)
CELL_SHRINK = 1 - 1e-3  # a cell's diagonal is r (1 - 1e-3): its tokens' cosines exceed the threshold by ~2e-3 (1 - t)


def sphere_components(u: torch.Tensor, threshold: float) -> torch.Tensor:
    """Connected components of 'cos(u_i, u_j) > threshold' of unit tokens on S^2 ``(..., N, 3)``, threshold >=
    ``GRID_MIN_COS``: int64 ``(...)``. Cubes of side h = r / sqrt(3) (shrunk by ``CELL_SHRINK``; r^2 = 2 (1 - t),
    |u - v| < r <=> cos > t) hold tokens that are all linked; two cubes at most 2 apart per axis (r < 2 h) are
    joined, by union-find, when the nearest pair across them (a k-d tree) has cosine > threshold; pairs of
    cubes of at most ``SMALL_CUBE`` tokens all at once, the others only while in different components. O(N log N)
    for tokens spread or clustered. Where the cubes hold few tokens (sum of squares <= ``PAIR_BUDGET`` N: the
    linked pairs are O(N)), the linked pairs themselves from a k-d tree and their components (scipy)."""
    return _per_run(u, lambda run: _sphere_components(run.numpy(), threshold)).to(torch.int64)


def _sphere_components(u, threshold: float) -> int:
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import KDTree

    h = math.sqrt(2 * (1 - threshold) / 3) * CELL_SHRINK
    width = int(2 / h) + 8  # cube indices in [2, width - 3]: a neighbour's code never wraps
    keys = np.floor(u / h).astype(np.int64) + width // 2  # (N, 3)
    codes, cell, size = np.unique(
        (keys[:, 0] * width + keys[:, 1]) * width + keys[:, 2], return_inverse=True, return_counts=True
    )
    if (size * size).sum() <= PAIR_BUDGET * len(u):  # spread tokens: few pairs within a cube, and so near ones
        r = math.sqrt(2 * (1 - threshold)) * (1 + 1e-6)  # |u - v| < r for every linked pair, rounding included
        pairs = KDTree(u).query_pairs(r, output_type="ndarray")  # (P, 2), i < j
        pairs = pairs[(u[pairs[:, 0]] * u[pairs[:, 1]]).sum(-1) > threshold]
        edges = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), (len(u),) * 2)
        return int(connected_components(edges, directed=False)[0])
    u = u[np.argsort(cell, kind="stable")]  # tokens of cube c: u[starts[c]:starts[c + 1]]
    starts = np.searchsorted(np.sort(cell), np.arange(len(codes) + 1))
    steps = [(a * width + b) * width + c for a in range(-2, 3) for b in range(-2, 3) for c in range(-2, 3)]
    near = []
    for step in (s for s in steps if s > 0):  # each unordered pair of neighbouring cubes once
        found = np.searchsorted(codes, codes + step).clip(max=len(codes) - 1)
        hit = np.flatnonzero(codes[found] == codes + step)
        near.append(np.stack([hit, found[hit]]))
    pa, pb = np.concatenate(near, axis=1)  # (2, pairs)
    small = (size[pa] <= SMALL_CUBE) & (size[pb] <= SMALL_CUBE)
    linked = block_max(u, starts, pa[small], pb[small]) > threshold  # all small pairs at once
    edges = coo_matrix((np.ones(int(linked.sum())), (pa[small][linked], pb[small][linked])), (len(codes),) * 2)
    label = connected_components(edges, directed=False)[1]
    first = np.zeros(label.max() + 1, dtype=np.int64)
    first[label[::-1]] = np.arange(len(label))[::-1]
    parent = first[label].tolist()  # each cube points at the first cube of its component so far

    def root(c: int) -> int:
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    trees: dict[int, KDTree] = {}
    for a, b in zip(pa[~small].tolist(), pb[~small].tolist()):  # pairs with a large cube: one at a time
        ra, rb = root(a), root(b)
        if ra == rb:
            continue
        if size[a] > size[b]:
            a, b = b, a  # query the smaller cube's tokens in the larger's tree
        ua, ub = u[starts[a] : starts[a + 1]], u[starts[b] : starts[b + 1]]
        if b not in trees:
            trees[b] = KDTree(ub)
        nearest = trees[b].query(ua, k=1)[1]  # the nearest token is the largest cosine
        if bool(((ua * ub[nearest]).sum(-1) > threshold).any()):
            parent[ra] = rb
    return sum(root(c) == c for c in range(len(codes)))
